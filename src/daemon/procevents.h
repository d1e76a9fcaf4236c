/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Exec events from the kernel's proc connector (netlink, CONFIG_PROC_EVENTS):
 * every process of the machine that executes a program, as it happens.  It
 * needs CAP_NET_ADMIN in the initial network namespace.  The connector
 * sends every fork, exec, exit, rename and id change (6.1 has no filter of
 * its own): a socket filter (classic BPF) lets only execs into the queue,
 * so that the others cost the daemon nothing and cannot overflow it.
 *
 * Events can be lost (the socket's buffer overflows: ENOBUFS): the lost
 * handler is then called, so that the caller rescans /proc.
 *
 * The socket is read in batches (recvmmsg), and after each batch it is left
 * alone for PROCEVENTS_BATCH_USEC: a machine that runs thousands of
 * programs a second wakes the daemon 100 times a second at most, and a
 * program named by a cmdline: rule is placed that much later at most.
 *
 * Errors: negative errno.
 */

#include <sys/types.h>
#include <systemd/sd-event.h>

#define PROCEVENTS_BATCH_USEC 10000

struct procevents;

typedef void (*procevents_exec_fn)(void *userdata, pid_t pid, pid_t tgid);
typedef void (*procevents_lost_fn)(void *userdata);

int procevents_new(sd_event *event, procevents_exec_fn exec, procevents_lost_fn lost, void *userdata,
                   struct procevents **ret);
struct procevents *procevents_free(struct procevents *p);

/* Attaches to fd the filter that keeps exec events only (and the connector's answers). */
int procevents_filter(int fd);
/* Calls exec for each exec event in a datagram of LEN bytes from the connector; skips the rest. */
void procevents_dispatch(const void *buf, size_t len, procevents_exec_fn exec, void *userdata);
static inline void procevents_freep(struct procevents **p) {
        procevents_free(*p);
}
