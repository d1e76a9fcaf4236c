/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <pwd.h>

#include "auth.h"
#include "log.h"
#include "manager.h"
#include "proc.h"
#include "requests.h"
#include "status.h"
#include "targets.h"

#define PROCDIR "/proc"
/* Walks of move --tree after the move, for children forked meanwhile. */
#define MOVE_ROUNDS 8

static json_object *ok_object(void) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        return o;
}

static const char *user_name(uid_t uid, char *buf, size_t len) {
        struct passwd pw, *res = NULL;

        if (getpwuid_r(uid, &pw, buf, len, &res) != 0 || !res)
                return NULL;
        return res->pw_name;
}

/* The class exists and this user may use it. */
static json_object *check_class(struct manager *m, const struct ucred *peer, const char *class,
                                const struct pw_job_class **ret) {
        const struct pw_job_class *c = policy_find_class(&m->policy, class);
        char buf[1024];

        if (!c)
                return control_error("no job class '%s' in the policy", class);
        if (!auth_class_allows(c, peer->uid, user_name(peer->uid, buf, sizeof(buf))))
                return control_error("uid %u may not use class '%s' (it is not in the class's users)",
                                     (unsigned) peer->uid, class);
        *ret = c;
        return NULL;
}

/* The cgroups a request may not take processes from, or may: protected ones, the caller's jobs. */
struct context {
        struct auth_caller caller;
        const char **own_jobs;
        char **protected;
};

static void context_done(struct context *x) {
        free(x->own_jobs);
        for (size_t i = 0; i < x->caller.n_protected; i++)
                free(x->protected[i]);
        free(x->protected);
}

static int context_init(struct manager *m, const struct ucred *peer, bool child_only, struct context *x) {
        *x = (struct context){ .caller = { .uid = peer->uid, .pid = peer->pid, .self = getpid(),
                                            .child_only = child_only } };
        x->own_jobs = calloc(m->jobs.n + 1, sizeof(char *));
        x->protected = calloc(m->policy.n_protects + 1, sizeof(char *));
        if (!x->own_jobs || !x->protected)
                return -ENOMEM;
        for (struct job *j = m->jobs.list; j; j = j->next)
                if (j->uid == peer->uid)
                        x->own_jobs[x->caller.n_own_jobs++] = j->path;
        for (size_t i = 0; i < m->policy.n_protects; i++) {
                const struct pw_protect *pr = &m->policy.protects[i];
                struct backend_protect bp = { .name = pr->name, .unit = pr->unit,
                                              .cgroup = pr->cgroup ? pr->cgroup + 1 : NULL };

                /* A unit that does not run has no process to protect. */
                if (m->backend->ops->protect_path(m->backend, &bp, &x->protected[x->caller.n_protected]) >= 0)
                        x->caller.n_protected++;
        }
        x->caller.own_jobs = x->own_jobs;
        x->caller.protected = (const char *const *) x->protected;
        return 0;
}

/* A user may hold only so many jobs at once (root: any number). */
static json_object *check_job_limit(struct manager *m, const struct ucred *peer) {
        unsigned n = 0;

        for (struct job *j = m->jobs.list; j && peer->uid != 0; j = j->next)
                n += j->uid == peer->uid;
        if (n >= REQUESTS_MAX_JOBS_PER_USER)
                return control_error("uid %u has %u jobs running, the most a user other than root may have",
                                     (unsigned) peer->uid, n);
        return NULL;
}

/* A job name must not be mistaken for an id. */
static json_object *check_name(const char *name) {
        if (name[0] && name[strspn(name, "0123456789")] == '\0')
                return control_error("job name '%s' is a number: job names may not look like job ids", name);
        return NULL;
}

static json_object *placed(struct manager *m, struct job *j, const pid_t *moved, size_t n) {
        json_object *o = ok_object();

        json_object_object_add(o, "job", status_job_json(m, j));
        if (moved) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < n; i++)
                        json_object_array_add(a, json_object_new_int64(moved[i]));
                json_object_object_add(o, "moved", a);
        }
        return o;
}

static json_object *handle_run(struct manager *m, const struct ucred *peer, const struct pw_request *req) {
        _cleanup_(context_done) struct context x = {};
        _cleanup_(targets_done) struct targets t = {};
        const struct pw_job_class *c;
        char why[256];
        json_object *err;
        struct job *j;
        int r;

        err = check_class(m, peer, req->class, &c);
        if (!err)
                err = check_name(req->name);
        if (!err)
                err = check_job_limit(m, peer);
        if (err)
                return err;
        if (context_init(m, peer, true, &x) < 0)
                return control_error("out of memory");
        targets_init(&t, PROCDIR, &x.caller);
        r = targets_add(&t, req->pid, why, sizeof(why));
        if (r < 0)
                return control_error("%s", why);
        r = jobs_place(&m->jobs, c, req->name, peer->uid, &req->pid, 1, &j, NULL);
        if (r < 0)
                return control_error("cannot place process %d in class %s: %s", (int) req->pid, c->name, strerror(-r));
        if (!targets_alive(&t, req->pid))
                log_warning("Job %" PRIu64 ": process %d exited while it was placed", j->id, (int) req->pid);
        return placed(m, j, NULL, 0);
}

/*
 * Children forked while the processes moved stay where their parent was:
 * list the trees again and move what is still outside, until a walk finds
 * nothing new (or MOVE_ROUNDS walks).  Returns the number moved.
 */
