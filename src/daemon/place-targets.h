/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The processes a run or move request names, on their way into a job:
 * each is checked (auth.h) before anything is moved, and held by a pidfd
 * from its check to its write, so that a pid reused meanwhile is never
 * placed.  With --tree the descendants are found in one walk over every
 * named process (a process named twice, or reachable twice, counts once),
 * at most TARGETS_MAX in all.  Its functions are targets_*.
 *
 * Errors: negative errno.  A refusal is -EPERM (or -ESRCH: no such
 * process; -E2BIG: too many) with a sentence for the caller in why
 * ("process 42 is a kernel thread").
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "auth.h"
#include "protocol.h"

#define TARGETS_MAX PROTOCOL_MAX_PIDS

struct target {
        pid_t pid;
        int pidfd;
        char *cgroup; /* where it was when checked */
};

struct place_targets {
        const char *procdir;
        const struct auth_caller *caller;
        struct target *list;
        size_t n, allocated;
};

void place_targets_init(struct place_targets *t, const char *procdir, const struct auth_caller *caller);
void place_targets_done(struct place_targets *t);

/* Checks pid and holds it (once: a pid already held is skipped). */
int place_targets_add(struct place_targets *t, pid_t pid, char *why, size_t len);
/* Adds the descendants of every process held, checked like the rest. */
int place_targets_add_descendants(struct place_targets *t, char *why, size_t len);
/* The same in steps: the children of at most max processes from *cursor on; 1 when the walk is done. */
int place_targets_walk(struct place_targets *t, size_t *cursor, size_t max, char *why, size_t len);

/* The pids held from index first on whose process still lives and is
 * outside cgroup (NULL: anywhere); the caller frees *ret. */
int place_targets_pids(const struct place_targets *t, size_t first, const char *cgroup, pid_t **ret, size_t *ret_n);
/* The pidfd that holds pid (borrowed), or -1 when pid is not held. */
int place_targets_pidfd(const struct place_targets *t, pid_t pid);
/* Whether the process held as pid still lives (its pid was not reused). */
bool place_targets_alive(const struct place_targets *t, pid_t pid);
