/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <assert.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "procevents.h"
#include "util.h"

/* Room for bursts of forks and execs (the kernel never blocks on us: it drops, and says ENOBUFS). */
#define RCVBUF_BYTES (4 * 1024 * 1024)

struct procevents {
        int fd;
        sd_event_source *source, *batch;
        procevents_exec_fn exec;
        procevents_lost_fn lost;
        void *userdata;
};

/* PROC_CN_MCAST_LISTEN or _IGNORE, to the connector. */
static int send_op(int fd, enum proc_cn_mcast_op op) {
        struct {
                struct nlmsghdr nl;
                struct cn_msg cn;
                enum proc_cn_mcast_op op;
        } __attribute__((packed)) msg = {
                .nl = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_DONE, .nlmsg_pid = (__u32) getpid() },
                .cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC }, .len = sizeof(enum proc_cn_mcast_op) },
                .op = op,
        };

        return send(fd, &msg, sizeof(msg), 0) < 0 ? -errno : 0;
}

void procevents_dispatch(const void *buf, size_t len, procevents_exec_fn exec, void *userdata) {
        ssize_t left = (ssize_t) len; /* signed: NLMSG_NEXT may step past the end, and NLMSG_OK then stops */

        for (const struct nlmsghdr *nl = buf; NLMSG_OK(nl, left); nl = NLMSG_NEXT(nl, left)) {
                const struct cn_msg *cn = NLMSG_DATA(nl);
                struct proc_event ev;

                if (nl->nlmsg_type == NLMSG_NOOP || nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(ev)))
                        continue;
                if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC)
                        continue;
                /* The event follows a 20-byte header: 4-aligned, and it holds 64-bit fields. Copied, not cast. */
                memcpy(&ev, cn->data, sizeof(ev));
                if (ev.what == PROC_EVENT_EXEC)
                        exec(userdata, ev.event_data.exec.process_pid, ev.event_data.exec.process_tgid);
        }
}

/* The event's type: after the netlink header and the connector's (cn_msg, 20 bytes). */
#define WHAT_OFFSET (NLMSG_HDRLEN + offsetof(struct cn_msg, data) + offsetof(struct proc_event, what))

int procevents_filter(int fd) {
        /* Classic BPF loads words in network order: the host's number is compared as htonl() makes it.  A
         * message too short to hold the type is dropped (a load past the end returns 0). */
        struct sock_filter code[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, WHAT_OFFSET),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_NONE), 1, 0), /* the answer to LISTEN */
                BPF_STMT(BPF_RET | BPF_K, 0),
                BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(code), .filter = code };

        return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ? -errno : 0;
}

/* Datagrams read by one recvmmsg(2). */
#define BATCH 64

/* At most this many system calls of BATCH datagrams a dispatch: a flood of execs must leave the loop time
 * for the rest (the socket, the governor); what is left is read after the batch pause. */
#define DRAIN_ROUNDS 16

/* Reads what is queued, BATCH datagrams a system call; returns -EAGAIN once drained, 0 when it stopped at
 * DRAIN_ROUNDS with more to read. */
static int drain(struct procevents *p) {
        static char bufs[BATCH][1024] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct mmsghdr msgs[BATCH];
        struct iovec iov[BATCH];
        struct sockaddr_nl from[BATCH];

        for (int round = 0; round < DRAIN_ROUNDS; round++) {
                int n;

                for (int i = 0; i < BATCH; i++) {
                        iov[i] = (struct iovec){ .iov_base = bufs[i], .iov_len = sizeof(bufs[i]) };
                        msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &from[i],
                                                                 .msg_namelen = sizeof(from[i]),
                                                                 .msg_iov = &iov[i],
                                                                 .msg_iovlen = 1 } };
                }
                n = recvmmsg(p->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ENOBUFS) {
                                /* Messages were dropped: what happened meanwhile is unknown. */
                                p->lost(p->userdata);
                                continue;
                        }
                        return -errno;
                }
                for (int i = 0; i < n; i++)
                        if (from[i].nl_pid == 0) /* only the kernel speaks here */
                                procevents_dispatch(bufs[i], msgs[i].msg_len, p->exec, p->userdata);
        }
        return 0;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* The pause is over: read what came meanwhile, and wait for more. */
static int on_batch(sd_event_source *s, uint64_t usec, void *userdata) {
        struct procevents *p = userdata;

        (void) drain(p);
        return sd_event_source_set_enabled(p->source, SD_EVENT_ON);
}

/*
 * A machine that starts processes by the thousand would wake the daemon for
 * each: after a batch is read, the socket is left alone for
 * PROCEVENTS_BATCH_USEC, and what came meanwhile is read in one go.
 */
static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct procevents *p = userdata;
        int r = drain(p);

        if (r < 0 && r != -EAGAIN)
                log_warning_errno(r, "Proc connector: %m");
        (void) sd_event_source_set_enabled(p->source, SD_EVENT_OFF);
        (void) sd_event_source_set_time_relative(p->batch, PROCEVENTS_BATCH_USEC);
        return sd_event_source_set_enabled(p->batch, SD_EVENT_ONESHOT);
}

int procevents_new(sd_event *event, procevents_exec_fn exec, procevents_lost_fn lost, void *userdata,
                   struct procevents **ret) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC, .nl_pid = 0 };
        _cleanup_(procevents_freep) struct procevents *p = NULL;
        int size = RCVBUF_BYTES, r;

        assert(event && exec && lost && ret);
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (struct procevents){ .fd = -1, .exec = exec, .lost = lost, .userdata = userdata };
        p->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
        if (p->fd < 0)
                return -errno;
        /* FORCE needs CAP_NET_ADMIN, which the connector needs anyway; the plain one is capped by rmem_max. */
        if (setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        /* Before bind: no fork, exit, rename or uid change ever reaches the queue, so a user's loop of them
         * neither costs the daemon a wakeup nor overflows the buffer into a rescan of /proc. */
        r = procevents_filter(p->fd);
        if (r < 0)
                log_warning_errno(r, "Proc connector: cannot filter events in the kernel, reading them all: %m");
        if (bind(p->fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        r = send_op(p->fd, PROC_CN_MCAST_LISTEN);
        if (r < 0)
                return r;
        r = sd_event_add_io(event, &p->source, p->fd, EPOLLIN, on_readable, p);
        if (r >= 0)
                r = sd_event_add_time_relative(event, &p->batch, CLOCK_MONOTONIC, PROCEVENTS_BATCH_USEC, 0, on_batch,
                                               p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->batch, SD_EVENT_OFF);
        (void) sd_event_source_set_description(p->source, "proc-connector");
        (void) sd_event_source_set_description(p->batch, "proc-connector-batch");
        *ret = TAKE_PTR(p);
        return 0;
}

struct procevents *procevents_free(struct procevents *p) {
        if (!p)
                return NULL;
        if (p->fd >= 0)
                (void) send_op(p->fd, PROC_CN_MCAST_IGNORE);
        sd_event_source_disable_unref(p->source);
        sd_event_source_disable_unref(p->batch);
        closep(&p->fd);
        free(p);
        return NULL;
}
