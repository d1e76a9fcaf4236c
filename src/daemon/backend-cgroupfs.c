/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cgroupfs backend: the engine does the work, the worker the slow writes, a second worker the writes of pids;
 * the backend owns the protection ledger, whose cgroupfs I/O is the engine's. */
#include "backend.h"
#include "log.h"
#include "units.h"
#include "util.h"

/* The backend's own (struct backend's data). */
struct cgfs_data {
        struct ledger protection;
        struct worker *placer; /* writes pids into jobs' cgroup.procs */
        struct backend_placing *placings;
        struct backend_attaching *attachings;
};

static char *cgfs_class_path(struct backend *b, const char *class) {
        char *p;

        return asprintf(&p, "%s/%s", cgroup_engine_root(b->engine), class) < 0 ? NULL : p;
}

/* A class limit the worker wrote; a failure is said here, as the systemd backend says its failed calls. */
static void class_write_done(void *userdata, const struct worker_task *t) {
        if (t->r < 0 && t->r != -ENOENT)
                log_warning_errno(t->r, "Writing %s %s of /%s failed: %m", t->file, t->value, t->path);
}

/*
 * The class's limits: at once those whose write returns at once, and through the worker those whose
 * writer would reclaim (a limit below what the class holds): the loop never waits on reclaim.  The
 * same value is not written again (the kernel would reclaim for it too).
 */
