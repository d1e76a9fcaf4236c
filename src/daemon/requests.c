/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>

#include "api.h"
#include "evidence.h"
#include "jobs-signal.h"
#include "log.h"
#include "place-request.h"
#include "proc.h"
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
static json_object *find_job(struct api *api, const struct ucred *peer, const char *id_or_name, struct job **ret) {
        struct job *own = NULL, *any = NULL;
        unsigned n_own = 0, n_any = 0;

        /* A number is an id, never a name: no job's name can shadow another's id. */
        if (id_or_name[0] && id_or_name[strspn(id_or_name, "0123456789")] == '\0') {
                *ret = jobs_find(api->jobs, id_or_name);
                return *ret ? NULL : control_error("no job %s", id_or_name);
        }
        for (struct job *j = api->jobs->list; j; j = j->next)
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

/* Whether a running job has this id or name (several by a name: find_job's error stands). */
static bool running_named(struct api *api, const char *id_or_name) {
        if (jobs_find(api->jobs, id_or_name))
                return true;
        for (struct job *j = api->jobs->list; j; j = j->next)
                if (streq(j->name, id_or_name))
                        return true;
        return false;
}

static json_object *reloaded(struct api *api) {
        json_object *o = ok_object();

        json_object_object_add(o, "classes", json_object_new_int64((int64_t) api->policy->n_classes));
        json_object_object_add(o, "protected", json_object_new_int64((int64_t) api->policy->n_protects));
        return o;
}

/* A reload: its files are read off the loop, and "reloaded" means in force, once the backend's writes are answered;
 * the answer waits, the loop does not.  An answer ready before handle_reload returns is its return value. */
struct reload_answer {
        struct api *api;
        uint64_t client;
        bool waiting;     /* handle_reload returned: the answer goes through control_reply */
        json_object *now; /* the answer, while handle_reload has not returned */
};

static void reload_reply(struct reload_answer *a, json_object *o) {
        if (!a->waiting) {
                a->now = o;
                return;
        }
        (void) control_reply(a->api->control, a->client, o);
        free(a);
}

static void on_reload_answered(void *userdata) {
        struct reload_answer *a = userdata;

        reload_reply(a, reloaded(a->api));
}

static void on_reloaded(void *userdata, int r, const char *errors) {
        struct reload_answer *a = userdata;
        json_object *o;

        if (r == -ESHUTDOWN) {
                reload_reply(a, control_error("the daemon is stopping"));
                return;
        }
        if (r < 0) {
                o = control_error("the new policy is invalid; the running policy stays in force");
                if (errors)
                        json_object_object_add(o, "diagnostics", json_object_new_string(errors));
                reload_reply(a, o);
                return;
        }
        if (backend_when_answered(a->api->backend, on_reload_answered, a) > 0)
                return;
        reload_reply(a, reloaded(a->api));
}

static json_object *handle_reload(struct api *api, uint64_t client, const struct ucred *peer) {
        struct reload_answer *a;
        json_object *o;
        int r;

        if (peer->uid != 0)
                return control_error("only root may reload the policy");
        if (*api->stopping)
                return control_error("the daemon is stopping");
        a = malloc(sizeof(*a));
        if (!a)
                return control_error("out of memory");
        *a = (struct reload_answer){ .api = api, .client = client };
        r = api->reload(api->reload_userdata, on_reloaded, a);
        if (r < 0) {
                free(a);
                return control_error("cannot reload: %s", strerror(-r));
        }
        if (a->now) {
                o = a->now;
                free(a);
                return o;
        }
        a->waiting = true;
        return CONTROL_LATER;
}

/* ---- stop, kill, freeze, thaw: root, or the job's own user ---- */

static json_object *job_answer(struct api *api, struct job *j) {
        json_object *o = ok_object();

        json_object_object_add(o, "job", status_job_json(api, j));
        return o;
}

static json_object *find_own_job(struct api *api, const struct ucred *peer, const struct pw_request *req,
                                 struct job **ret) {
        json_object *o = find_job(api, peer, req->job, ret);

        if (o)
                return o;
        if (peer->uid != 0 && (*ret)->uid != peer->uid)
                return control_error("job %" PRIu64 " is uid %u's: only root and its own user may %s it", (*ret)->id,
                                     (unsigned) (*ret)->uid, pw_command_to_string(req->command));
        if ((*ret)->releasing)
                return control_error("job %" PRIu64 " has ended", (*ret)->id);
        return NULL;
}

/* SIGKILL for what a stop left, once JOBCTL_STOP_KILL_USEC has passed: the job is named by its id, which is
 * never reused, so a job that ended meanwhile is not mistaken for another. */
struct stop_timer {
        struct api *api;
        uint64_t id;
        uid_t uid; /* who stopped it: only its processes get the SIGKILL */
};

static int on_stop_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        struct stop_timer *t = userdata;
        struct job *j = jobs_find_id(t->api->jobs, t->id);
        unsigned n = 0;

        if (j && !j->releasing &&
            jobctl_signal(t->api->backend->engine, PROC_ROOT, j->path, SIGKILL, t->uid, &n, NULL) >= 0 && n > 0)
                action_log_add(t->api->log, LOG_LEVEL_NOTICE,
                               "Job %" PRIu64 " (%s): %u process%s left %u s after SIGTERM: SIGKILL sent", j->id,
                               j->name, n, n == 1 ? "" : "es", (unsigned) (JOBCTL_STOP_KILL_USEC / 1000000));
        return 0;
}

