/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>

#include "log.h"
#include "manager.h"
#include "place.h"
#include "requests.h"
#include "status.h"

static json_object *ok_object(void) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        return o;
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
        return control_error("%u jobs are named '%s': give the job's id (see pagewardenctl list)", n_own ?: n_any,
                             id_or_name);
}

static json_object *reloaded(struct manager *m) {
        json_object *o = ok_object();

        json_object_object_add(o, "classes", json_object_new_int64((int64_t) m->policy.n_classes));
        json_object_object_add(o, "protected", json_object_new_int64((int64_t) m->policy.n_protects));
        return o;
}

/* A reload whose writes systemd has not all answered yet: the answer waits, the loop does not. */
struct reload_answer {
        struct manager *m;
        uint64_t client;
};

static void on_reload_answered(void *userdata) {
        struct reload_answer *a = userdata;

        (void) control_reply(a->m->control, a->client, reloaded(a->m));
        free(a);
}

static json_object *handle_reload(struct manager *m, uint64_t client, const struct ucred *peer) {
        _cleanup_free_ char *errors = NULL;
        struct reload_answer *a;
        json_object *o;
        int r;

        if (peer->uid != 0)
                return control_error("only root may reload the policy");
        if (m->stopping)
                return control_error("the daemon is stopping");
        r = manager_reload(m, &errors);
        if (r < 0) {
                o = control_error("the new policy is invalid; the running policy stays in force");
                if (errors)
                        json_object_object_add(o, "diagnostics", json_object_new_string(errors));
                return o;
        }
        /* "reloaded" means in force: once the backend's writes are answered. */
        a = malloc(sizeof(*a));
        if (a) {
                *a = (struct reload_answer){ .m = m, .client = client };
                r = backend_when_answered(m->backend, on_reload_answered, a);
                if (r > 0)
                        return CONTROL_LATER;
                free(a);
        }
        return reloaded(m);
}

json_object *requests_handle(void *userdata, uint64_t client, const struct ucred *peer, const struct pw_request *req) {
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
                return handle_reload(m, client, peer);
        case PW_CMD_RUN:
                return place_run(m, client, peer, req);
        case PW_CMD_MOVE:
                return place_move(m, client, peer, req);
        default:
                return control_error("unknown command");
        }
}
