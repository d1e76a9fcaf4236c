/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Where jobs and protection are carried out.  Two backends sit behind this
 * interface, and the manager and the governor do not know which one runs:
 *
 *   cgroupfs  writes cgroupfs itself (cgroup.c): hosts without systemd,
 *             containers;
 *   systemd   asks systemd over D-Bus (transient slices and scopes,
 *             SetUnitProperties with runtime=true, FreezeUnit): on a systemd
 *             host systemd owns the cgroup tree, and values written behind
 *             its back are reset by the next daemon-reload.
 *
 * Both read cgroupfs directly (through the engine) for status and signals.
 * What differs between them, beyond how they write, is said by their
 * capabilities (struct backend_caps), never by asking which one runs.
 *
 * A backend owns its engine (a cgroupfs engine that manages the tree, or
 * one that only reads it), the worker thread for slow writes, and its
 * protection ledgers (ledger.h: what it changed and the originals, kept in
 * the state directory; on cgroupfs through the engine's I/O).
 *
 * The other modules call the backend_*() functions below, never the
 * operations themselves: an operation a backend does not have is NULL in
 * its table, and its function returns -EOPNOTSUPP (NULL for
 * backend_class_path(); nothing for the cancels).  That is the only way a
 * missing operation shows; caps say what is not an operation.
 * Errors: negative errno.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "cgroup.h"
#include "policy.h"
#include "settings.h"
#include "worker.h"

struct backend;

/* One protected application, as the manager asks for it now. */
struct backend_protect {
        const char *name;
        const char *unit;   /* or: */
        const char *cgroup; /* as the policy writes it: below the mount, with a leading '/' */
        uint64_t min, low;
        bool swap_deny;
};

struct backend_caps {
        /* An ended job's cgroup is released by pagewarden (reclaimed, its slot
         * kept for the next job); without, systemd removes it once empty. */
        bool releases_jobs;
        /* unit: entries can be protected and watched (systemd is asked). */
        bool protects_units;
};

/* The end of a job_place_async: r, and on success the job's cgroup (relative to the mount). */
typedef void (*backend_placed_fn)(void *userdata, int r, const char *path);
struct backend_placing; /* a placement under way, the backend's own */
/* The end of a job_attach_async: r for all of its processes. */
typedef void (*backend_attached_fn)(void *userdata, int r);
struct backend_attaching; /* an attach under way, the backend's own */

struct backend_ops {
        const char *name;
        struct backend_caps caps;
        /* The class's cgroup, relative to the mount. */
        char *(*class_path)(struct backend *b, const char *class);
        int (*class_apply)(struct backend *b, const struct pw_job_class *c);
        /* Returns 1 when the write has started now, 0 when it is queued (the worker then calls done, if not
         * NULL, with userdata on the loop once it is written), or a negative errno. */
        int (*class_set_memory_high)(struct backend *b, const char *class, uint64_t bytes, uint64_t wake_usec,
                                     worker_done_fn done, void *userdata);
        int (*class_set_io)(struct backend *b, const char *class, const struct pw_io_limit *io, size_t n);
        int (*class_freeze)(struct backend *b, const char *class, bool frozen);
        int (*thaw_all)(struct backend *b);
        /* A class that left the policy and has no job any more: its cgroup goes.
         * With units (backend_places_units()), NULL stops the slice above the classes. */
        int (*class_remove)(struct backend *b, const char *class);
        /* A new job of class holding pid, with limits on its own cgroup, without the loop waiting (for PID 1, or
         * for the kernel's cgroup migration lock, an RCU grace period): done(), with the job's cgroup, is called
         * later, from the loop, unless the placement is cancelled first. */
        int (*job_place_async)(struct backend *b, const char *class, const struct pw_job_limits *limits,
                               const struct cgroup_job_label *label, pid_t pid, backend_placed_fn done, void *userdata,
                               struct backend_placing **ret);
        /* Forgets a placement under way: done() is not called. */
        void (*job_place_cancel)(struct backend *b, struct backend_placing *p);
        /* Calls fn, from the loop, once every write asked for so far is in force, and returns 1; returns 0 if
         * that is so already (fn is not called).  NULL where no write waits for another process to answer
         * (cgroupfs). */
        int (*when_answered)(struct backend *b, void (*fn)(void *userdata), void *userdata);
        /* Freezes or thaws a job's own cgroup (path; unit: a unit placed by rule, else NULL). */
        int (*job_freeze)(struct backend *b, const char *path, const char *unit, bool frozen);
        /* Moves more processes into a job's cgroup (path), without the loop waiting: done() is called later,
         * from the loop, unless cancelled. */
        int (*job_attach_async)(struct backend *b, const char *path, const pid_t *pids, size_t n,
                                backend_attached_fn done, void *userdata, struct backend_attaching **ret);
        /* Forgets an attach under way: done() is not called. */
        void (*job_attach_cancel)(struct backend *b, struct backend_attaching *a);
        /* The jobs an earlier instance left. */
        int (*scan)(struct backend *b, struct cgroup_slot **ret, size_t *ret_n);
        /* Makes the protection in force exactly req (n may be 0: withdraw all). */
        int (*protect_set)(struct backend *b, const struct backend_protect *req, size_t n,
                           struct cgroup_protect_result *res);
        /* The cgroup of a protected application (for PSI, status and observation), or -ENOENT; -EINPROGRESS while
         * a unit's is asked (without waiting: the units_watch listeners are told of the unit when it is known). */
        int (*protect_path)(struct backend *b, const struct backend_protect *p, char **ret_path);
        /* Whether a unit is a oneshot front (unit-front.h), answered later from the loop: fn(userdata, unit)
         * only when it is one (NULL where there are no units). */
        int (*unit_front_async)(struct backend *b, const char *unit, void (*fn)(void *userdata, const char *unit),
                                void *userdata);
        void (*free)(struct backend *b);

        /* Units placed by rule: all of these, or none (NULL): backend_places_units(). */
        /* Each unit, loaded or only a unit file, whose name matches one of patterns. */
        int (*units_find)(struct backend *b, const char *const *patterns, size_t n,
                          void (*fn)(void *userdata, const char *unit), void *userdata);
        /* unit carries c's limits from now on (from its first instruction if it has not started); its own
         * values are saved first. */
        int (*unit_apply)(struct backend *b, const char *unit, const struct pw_job_class *c);
        /* unit gets its own values back. */
        int (*unit_restore)(struct backend *b, const char *unit);
        /* fn(unit) whenever a unit is loaded, changes state or a job of a unit ends. */
        int (*units_watch)(struct backend *b, void (*fn)(void *userdata, const char *unit), void *userdata);
        /* The unit's cgroup while it runs, or -ENOENT; -EINPROGRESS while it is asked (without waiting: the
         * units_watch listeners are told of the unit when it is known). */
        int (*unit_path)(struct backend *b, const char *unit, char **ret_path);
        /* The governor's actions on a unit placed by rule, as on a class. */
        int (*unit_set_memory_high)(struct backend *b, const char *unit, uint64_t bytes);
        int (*unit_set_io)(struct backend *b, const char *unit, const struct pw_io_limit *io, size_t n);
        int (*unit_freeze)(struct backend *b, const char *unit, bool frozen);
};

struct backend {
        const struct backend_ops *ops;
        struct cgroup_engine *engine; /* reads, and the cgroupfs backend's writes */
        struct worker *worker;
        sd_event *event;
        char *root; /* the job tree's root (a slice for systemd) */
        /* The pids.max every unit gets unasked (systemd's DefaultTasksMax), which confines nobody in
         * particular; UINT64_MAX where there is none. */
        uint64_t tasks_default;
        void *data; /* the backend's own */
};

struct backend_setup {
        sd_event *event;
        const char *mount;     /* where cgroup2 is mounted */
        const char *root;      /* settings cgroup_root */
        const char *state_dir; /* where originals of protection are kept (NULL: in memory) */
        enum pw_backend want;
};

/*
 * The backend the settings ask for, with its engine and worker: auto is
 * systemd when it is PID 1 and answers on the bus, else cgroupfs.  Logs
 * what it chose and why.
 */
int backend_open(const struct backend_setup *s, struct backend **ret);
struct backend *backend_free(struct backend *b);
/* ops->when_answered, or 0 where the backend has none. */
int backend_when_answered(struct backend *b, void (*fn)(void *userdata), void *userdata);
/* Whether units: rules can place units: the backend has the unit_* and units_* operations. */
static inline bool backend_places_units(const struct backend *b) {
        return b->ops->unit_apply != NULL;
}

/* ---- the operations (struct backend_ops says what each does) ---- */

#define BACKEND_CALL(b, op, ...) ((b)->ops->op ? (b)->ops->op((b), __VA_ARGS__) : -EOPNOTSUPP)

static inline const char *backend_name(const struct backend *b) {
        return b->ops->name;
}
static inline bool backend_releases_jobs(const struct backend *b) {
        return b->ops->caps.releases_jobs;
}
static inline bool backend_protects_units(const struct backend *b) {
        return b->ops->caps.protects_units;
}
static inline char *backend_class_path(struct backend *b, const char *class) {
        return b->ops->class_path ? b->ops->class_path(b, class) : NULL;
}
static inline int backend_class_apply(struct backend *b, const struct pw_job_class *c) {
        return BACKEND_CALL(b, class_apply, c);
}
static inline int backend_class_set_memory_high(struct backend *b, const char *class, uint64_t bytes,
                                                uint64_t wake_usec, worker_done_fn done, void *userdata) {
        return BACKEND_CALL(b, class_set_memory_high, class, bytes, wake_usec, done, userdata);
}
static inline int backend_class_set_io(struct backend *b, const char *class, const struct pw_io_limit *io, size_t n) {
        return BACKEND_CALL(b, class_set_io, class, io, n);
}
static inline int backend_class_freeze(struct backend *b, const char *class, bool frozen) {
        return BACKEND_CALL(b, class_freeze, class, frozen);
}
static inline int backend_thaw_all(struct backend *b) {
        return b->ops->thaw_all ? b->ops->thaw_all(b) : -EOPNOTSUPP;
}
static inline int backend_class_remove(struct backend *b, const char *class) {
        return BACKEND_CALL(b, class_remove, class);
}
static inline int backend_job_place_async(struct backend *b, const char *class, const struct pw_job_limits *limits,
                                          const struct cgroup_job_label *label, pid_t pid, backend_placed_fn done,
                                          void *userdata, struct backend_placing **ret) {
        return BACKEND_CALL(b, job_place_async, class, limits, label, pid, done, userdata, ret);
}
static inline void backend_job_place_cancel(struct backend *b, struct backend_placing *p) {
        if (b->ops->job_place_cancel)
                b->ops->job_place_cancel(b, p);
}
static inline int backend_job_freeze(struct backend *b, const char *path, const char *unit, bool frozen) {
        return BACKEND_CALL(b, job_freeze, path, unit, frozen);
}
static inline int backend_job_attach_async(struct backend *b, const char *path, const pid_t *pids, size_t n,
                                           backend_attached_fn done, void *userdata, struct backend_attaching **ret) {
        return BACKEND_CALL(b, job_attach_async, path, pids, n, done, userdata, ret);
}
static inline void backend_job_attach_cancel(struct backend *b, struct backend_attaching *a) {
        if (b->ops->job_attach_cancel)
                b->ops->job_attach_cancel(b, a);
}
static inline int backend_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        return BACKEND_CALL(b, scan, ret, ret_n);
}
static inline int backend_protect_set(struct backend *b, const struct backend_protect *req, size_t n,
                                      struct cgroup_protect_result *res) {
        return BACKEND_CALL(b, protect_set, req, n, res);
}
static inline int backend_unit_front_async(struct backend *b, const char *unit,
                                           void (*fn)(void *userdata, const char *unit), void *userdata) {
        return BACKEND_CALL(b, unit_front_async, unit, fn, userdata);
}
static inline int backend_units_find(struct backend *b, const char *const *patterns, size_t n,
                                     void (*fn)(void *userdata, const char *unit), void *userdata) {
        return BACKEND_CALL(b, units_find, patterns, n, fn, userdata);
}
static inline int backend_unit_apply(struct backend *b, const char *unit, const struct pw_job_class *c) {
        return BACKEND_CALL(b, unit_apply, unit, c);
}
static inline int backend_unit_restore(struct backend *b, const char *unit) {
        return BACKEND_CALL(b, unit_restore, unit);
}
static inline int backend_units_watch(struct backend *b, void (*fn)(void *userdata, const char *unit), void *userdata) {
        return BACKEND_CALL(b, units_watch, fn, userdata);
}
static inline int backend_unit_path(struct backend *b, const char *unit, char **ret_path) {
        return BACKEND_CALL(b, unit_path, unit, ret_path);
}
static inline int backend_unit_set_memory_high(struct backend *b, const char *unit, uint64_t bytes) {
        return BACKEND_CALL(b, unit_set_memory_high, unit, bytes);
}
static inline int backend_unit_set_io(struct backend *b, const char *unit, const struct pw_io_limit *io, size_t n) {
        return BACKEND_CALL(b, unit_set_io, unit, io, n);
}
static inline int backend_unit_freeze(struct backend *b, const char *unit, bool frozen) {
        return BACKEND_CALL(b, unit_freeze, unit, frozen);
}
/* The policy's protected entry as the backend takes it (its cgroup as the policy writes it, with the leading
 * '/': struct backend_protect); min and low 0. */
struct backend_protect backend_protect_of(const struct pw_protect *pr);
/* ops->protect_path for the policy's entry pr.  What a placement must leave alone is auth_protected_copy()'s,
 * which needs no cgroup. */
int backend_protect_path(struct backend *b, const struct pw_protect *pr, char **ret_path);

/* For backend_open: each takes over engine and worker on success. */
/* Each owns its protection ledger, kept in state_dir (NULL: in memory only). */
int backend_cgroupfs_new(struct cgroup_engine *engine, struct worker *worker, sd_event *event, const char *state_dir,
                         struct backend **ret);
/* -ENOTCONN when systemd is not PID 1 or its bus does not answer. */
int backend_systemd_new(struct cgroup_engine *engine, struct worker *worker, sd_event *event, const char *root,
                        const char *state_dir, struct backend **ret);
bool backend_systemd_available(void);
static inline void backend_freep(struct backend **b) {
        backend_free(*b);
}
