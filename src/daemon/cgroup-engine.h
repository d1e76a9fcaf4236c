/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the cgroup engine (cgroup.c, cgroup-slots.c, cgroup-protect.c): its state,
 * and what its files share.  The rest of the daemon sees cgroup.h.
 *
 * Errors: negative errno; NULL for out of memory where a path is made.
 * No logging (the engine's callers log).
 */

#include <pthread.h>

#include "cgroup.h"
#include "ledger.h"

/* A class's slots by number, as the engine last saw them (cgroup-slots.c). */
enum slot_state { SLOT_NONE, SLOT_BUSY, SLOT_IDLE };
struct slot_index {
        char *cpath;          /* the class's cgroup */
        unsigned char *state; /* enum slot_state, by slot number */
        size_t n, allocated;
};

struct cgroup_engine {
        char *mount, *root;
        struct cgroup_features features;
        unsigned idle_slots;
        /* The classes' slots (acquired on the loop, released on the worker thread: under slots_lock). */
        pthread_mutex_t slots_lock;
        struct slot_index *slots;
        size_t n_slots, allocated_slots;
};

/* mount/path/file (path "" is the mount, file NULL the directory); NULL when out of memory. */
char *cgroup_abs_path(const struct cgroup_engine *e, const char *path, const char *file);
/* Writes a limit ("max" for UNITS_MAX). */
int engine_write_u64(struct cgroup_engine *e, const char *path, const char *file, uint64_t v);
/* Creates path (and missing parents) with the controllers, through libcgroup; 0 if it exists with them. */
int engine_mkdir(struct cgroup_engine *e, const char *path, const char *const *controllers, size_t n);
/* Removes an empty cgroup. */
int engine_rmdir(const char *path);
/* cgroup.events' populated. */
int engine_populated(struct cgroup_engine *e, const char *path, bool *ret);
/* root/class, or NULL for a name that is not a policy name (or out of memory). */
char *engine_class_path(const struct cgroup_engine *e, const char *class);
