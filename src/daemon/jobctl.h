/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What an operator does to a running job (pagewardenctl stop, kill, freeze,
 * thaw): signals to its processes, sent through pidfds so that a pid that
 * was reused since cgroup.procs was read is never signalled, and the
 * freezing of its own cgroup through the backend.
 */

#include <stdbool.h>

#include "cgroup.h"

/* How long a stopped job's processes have between SIGTERM and SIGKILL. */
#define JOBCTL_STOP_KILL_USEC (10 * 1000000ULL)

/*
 * Sends sig to every process in the cgroup path (relative to the mount):
 * each pid of cgroup.procs gets a pidfd, is checked to be in that cgroup
 * still (procdir/PID/cgroup), then signalled through the pidfd.  Processes
 * that went meanwhile are skipped.  *ret_n: how many were signalled.
 */
int jobctl_signal(struct cgroup_engine *e, const char *procdir, const char *path, int sig, unsigned *ret_n);

/* Whether the job's own cgroup is frozen (its cgroup.freeze is 1); false if unknown. */
bool jobctl_frozen(struct cgroup_engine *e, const char *path);

/* "SIGTERM", or "signal 40" in buf. */
const char *jobctl_signal_name(int sig, char *buf, size_t len);
