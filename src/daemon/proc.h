/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Facts about processes from /proc, for authorisation and `move --tree`.
 * The /proc root is a parameter so that tests can use a fake tree.
 */

#include <stddef.h>
#include <sys/types.h>

struct proc_ids {
        uid_t uid[4]; /* real, effective, saved, file system */
        pid_t ppid;
};

/* -ESRCH when the process does not exist (any more). */
int proc_ids(const char *procdir, pid_t pid, struct proc_ids *ret);

/*
 * pid and its descendants (from /proc/PID/task/TID/children), pid first,
 * at most max entries (-E2BIG beyond).  Processes that exit meanwhile are
 * skipped.
 */
int proc_tree(const char *procdir, pid_t pid, pid_t **ret, size_t *ret_n, size_t max);