static int cgfs_class_apply(struct backend *b, const struct pw_job_class *c) {
        /* memory.max first in each: with both lower, memory.high then reclaims nothing more. */
        const struct {
                const char *file;
                uint64_t v;
        } limits[2] = { { "memory.max", c->memory_max }, { "memory.high", c->memory_high } };
        enum cgroup_limit_change change[2];
        _cleanup_free_ char *path = NULL;
        char value[32];
        int r;

        r = cgroup_class_apply(b->engine, c);
        if (r < 0)
                return r;
        path = cgfs_class_path(b, c->name);
        if (!path)
                return -ENOMEM;
        for (size_t i = 0; i < 2; i++)
                change[i] = cgroup_limit_change(b->engine, path, limits[i].file, limits[i].v);
        /* What returns at once first, then what the worker lowers. */
        for (size_t i = 0; i < 2; i++)
                if (change[i] == CGROUP_LIMIT_WRITE) {
                        cgv_format_limit(limits[i].v, value, sizeof(value));
                        r = cgroup_write_file(b->engine, path, limits[i].file, value);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < 2; i++)
                if (change[i] == CGROUP_LIMIT_RECLAIMS) {
                        cgv_format_limit(limits[i].v, value, sizeof(value));
                        r = worker_write(b->worker, path, limits[i].file, value, 0, class_write_done, NULL);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int cgfs_class_set_memory_high(struct backend *b, const char *class, uint64_t bytes, uint64_t wake_usec,
                                      worker_done_fn done, void *userdata) {
        _cleanup_free_ char *path = cgfs_class_path(b, class);
        char value[32];
        int r;

        if (!path)
                return -ENOMEM;
        /* Lowering memory.high reclaims in the writer: the worker writes it. */
        cgv_format_limit(bytes, value, sizeof(value));
        r = worker_write(b->worker, path, "memory.high", value, wake_usec, done, userdata);
        return r < 0 ? r : 0;
}

static int cgfs_class_set_io(struct backend *b, const char *class, const struct pw_io_limit *io, size_t n) {
        return cgroup_class_set_io(b->engine, class, io, n);
}

static int cgfs_class_freeze(struct backend *b, const char *class, bool frozen) {
        return cgroup_class_freeze(b->engine, class, frozen);
}

static int cgfs_class_remove(struct backend *b, const char *class) {
        return cgroup_class_remove(b->engine, class);
}

static int cgfs_thaw_all(struct backend *b) {
        return cgroup_thaw_all(b->engine);
}

/*
 * Placement without the loop waiting: writing a pid into cgroup.procs waits
 * for an RCU grace period (the kernel's cgroup migration lock; milliseconds
 * natively, tens under emulation, at each move after a quiet moment), so the
 * writes go to a worker of their own (not behind the other's reclaim), in
 * order, and the result comes back on the loop.  The slot is taken and its
 * limits written on the loop first: a job's cgroup is ready before any
 * process is inside.  A placement cancelled (the daemon stops) is forgotten:
 * its slot keeps its label, and the next start adopts it.
 */
struct backend_placing {
        struct backend *b;
        backend_placed_fn done;
        void *userdata;
        char *path;
        bool cancelled;
        struct backend_placing *next;
};

struct backend_attaching {
        struct backend *b;
        backend_attached_fn done;
        void *userdata;
        bool cancelled;
        struct backend_attaching *next;
};

static struct cgfs_data *cgfs_data(struct backend *b) {
        return b->data;
}

static void placing_free(struct backend_placing *p) {
        for (struct backend_placing **pp = &cgfs_data(p->b)->placings; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
        free(p->path);
        free(p);
}

static void attaching_free(struct backend_attaching *a) {
        for (struct backend_attaching **pp = &cgfs_data(a->b)->attachings; *pp; pp = &(*pp)->next)
                if (*pp == a) {
                        *pp = a->next;
                        break;
                }
        free(a);
}

static void placed_written(void *userdata, const struct worker_task *t) {
        struct backend_placing *p = userdata;
        struct cgroup_release rel;

        if (t->moved == 0) /* nothing went in: the slot goes back (empty: quick) */
                (void) cgroup_job_release(p->b->engine, p->path, &rel);
        if (!p->cancelled)
                p->done(p->userdata, t->moved > 0 ? 0 : t->r, t->moved > 0 ? p->path : NULL);
        placing_free(p);
}

static int cgfs_job_place_async(struct backend *b, const char *class, const struct pw_job_limits *limits,
                                const struct cgroup_job_label *label, pid_t pid, backend_placed_fn done, void *userdata,
                                struct backend_placing **ret) {
        struct cgfs_data *d = cgfs_data(b);
        struct backend_placing *p = calloc(1, sizeof(*p));
        struct cgroup_release rel;
        int r;

        if (!p)
                return -ENOMEM;
        *p = (struct backend_placing){ .b = b, .done = done, .userdata = userdata, .next = d->placings };
        d->placings = p;
        r = cgroup_job_acquire(b->engine, class, label, &p->path, NULL);
        if (r >= 0) /* before any process is inside */
                r = cgroup_job_set_limits(b->engine, p->path, r > 0, limits);
        if (r >= 0)
                r = worker_attach(d->placer, p->path, &pid, 1, placed_written, p);
        if (r < 0) {
                if (p->path)
                        (void) cgroup_job_release(b->engine, p->path, &rel);
                placing_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

static void cgfs_job_place_cancel(struct backend *b, struct backend_placing *p) {
        p->cancelled = true; /* freed when the worker is done with it, or with the backend */
}

static void attached_written(void *userdata, const struct worker_task *t) {
        struct backend_attaching *a = userdata;

        if (!a->cancelled)
                a->done(a->userdata, t->r);
        attaching_free(a);
}

static int cgfs_job_attach_async(struct backend *b, const char *path, const pid_t *pids, size_t n,
                                 backend_attached_fn done, void *userdata, struct backend_attaching **ret) {
        struct cgfs_data *d = cgfs_data(b);
        struct backend_attaching *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        *a = (struct backend_attaching){ .b = b, .done = done, .userdata = userdata, .next = d->attachings };
        d->attachings = a;
        r = worker_attach(d->placer, path, pids, n, attached_written, a);
        if (r < 0) {
                attaching_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

static void cgfs_job_attach_cancel(struct backend *b, struct backend_attaching *a) {
        a->cancelled = true;
}

static int cgfs_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        return cgroup_scan(b->engine, ret, ret_n);
}

static struct ledger *cgfs_ledger(struct backend *b) {
        return &cgfs_data(b)->protection;
}

static void cgfs_free(struct backend *b) {
        struct cgfs_data *d = cgfs_data(b);

        if (!d)
                return;
        d->placer = worker_free(d->placer); /* first: what it has not done yet is dropped */
        while (d->placings)
                placing_free(d->placings);
        while (d->attachings)
                attaching_free(d->attachings);
        ledger_done(&d->protection);
        free(d);
}

/* cgroup: entries through the backend's ledger; a unit: entry needs systemd (-EOPNOTSUPP). */
static int cgfs_protect_set(struct backend *b, const struct backend_protect *req, size_t n,
                            struct cgroup_protect_result *res) {
        _cleanup_free_ struct ledger_request *lreq = calloc(n + 1, sizeof(*lreq));

        if (!lreq)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                lreq[i] = (struct ledger_request){ req[i].cgroup, req[i].min, req[i].low, req[i].swap_deny };
        return cgroup_protect_set(b->engine, cgfs_ledger(b), lreq, n, res);
}

static int cgfs_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path) {
        if (!p->cgroup)
                return -EOPNOTSUPP;
        *ret_path = strdup(p->cgroup + 1);
        return *ret_path ? 0 : -ENOMEM;
}

static int cgfs_job_freeze(struct backend *b, const char *path, const char *unit, bool frozen) {
        if (!cgroup_engine_features(b->engine)->freeze)
                return -EOPNOTSUPP;
        return cgroup_write_file(b->engine, path, "cgroup.freeze", frozen ? "1" : "0");
}

static const struct backend_ops cgroupfs_ops = {
        .name = "cgroupfs",
        .caps = { .releases_jobs = true, .protects_units = false },
        .class_path = cgfs_class_path,
        .class_apply = cgfs_class_apply,
        .class_set_memory_high = cgfs_class_set_memory_high,
        .class_set_io = cgfs_class_set_io,
        .class_freeze = cgfs_class_freeze,
        .thaw_all = cgfs_thaw_all,
        .class_remove = cgfs_class_remove,
        .job_place_async = cgfs_job_place_async,
        .job_place_cancel = cgfs_job_place_cancel,
        .job_freeze = cgfs_job_freeze,
        .job_attach_async = cgfs_job_attach_async,
        .job_attach_cancel = cgfs_job_attach_cancel,
        .scan = cgfs_scan,
        .protect_set = cgfs_protect_set,
        .protect_path = cgfs_protect_path,
        .free = cgfs_free,
};

int backend_cgroupfs_new(struct cgroup_engine *engine, struct worker *worker, sd_event *event, const char *state_dir,
                         struct backend **ret) {
        _cleanup_(backend_freep) struct backend *b = calloc(1, sizeof(*b));
        struct cgfs_data *d = calloc(1, sizeof(*d));
        int r;

        if (!b || !d) {
                free(d);
                return -ENOMEM;
        }
        b->ops = &cgroupfs_ops;
        b->data = d;
        b->event = event;
        b->tasks_default = UINT64_MAX;
        b->root = strdup(cgroup_engine_root(engine));
        if (!b->root)
                return -ENOMEM;
        if (!cgroup_engine_features(engine)->user_xattr)
                /* Jobs are labelled with an xattr so that a restarted daemon finds them. */
                return log_error_errno(EOPNOTSUPP, "cgroupfs has no user xattrs (Linux 5.7 or later is needed)");
        r = cgroup_protect_ledger_init(&d->protection, state_dir);
        if (r >= 0)
                r = worker_new(event, engine, &d->placer);
        if (r < 0)
                return r; /* engine and worker stay the caller's */
        b->engine = engine;
        b->worker = worker;
        *ret = TAKE_PTR(b);
        return 0;
}
