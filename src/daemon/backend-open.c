/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Choosing the backend (backend_open() in backend.h): systemd or cgroupfs,
 * each on an engine and a worker opened here.  Above both backends, as
 * backend.c, what they share, is below them.
 */
#include <assert.h>

#include "backend.h"
#include "log.h"

/* An engine (managing the tree itself, or only reading it) and its worker. */
static int engine_open(const struct backend_setup *s, bool manage, struct cgroup_engine **ret_engine,
                       struct worker **ret_worker) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        int r;

        r = cgroup_engine_new(s->mount, s->root, manage, &e);
        if (r < 0)
                return log_error_errno(r, "Cannot set up /%s below %s: %m", s->root, s->mount);
        r = worker_new(s->event, e, ret_worker);
        if (r < 0)
                return log_error_errno(r, "Cannot start the worker thread: %m");
        *ret_engine = TAKE_PTR(e);
        return 0;
}

/* The operations of units placed by rule come all together or not at all (backend_places_units() asks one). */
static bool units_ops_whole(const struct backend_ops *o) {
        bool any = o->units_find || o->unit_apply || o->unit_restore || o->units_watch || o->unit_path ||
                   o->unit_set_memory_high || o->unit_set_io || o->unit_freeze;
        bool all = o->units_find && o->unit_apply && o->unit_restore && o->units_watch && o->unit_path &&
                   o->unit_set_memory_high && o->unit_set_io && o->unit_freeze;

        return any == all;
}

static void log_choice(const struct backend *b, const char *mount) {
        assert(units_ops_whole(b->ops));
        const struct cgroup_features *f = cgroup_engine_features(b->engine);

        if (b->ops->caps.releases_jobs)
                log_info(
                        "cgroup2 at %s, jobs below /%s (%s backend); memory.reclaim %s, swap accounting %s, "
                        "freezer %s, cpu %s",
                        mount, b->root, b->ops->name, f->memory_reclaim ? "yes" : "no", f->swap ? "yes" : "no",
                        f->freeze ? "yes" : "no", f->cpu ? "yes" : "no");
        else
                log_info("cgroup2 at %s, jobs in %s (%s backend: transient slices and scopes)", mount, b->root,
                         b->ops->name);
}

int backend_open(const struct backend_setup *s, struct backend **ret) {
        struct cgroup_engine *engine = NULL;
        struct worker *worker = NULL;
        bool systemd;
        int r;

        assert(s && s->event && s->mount && s->root && ret);
        /* systemd owns the tree on a systemd host: ask it, unless told otherwise. */
        systemd = s->want == PW_BACKEND_SYSTEMD || (s->want == PW_BACKEND_AUTO && backend_systemd_available());
        if (systemd) {
                r = engine_open(s, false, &engine, &worker);
                if (r < 0)
                        return r;
                r = backend_systemd_new(engine, worker, s->event, s->root, s->state_dir, ret);
                if (r >= 0) {
                        log_choice(*ret, s->mount);
                        return 0;
                }
                worker = worker_free(worker);
                engine = cgroup_engine_free(engine);
                if (s->want == PW_BACKEND_SYSTEMD)
                        return log_error_errno(r, "backend: systemd, but systemd cannot be used: %m");
                /* auto: a systemd that does not answer is no systemd; the engine manages the tree. */
                log_warning_errno(r, "systemd is PID 1 but its bus does not answer (%m): using the cgroupfs backend");
        }
        r = engine_open(s, true, &engine, &worker);
        if (r < 0)
                return r;
        r = backend_cgroupfs_new(engine, worker, s->event, s->state_dir, ret);
        if (r < 0) {
                worker_free(worker);
                cgroup_engine_free(engine);
                return r;
        }
        log_choice(*ret, s->mount);
        return 0;
}
