/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cgroupfs backend: the engine does the work, the worker the slow writes; the backend owns the protection
 * ledger (its data), whose cgroupfs I/O is the engine's. */
#include "backend.h"
#include "log.h"
#include "units.h"
#include "util.h"

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

static int cgfs_job_place(struct backend *b, const char *class, const struct pw_job_limits *limits,
                          const struct cgroup_job_label *label, const pid_t *pids, size_t n, size_t *ret_moved,
                          char **ret_path) {
        _cleanup_free_ char *path = NULL;
        size_t moved = 0;
        int r = 0;

        r = cgroup_job_acquire(b->engine, class, label, &path, NULL);
        if (r >= 0)
                r = cgroup_job_set_limits(b->engine, path, limits); /* before any process is inside */
        if (r < 0) {
                struct cgroup_release rel;

                if (path)
                        (void) cgroup_job_release(b->engine, path, &rel);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                r = cgroup_job_attach(b->engine, path, pids[i]);
                if (r >= 0)
                        moved++;
        }
        if (moved == 0) {
                struct cgroup_release rel;

                (void) cgroup_job_release(b->engine, path, &rel); /* empty: quick */
                return r < 0 ? r : -ESRCH;
        }
        *ret_moved = moved;
        *ret_path = TAKE_PTR(path);
        return 0;
}

static int cgfs_job_attach(struct backend *b, const char *path, const pid_t *pids, size_t n, size_t *ret_moved) {
        size_t moved = 0;
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                int k = cgroup_job_attach(b->engine, path, pids[i]);

                if (k >= 0)
                        moved++;
                else if (k != -ESRCH)
                        r = r ?: k;
        }
        *ret_moved = moved;
        return moved > 0 ? 0 : r;
}

static int cgfs_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        return cgroup_scan(b->engine, ret, ret_n);
}

static struct ledger *cgfs_ledger(struct backend *b) {
        return b->data;
}

static void cgfs_free(struct backend *b) {
        if (b->data)
                ledger_done(cgfs_ledger(b));
        free(b->data);
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
        .job_place = cgfs_job_place,
        .job_freeze = cgfs_job_freeze,
        .job_attach = cgfs_job_attach,
        .scan = cgfs_scan,
        .protect_set = cgfs_protect_set,
        .protect_path = cgfs_protect_path,
        .free = cgfs_free,
};

int backend_cgroupfs_new(struct cgroup_engine *engine, struct worker *worker, sd_event *event, const char *state_dir,
                         struct backend **ret) {
        struct backend *b = calloc(1, sizeof(*b));
        struct ledger *l = calloc(1, sizeof(*l));
        int r;

        if (!b || !l) {
                free(b);
                free(l);
                return -ENOMEM;
        }
        b->ops = &cgroupfs_ops;
        b->event = event;
        b->tasks_default = UINT64_MAX;
        b->root = strdup(cgroup_engine_root(engine));
        if (!b->root) {
                free(b);
                free(l);
                return -ENOMEM;
        }
        b->data = l;
        r = cgroup_protect_ledger_init(l, state_dir);
        if (r >= 0 && !cgroup_engine_features(engine)->user_xattr)
                /* Jobs are labelled with an xattr so that a restarted daemon finds them. */
                r = log_error_errno(EOPNOTSUPP, "cgroupfs has no user xattrs (Linux 5.7 or later is needed)");
        if (r < 0) {
                backend_free(b); /* not engine and worker: on failure the caller still owns them */
                return r;
        }
        b->engine = engine;
        b->worker = worker;
        *ret = b;
        return 0;
}