static void stop_timer_arm(struct api *api, uint64_t id, uid_t uid) {
        _cleanup_(sd_event_source_unrefp) sd_event_source *s = NULL;
        struct stop_timer *t = malloc(sizeof(*t));

        if (!t)
                return;
        *t = (struct stop_timer){ .api = api, .id = id, .uid = uid };
        if (sd_event_add_time_relative(api->event, &s, CLOCK_MONOTONIC, JOBCTL_STOP_KILL_USEC, 0, on_stop_timeout, t) <
                    0 ||
            sd_event_source_set_destroy_callback(s, free) < 0) {
                free(t);
                return;
        }
        (void) sd_event_source_set_description(s, "job-stop");
        (void) sd_event_source_set_floating(s, true); /* the loop owns it: freed once it has run, or at exit */
}

static json_object *handle_signal(struct api *api, const struct ucred *peer, const struct pw_request *req) {
        int sig = req->command == PW_CMD_STOP ? SIGTERM : req->signal;
        json_object *o;
        struct job *j;
        unsigned n = 0, foreign = 0;
        char name[32];
        int r;

        o = find_own_job(api, peer, req, &j);
        if (o)
                return o;
        /* A frozen process takes its SIGTERM only once thawed: stop thaws the job first. */
        if (req->command == PW_CMD_STOP && jobctl_frozen(api->backend->engine, j->path))
                (void) backend_job_freeze(api->backend, j->path, j->unit, false);
        /* A user's signals reach only the processes the user could signal as well: not root's helper in
         * the job, nor a setuid program's. */
        r = jobctl_signal(api->backend->engine, PROC_ROOT, j->path, sig, peer->uid, &n, &foreign);
        if (r < 0)
                return control_error("cannot signal the processes of job %" PRIu64 ": %s", j->id, strerror(-r));
        if (req->command == PW_CMD_STOP) {
                (void) jobctl_signal(api->backend->engine, PROC_ROOT, j->path, SIGCONT, peer->uid, &(unsigned){ 0 },
                                     NULL); /* stopped ones too */
                stop_timer_arm(api, j->id, peer->uid);
        }
        action_log_add(api->log, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s): %s sent to %u process%s by uid %u%s%s", j->id,
                       j->name, jobctl_signal_name(sig, name, sizeof(name)), n, n == 1 ? "" : "es",
                       (unsigned) peer->uid, req->command == PW_CMD_STOP ? " (stop)" : "",
                       foreign ? " (not to processes of other users)" : "");
        o = job_answer(api, j);
        json_object_object_add(o, "signal", json_object_new_string(name));
        json_object_object_add(o, "signalled", json_object_new_int64(n));
        json_object_object_add(o, "not_signalled", json_object_new_int64(foreign));
        return o;
}

/* A freeze or thaw that waits for systemd's answer: then the job's state says it. */
struct freeze_answer {
        struct api *api;
        uint64_t client, id;
};

static void on_freeze_answered(void *userdata) {
        struct freeze_answer *a = userdata;
        struct job *j = jobs_find_id(a->api->jobs, a->id);

        (void) control_reply(a->api->control, a->client,
                             j ? job_answer(a->api, j) : control_error("job %" PRIu64 " has ended", a->id));
        free(a);
}

