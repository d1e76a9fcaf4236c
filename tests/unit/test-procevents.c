/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "procevents.h"

struct seen {
        int n;
        pid_t pid[8], tgid[8];
};

static void on_exec(void *userdata, pid_t pid, pid_t tgid) {
        struct seen *s = userdata;

        ck_assert_int_lt(s->n, 8);
        s->pid[s->n] = pid;
        s->tgid[s->n] = tgid;
        s->n++;
}

/*
 * Appends one connector message at OFF of BUF laid out as the kernel sends
 * it: nlmsghdr, cn_msg (20 bytes), then the event at a 4-aligned offset.
 * Returns the offset of the next message.
 */
static size_t put(char *buf, size_t off, __u32 idx, __u32 what, pid_t pid, pid_t tgid, size_t event_len) {
        struct nlmsghdr nl = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + event_len), .nlmsg_type = NLMSG_DONE };
        struct cn_msg cn = { .id = { .idx = idx, .val = CN_VAL_PROC }, .len = (__u16) event_len };
        struct proc_event ev = { .what = what, .timestamp_ns = 42 };

        ev.event_data.exec.process_pid = pid;
        ev.event_data.exec.process_tgid = tgid;
        memcpy(buf + off, &nl, sizeof(nl));
        memcpy(buf + off + NLMSG_HDRLEN, &cn, sizeof(cn));
        memcpy(buf + off + NLMSG_HDRLEN + sizeof(cn), &ev, event_len < sizeof(ev) ? event_len : sizeof(ev));
        return off + NLMSG_ALIGN(nl.nlmsg_len);
}

/* Execs are reported; forks, other connectors and short messages are not (and nothing is read unaligned: UBSan). */
START_TEST(test_procevents_dispatch) {
        static char buf[1024] __attribute__((aligned(8))); /* so that each event is 4 mod 8, as the kernel sends it */
        struct seen s = { 0 };
        size_t len = 0;

        len = put(buf, len, CN_IDX_PROC, PROC_EVENT_EXEC, 101, 100, sizeof(struct proc_event));
        len = put(buf, len, CN_IDX_PROC, PROC_EVENT_FORK, 102, 102, sizeof(struct proc_event));
        len = put(buf, len, CN_IDX_PROC + 1, PROC_EVENT_EXEC, 103, 103, sizeof(struct proc_event));
        len = put(buf, len, CN_IDX_PROC, PROC_EVENT_EXEC, 104, 104, 8); /* too short to hold an event */
        len = put(buf, len, CN_IDX_PROC, PROC_EVENT_EXEC, 105, 105, sizeof(struct proc_event));
        procevents_dispatch(buf, len, on_exec, &s);
        ck_assert_int_eq(s.n, 2);
        ck_assert_int_eq(s.pid[0], 101);
        ck_assert_int_eq(s.tgid[0], 100);
        ck_assert_int_eq(s.pid[1], 105);

        /* A datagram cut short: the partial last message is not read. */
        s.n = 0;
        procevents_dispatch(buf, len - 1, on_exec, &s);
        ck_assert_int_eq(s.n, 1);
        s.n = 0;
        procevents_dispatch(buf, 3, on_exec, &s);
        ck_assert_int_eq(s.n, 0);
}
END_TEST

/*
 * The socket filter, on a datagram socket pair (it filters any socket as the
 * connector's): of an exec, a fork, a rename, an exit, a short message and
 * the connector's answer (PROC_EVENT_NONE), only the exec and the answer
 * are queued.
 */
START_TEST(test_procevents_filter) {
        static char buf[1024] __attribute__((aligned(8)));
        const __u32 sent[] = { PROC_EVENT_FORK, PROC_EVENT_EXEC, PROC_EVENT_COMM, PROC_EVENT_EXIT, PROC_EVENT_NONE };
        int sv[2];
        struct seen s = { 0 };
        size_t len;
        ssize_t n;
        unsigned got = 0;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(procevents_filter(sv[1]), 0);
        for (size_t i = 0; i < ELEMENTSOF(sent); i++) {
                len = put(buf, 0, CN_IDX_PROC, sent[i], 200 + (pid_t) i, 200 + (pid_t) i, sizeof(struct proc_event));
                ck_assert_int_eq(send(sv[0], buf, len, 0), (ssize_t) len);
        }
        len = put(buf, 0, CN_IDX_PROC, PROC_EVENT_EXEC, 300, 300, 0); /* no room for the type */
        ck_assert_int_eq(send(sv[0], buf, len - 0, 0), (ssize_t) len);
        while ((n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
                procevents_dispatch(buf, (size_t) n, on_exec, &s);
                got++;
        }
        ck_assert_uint_eq(got, 2); /* the exec and the answer */
        ck_assert_int_eq(s.n, 1);
        ck_assert_int_eq(s.pid[0], 201);
        close(sv[0]);
        close(sv[1]);
}
END_TEST

Suite *procevents_suite(void) {
        Suite *s = suite_create("procevents");
        TCase *tc = tcase_create("dispatch");

        tcase_add_test(tc, test_procevents_dispatch);
        tcase_add_test(tc, test_procevents_filter);
        suite_add_tcase(s, tc);
        return s;
}
