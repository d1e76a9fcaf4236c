/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <pwd.h>

#include "auth.h"
#include "log.h"
#include "manager.h"
#include "proc.h"
#include "requests.h"
#include "status.h"

#define PROCDIR "/proc"

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

/* Every pid exists and belongs to the caller (root may move anything but pid 1 and itself). */
static json_object *check_pids(const struct ucred *peer, const pid_t *pids, size_t n, bool child_of_peer) {
        for (size_t i = 0; i < n; i++) {
                struct proc_ids ids;
                int r = proc_ids(PROCDIR, pids[i], &ids);

                if (r == -ESRCH)
                        return control_error("no process %d", (int) pids[i]);
                if (r < 0)
                        return control_error("cannot read process %d: %s", (int) pids[i], strerror(-r));
                if (pids[i] == getpid())
                        return control_error("pagewardend does not move itself");
                if (!auth_owns_process(&ids, peer->uid))
                        return control_error("process %d does not belong to uid %u", (int) pids[i],
                                             (unsigned) peer->uid);
                if (child_of_peer && ids.ppid != peer->pid)
                        return control_error("process %d is not a child of the caller", (int) pids[i]);
        }
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
        const struct pw_job_class *c;
        json_object *err;
        struct job *j;
        size_t moved;
        int r;

        err = check_class(m, peer, req->class, &c);
        if (!err)
                err = check_pids(peer, &req->pid, 1, true);
        if (err)
                return err;
        r = jobs_place(&m->jobs, c->name, req->name, peer->uid, &req->pid, 1, &j, &moved);
        if (r < 0)
                return control_error("cannot place process %d in class %s: %s", (int) req->pid, c->name, strerror(-r));
        return placed(m, j, NULL, 0);
}

static json_object *handle_move(struct manager *m, const struct ucred *peer, const struct pw_request *req) {
        _cleanup_free_ pid_t *all = NULL;
        const struct pw_job_class *c;
        size_t n = 0, allocated = 0, moved;
        json_object *err;
        struct job *j;
        int r;

        err = check_class(m, peer, req->class, &c);
        if (err)
                return err;
        for (size_t i = 0; i < req->n_pids; i++) {
                _cleanup_free_ pid_t *tree = NULL;
                size_t nt = 1;

                if (req->tree) {
                        r = proc_tree(PROCDIR, req->pids[i], &tree, &nt, PROTOCOL_MAX_PIDS);
                        if (r == -ESRCH)
                                return control_error("no process %d", (int) req->pids[i]);
                        if (r < 0)
                                return control_error("cannot list the descendants of %d: %s", (int) req->pids[i],
                                                     strerror(-r));
                }
                for (size_t k = 0; k < nt; k++) {
                        pid_t p = tree ? tree[k] : req->pids[i];
                        bool dup = false;

                        for (size_t d = 0; d < n; d++)
                                dup = dup || all[d] == p;
                        if (dup)
                                continue;
                        if (GROW(all, allocated, n + 1) < 0)
                                return control_error("out of memory");
                        all[n++] = p;
                }
        }
        err = check_pids(peer, all, n, false);
        if (err)
                return err;
        r = jobs_place(&m->jobs, c->name, req->name, peer->uid, all, n, &j, &moved);
        if (r < 0)
                return control_error("cannot move the processes into class %s: %s", c->name, strerror(-r));
        return placed(m, j, all, n);
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
                j = jobs_find(&m->jobs, req->job);
                if (!j)
                        return control_error("no job '%s'", req->job);
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
