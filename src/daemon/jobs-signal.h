/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What an operator does to a running job (pagewardenctl stop, kill, freeze,
 * thaw): signals to its processes, sent through pidfds so that a pid that
 * was reused since cgroup.procs was read is never signalled, and whether
 * its own cgroup is frozen (requests.c freezes it through the backend).
 * Its functions are jobctl_* (job control, as a shell's).
 *
 * Errors: negative errno; a process that is gone meanwhile is no error.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"

/* How long a stopped job's processes have between SIGTERM and SIGKILL. */
#define JOBCTL_STOP_KILL_USEC (10 * 1000000ULL)

/*
 * Sends sig to every process in the cgroup path (relative to the mount)
 * that belongs to uid (all its user IDs uid; root: every process): each
 * pid of cgroup.procs gets a pidfd, is checked to be in that cgroup still
 * (procdir/PID/cgroup), then signalled through the pidfd.  Processes that
 * went meanwhile are skipped.  *ret_n: how many were signalled;
 * *ret_foreign: how many were not, being someone else's (a setuid
 * program, root's helper) whom uid could not signal itself.
 */
int jobctl_signal(struct cgroup_engine *e, const char *procdir, const char *path, int sig, uid_t uid, unsigned *ret_n,
                  unsigned *ret_foreign);

/* A process in path that does not belong to uid (see jobctl_signal), and its uid in *ret_uid; 0 if none
 * (always for root), or a negative errno. */
pid_t jobctl_foreign(struct cgroup_engine *e, const char *procdir, const char *path, uid_t uid, uid_t *ret_uid);

/* Whether the job's own cgroup is frozen (its cgroup.freeze is 1); false if unknown. */
bool jobctl_frozen(struct cgroup_engine *e, const char *path);

/* "SIGTERM", or "signal 40" in buf. */
const char *jobctl_signal_name(int sig, char *buf, size_t len);
