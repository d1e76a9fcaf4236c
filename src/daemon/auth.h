/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Who may do what over the control socket (decided from SO_PEERCRED):
 * root may do everything but move PID 1, kernel threads, pagewarden itself
 * or a protected application's processes; anyone may read status; a user
 * may place only their own processes, only into classes that list them in
 * users:, and only from where the kernel's own rules would let them: the
 * daemon writes cgroup.procs as root, so it must not move a user's process
 * out of a cgroup root put it in (a service's sandbox, a pids.max).
 * Pure decisions; the daemon supplies the facts.
 *
 * Errors: none; a refusal is false with a sentence for the caller in why.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy.h"
#include "proc.h"

/* The class lists this user (by name or numeric id); root is always allowed. */
bool auth_class_allows(const struct pw_job_class *c, uid_t uid, const char *user_name);

/* The process belongs to uid: every one of its ids is uid (no setuid program of someone else). */
bool auth_owns_process(const struct proc_ids *ids, uid_t uid);

/*
 * What no placement takes a process from: the protected applications, copied
 * from a policy (a move outlives a turn of the loop, the policy a reload).
 * `cgroup:` entries by their cgroup (relative to the mount); `unit:` entries
 * by the unit's name: systemd names a unit's cgroup after the unit, so a
 * process whose cgroup has a component of that name is the unit's, wherever
 * the unit runs and whether or not PID 1 has said where yet (nothing waits
 * for PID 1, nothing is let through meanwhile).
 */
struct auth_protected {
        char **cgroups;
        size_t n_cgroups;
        char **units;
        size_t n_units;
};

int auth_protected_copy(const struct pw_policy *p, struct auth_protected *ret);
void auth_protected_done(struct auth_protected *x);
/* Whether a process in cgroup belongs to a protected application: its entry's cgroup ("/" and the path) or unit
 * in name. */
bool auth_protected_holds(const struct auth_protected *x, const char *cgroup, char *name, size_t len);

/* The caller of a run or move, and what the daemon knows around it. */
struct auth_caller {
        uid_t uid;
        pid_t pid;
        pid_t self;                  /* pagewardend's own pid */
        bool child_only;             /* run: the process must be the caller's child */
        const char *const *own_jobs; /* the cgroups of the caller's jobs (relative to the mount) */
        size_t n_own_jobs;
        const struct auth_protected *protected; /* or NULL: none */
};

/*
 * Whether pid (with the facts ids read from /proc) may be placed for the
 * caller.  If not, why holds a sentence that completes "process PID ...".
 *
 * For a caller other than root, the process must be in the caller's own
 * user slice (systemd: user.slice/user-UID.slice and below, its sessions
 * and user manager), in one of the caller's own jobs, or in the root
 * cgroup (which imposes nothing that could be escaped).
 */
bool auth_may_place(const struct auth_caller *c, pid_t pid, const struct proc_ids *ids, char *why, size_t len);

/* path is top or below it (paths relative to the mount; "" is the root). */
bool auth_path_under(const char *path, const char *top);
