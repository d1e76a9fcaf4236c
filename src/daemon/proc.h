/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Facts about processes from /proc, for authorisation, `move --tree` and the
 * daemon's own usage in status.
 * The /proc root is a parameter so that tests can use a fake tree.
 *
 * Errors: negative errno (-ESRCH: no such process); no logging.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The real /proc: where the daemon reads unless a test passes a fake tree. */
#define PROC_ROOT "/proc"

struct proc_ids {
        uid_t uid[4]; /* real, effective, saved, file system */
        pid_t ppid;
        pid_t tgid;         /* its process: pid itself unless pid names a thread */
        bool kernel_thread; /* PF_KTHREAD */
        char *cgroup;       /* its cgroup v2 path without the leading '/' ("" for the root) */
};

/* -ESRCH when the process does not exist (any more).  Free with proc_ids_done(). */
int proc_ids(const char *procdir, pid_t pid, struct proc_ids *ret);
void proc_ids_done(struct proc_ids *ids);

/* What /proc/PID/exe names (a program replaced since it started: its path, without " (deleted)"). */
int proc_exe(const char *procdir, pid_t pid, char *buf, size_t len);
/* The arguments, NUL-separated as the kernel keeps them, up to len - 1 bytes; *ret_n what was read. */
int proc_args(const char *procdir, pid_t pid, char *buf, size_t len, size_t *ret_n);
/* read_bytes and write_bytes of /proc/PID/io: what it made the storage read and write since it started
 * (root may read any process's); -ESRCH when it is gone. */
int proc_io(const char *procdir, pid_t pid, uint64_t *ret_read, uint64_t *ret_written);

/* The process's resident memory (/proc/PID/statm), in bytes; -ESRCH when it is gone. */
int proc_rss(const char *procdir, pid_t pid, uint64_t *ret_bytes);

/*
 * A pidfd for pid (pidfd_open, Linux 5.3): it keeps naming the same process
 * even if the pid is reused, so that a check made on pid and a write of pid
 * can be proven to be about one process.  proc_pidfd_alive() tells whether
 * that process still exists.
 */
int proc_pidfd_open(pid_t pid);
bool proc_pidfd_alive(int pidfd);

/* When pid started (/proc/PID/stat's starttime), in clock ticks since boot; and now in the same unit. */
int proc_start_ticks(const char *procdir, pid_t pid, uint64_t *ret);
uint64_t proc_now_ticks(void);

/*
 * After pid was written into a cgroup (cgroup.procs, or systemd's PIDs) as
 * the process pidfd holds, no later than before_ticks: pids are written as
 * numbers, and the process may have ended and left its pid to another
 * between its check and the write.  0 when the write was about it (it
 * still lives, so its pid is its own) or no process that started before
 * the write holds pid now; 1 when one does, with its ids in *ret (free
 * with proc_ids_done()): the write may have moved it instead.
 */
int proc_written_other(const char *procdir, int pidfd, pid_t pid, uint64_t before_ticks, struct proc_ids *ret);

/*
 * The children of pid, from every thread's /proc/PID/task/TID/children
 * (a process whose thread forked is its child too); -ESRCH when pid is gone.
 */
int proc_children(const char *procdir, pid_t pid, pid_t **ret, size_t *ret_n);