static json_object *handle_freeze(struct api *api, uint64_t client, const struct ucred *peer,
                                  const struct pw_request *req) {
        bool frozen = req->command == PW_CMD_FREEZE;
        struct freeze_answer *a;
        json_object *o;
        struct job *j;
        int r;

        o = find_own_job(api, peer, req, &j);
        if (o)
                return o;
        /* Freezing holds every process of the job, which a user may not do to another's. */
        if (frozen) {
                uid_t other = 0;
                pid_t p = jobctl_foreign(api->backend->engine, PROC_ROOT, j->path, peer->uid, &other);

                if (p < 0)
                        return control_error("cannot read the processes of job %" PRIu64 ": %s", j->id, strerror(-p));
                if (p > 0)
                        return control_error("job %" PRIu64 " holds process %d of uid %u: only root may freeze it",
                                             j->id, (int) p, (unsigned) other);
        }
        r = backend_job_freeze(api->backend, j->path, j->unit, frozen);
        if (r == -EOPNOTSUPP)
                return control_error("job %" PRIu64 " cannot be %s here (cgroup.freeze needs Linux 5.2)", j->id,
                                     frozen ? "frozen" : "thawed");
        if (r < 0)
                return control_error("cannot %s job %" PRIu64 ": %s", pw_command_to_string(req->command), j->id,
                                     strerror(-r));
        action_log_add(api->log, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s) %s by uid %u", j->id, j->name,
                       frozen ? "frozen" : "thawed", (unsigned) peer->uid);
        a = malloc(sizeof(*a));
        if (a) {
                *a = (struct freeze_answer){ .api = api, .client = client, .id = j->id };
                if (backend_when_answered(api->backend, on_freeze_answered, a) > 0)
                        return CONTROL_LATER;
                free(a);
        }
        return job_answer(api, j);
}

/* A status or list of many jobs, answered once its jobs are written (status.c). */
static void status_reply(struct api *api, uint64_t client, json_object *resp) {
        (void) control_reply(api->control, client, resp ?: control_error("out of memory"));
}

json_object *requests_handle(void *userdata, uint64_t client, const struct ucred *peer, const struct pw_request *req) {
        struct api *api = userdata;
        json_object *o;
        struct job *j;
        int r;

        log_debug("Control: %s from pid %d uid %u", pw_command_to_string(req->command), (int) peer->pid,
                  (unsigned) peer->uid);
        switch (req->command) {
        case PW_CMD_VERSION:
                o = ok_object();
                json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
                return o;
        case PW_CMD_STATUS:
        case PW_CMD_LIST:
                r = status_answer(api, req->command == PW_CMD_LIST, req->all, status_reply, client, &o);
                if (r < 0)
                        return control_error("out of memory");
                return r > 0 ? CONTROL_LATER : o;
        case PW_CMD_SHOW: {
                json_object *ended;

                o = find_job(api, peer, req->job, &j);
                if (o && !running_named(api, req->job) && (ended = history_find(api->history, req->job, peer->uid))) {
                        /* Not running: the last one that ended (its report). */
                        json_object_put(o);
                        o = ok_object();
                        json_object_object_add(o, "job", json_object_get(ended));
                        return o;
                }
                if (o)
                        return o;
                o = ok_object();
                json_object_object_add(o, "job", status_job_json(api, j));
                return o;
        }
        case PW_CMD_RELOAD:
                return handle_reload(api, client, peer);
        case PW_CMD_RUN:
                return place_run(api, client, peer, req);
        case PW_CMD_MOVE:
                return place_move(api, client, peer, req);
        case PW_CMD_STOP:
        case PW_CMD_KILL:
                return handle_signal(api, peer, req);
        case PW_CMD_FREEZE:
        case PW_CMD_THAW:
                return handle_freeze(api, client, peer, req);
        case PW_CMD_SUGGEST:
                /* Command lines of every user's processes: root's to read. */
                if (peer->uid != 0)
                        return control_error(
                                "only root may read what observation found (it names other users' "
                                "command lines)");
                o = ok_object();
                json_object_object_add(o, "observation", observe_status(api->observe));
                json_object_object_add(o, "episodes", observe_episodes(api->observe));
                json_object_object_add(o, "suspects", observe_summary(api->observe, EVIDENCE_EPISODE_SUSPECTS));
                {
                        json_object *classes = json_object_new_array();

                        /* A suggested class must not take one of their names. */
                        for (size_t i = 0; i < api->policy->n_classes; i++)
                                json_object_array_add(classes, json_object_new_string(api->policy->classes[i].name));
                        json_object_object_add(o, "classes", classes);
                }
                return o;
        default:
                return control_error("unknown command");
        }
}