static size_t catch_up(struct manager *m, struct job *j, struct targets *t) {
        size_t total = 0;
        char why[256];

        for (unsigned round = 0; round < MOVE_ROUNDS; round++) {
                _cleanup_free_ pid_t *pids = NULL;
                size_t first = t->n, n = 0, moved = 0;

                if (targets_add_descendants(t, why, sizeof(why)) < 0) {
                        log_warning("Job %" PRIu64 ": %s; left where it is", j->id, why);
                        break;
                }
                /* Those born inside the job (of a parent moved already) need nothing. */
                if (t->n == first || targets_pids(t, first, j->path, &pids, &n) < 0 || n == 0)
                        break;
                if (m->backend->ops->job_attach(m->backend, j->path, pids, n, &moved) >= 0)
                        total += moved;
        }
        return total;
}

static json_object *handle_move(struct manager *m, const struct ucred *peer, const struct pw_request *req) {
        _cleanup_(context_done) struct context x = {};
        _cleanup_(targets_done) struct targets t = {};
        _cleanup_free_ pid_t *pids = NULL;
        const struct pw_job_class *c;
        size_t n = 0;
        char why[256];
        json_object *err;
        struct job *j;
        int r;

        err = check_class(m, peer, req->class, &c);
        if (!err)
                err = check_name(req->name);
        if (!err)
                err = check_job_limit(m, peer);
        if (err)
                return err;
        if (context_init(m, peer, false, &x) < 0)
                return control_error("out of memory");
        targets_init(&t, PROCDIR, &x.caller);
        /* Every named process is checked before any tree is walked. */
        for (size_t i = 0; i < req->n_pids; i++) {
                r = targets_add(&t, req->pids[i], why, sizeof(why));
                if (r < 0)
                        return control_error("%s", why);
        }
        if (req->tree && targets_add_descendants(&t, why, sizeof(why)) < 0)
                return control_error("%s", why);
        if (targets_pids(&t, 0, NULL, &pids, &n) < 0)
                return control_error("out of memory");
        if (n == 0)
                return control_error("the processes exited before they could be moved");
        r = jobs_place(&m->jobs, c, req->name, peer->uid, pids, n, &j, NULL);
        if (r < 0)
                return control_error("cannot move the processes into class %s: %s", c->name, strerror(-r));
        if (req->tree && catch_up(m, j, &t) > 0) {
                pids = mfree(pids);
                if (targets_pids(&t, 0, NULL, &pids, &n) < 0)
                        return control_error("out of memory");
        }
        return placed(m, j, pids, n);
}

/*
 * By id; or by name: the caller's own job of that name, else the only job
 * of that name.  Names are not unique: several matches are an error.
 */
static json_object *find_job(struct manager *m, const struct ucred *peer, const char *id_or_name, struct job **ret) {
        struct job *own = NULL, *any = NULL;
        unsigned n_own = 0, n_any = 0;

        *ret = jobs_find(&m->jobs, id_or_name);
        if (*ret && !streq((*ret)->name, id_or_name))
                return NULL; /* by id */
        for (struct job *j = m->jobs.list; j; j = j->next)
                if (streq(j->name, id_or_name)) {
                        if (j->uid == peer->uid && n_own++ == 0)
                                own = j;
                        if (n_any++ == 0)
                                any = j;
                }
        *ret = n_own == 1 ? own : n_own == 0 && n_any == 1 ? any : NULL;
        if (*ret)
                return NULL;
        if (n_any == 0)
                return control_error("no job '%s'", id_or_name);
        return control_error("%u jobs are named '%s': give the job's id (see pagewardenctl list)",
                             n_own ?: n_any, id_or_name);
}

static json_object *handle_reload(struct manager *m, const struct ucred *peer) {
        _cleanup_free_ char *errors = NULL;
        json_object *o;
        int r;

        if (peer->uid != 0)
                return control_error("only root may reload the policy");
        r = manager_reload(m, &errors);
        if (r < 0) {
                o = control_error("the new policy is invalid; the running policy stays in force");
                if (errors)
                        json_object_object_add(o, "diagnostics", json_object_new_string(errors));
                return o;
        }
        o = ok_object();
        json_object_object_add(o, "classes", json_object_new_int64((int64_t) m->policy.n_classes));
        json_object_object_add(o, "protected", json_object_new_int64((int64_t) m->policy.n_protects));
        return o;
}

json_object *requests_handle(void *userdata, const struct ucred *peer, const struct pw_request *req) {
        struct manager *m = userdata;
        json_object *o;
        struct job *j;

        log_debug("Control: %s from pid %d uid %u", pw_command_to_string(req->command), (int) peer->pid,
                  (unsigned) peer->uid);
        switch (req->command) {
        case PW_CMD_VERSION:
                o = ok_object();
                json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
                return o;
        case PW_CMD_STATUS:
                return status_json(m);
        case PW_CMD_LIST:
                o = ok_object();
                {
                        json_object *a = json_object_new_array();

                        for (j = m->jobs.list; j; j = j->next)
                                json_object_array_add(a, status_job_json(m, j));
                        json_object_object_add(o, "jobs", a);
                }
                return o;
        case PW_CMD_SHOW:
                o = find_job(m, peer, req->job, &j);
                if (o)
                        return o;
                o = ok_object();
                json_object_object_add(o, "job", status_job_json(m, j));
                return o;
        case PW_CMD_RELOAD:
                return handle_reload(m, peer);
        case PW_CMD_RUN:
                return handle_run(m, peer, req);
        case PW_CMD_MOVE:
                return handle_move(m, peer, req);
        default:
                return control_error("unknown command");
        }
}
