/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>
#include <signal.h>

#include "auth.h"
#include "log.h"
#include "place-request.h"
#include "place-targets.h"
#include "proc.h"
#include "status.h"
#include "units.h"

/* ---- what is checked ---- */

/* The class exists and this user may use it. */
static json_object *check_class(struct api *api, uid_t uid, const char *class, const struct pw_job_class **ret) {
        const struct pw_job_class *c = policy_find_class(api->policy, class);
        char buf[1024];

        if (!c)
                return control_error("no job class '%s' in the policy", class);
        if (!auth_class_allows(c, uid, user_name_of(uid, buf, sizeof(buf))))
                return control_error("uid %u may not use class '%s' (it is not in the class's users)", (unsigned) uid,
                                     class);
        *ret = c;
        return NULL;
}

/* A user may hold only so many jobs at once (root: any number). */
static json_object *check_job_limit(struct api *api, uid_t uid) {
        unsigned n = 0;

        for (struct job *j = api->jobs->list; j && uid != 0; j = j->next)
                n += j->uid == uid;
        if (n >= PLACE_MAX_JOBS_PER_USER)
                return control_error("uid %u has %u jobs running, the most a user other than root may have",
                                     (unsigned) uid, n);
        return NULL;
}

/* A job name must not be mistaken for an id. */
static json_object *check_name(const char *name) {
        if (name[0] && name[strspn(name, "0123456789")] == '\0')
                return control_error("job name '%s' is a number: job names may not look like job ids", name);
        return NULL;
}

static json_object *check_request(struct api *api, uid_t uid, const struct pw_request *req,
                                  const struct pw_job_class **ret) {
        json_object *err = check_class(api, uid, req->class, ret);

        if (!err)
                err = check_name(req->name);
        if (!err)
                err = check_job_limit(api, uid);
        return err;
}

/* The facts auth.c decides on: the caller's jobs and the protected applications, copied (a move outlives a turn of
 * the loop, jobs may end meanwhile). */
struct context {
        struct auth_caller caller;
        char **own_jobs;
        struct auth_protected protected;
};

static void context_done(struct context *x) {
        for (size_t i = 0; i < x->caller.n_own_jobs; i++)
                free(x->own_jobs[i]);
        free(x->own_jobs);
        auth_protected_done(&x->protected);
        *x = (struct context){};
}

static int context_init(struct api *api, const struct ucred *peer, bool child_only, struct context *x) {
        *x = (struct context){
                .caller = { .uid = peer->uid, .pid = peer->pid, .self = getpid(), .child_only = child_only }
        };
        x->own_jobs = calloc(peer->uid != 0 ? api->jobs->n + 1 : 1, sizeof(char *));
        if (!x->own_jobs || auth_protected_copy(api->policy, &x->protected) < 0)
                return -ENOMEM;
        /* Root may take a process from anywhere (auth.c asks for the own jobs of others only): no copy of every
         * job's path for each of root's moves. */
        for (struct job *j = api->jobs->list; j && peer->uid != 0; j = j->next)
                if (j->uid == peer->uid && (x->own_jobs[x->caller.n_own_jobs] = strdup(j->path)))
                        x->caller.n_own_jobs++;
        x->caller.own_jobs = (const char *const *) x->own_jobs;
        x->caller.protected = &x->protected;
        return 0;
}

static json_object *placed(struct api *api, struct job *j, const pid_t *moved, size_t n) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "job", status_job_placed_json(api, j));
        if (moved) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < n; i++)
                        json_object_array_add(a, json_object_new_int64(moved[i]));
                json_object_object_add(o, "moved", a);
        }
        return o;
}

/* ---- run ---- */

/* A run under way: the answer goes when the job is there (systemd may take its time; the loop does not wait). */
struct run {
        struct api *api;
        uint64_t client;
        pid_t pid;
        char class[POLICY_NAME_MAX + 1];
};

static void on_run_placed(void *userdata, int r, struct job *j) {
        struct run *run = userdata;

        if (r != -ECANCELED) { /* cancelled: the daemon stops, there is nobody left to answer */
                json_object *resp = r < 0 ? control_error("cannot place process %d in class %s: %s", (int) run->pid,
                                                          run->class, strerror(-r))
                                          : placed(run->api, j, NULL, 0);

                if (r >= 0 && kill(run->pid, 0) < 0 && errno == ESRCH)
                        log_warning("Job %" PRIu64 ": process %d exited while it was placed", j->id, (int) run->pid);
                if (control_reply(run->api->control, run->client, resp) < 0)
                        log_debug("Run of process %d: the caller could not be answered", (int) run->pid);
        }
        free(run);
}

/*
 * The job's own limits: what the class gives each job, tightened by the request's (run --property).  A
 * request may only tighten, whoever sends it: loosening is the policy's business.
 */
static json_object *job_limits(const struct pw_job_class *c, const struct pw_request *req, struct pw_job_limits *ret) {
        const struct {
                const char *name;
                uint64_t asked, per_job;
                uint64_t *dst;
        } l[] = {
                { "memory.high", req->memory_high, c->per_job.memory_high, &ret->memory_high },
                { "memory.max", req->memory_max, c->per_job.memory_max, &ret->memory_max },
                { "memory.swap.max", req->memory_swap_max, c->per_job.memory_swap_max, &ret->memory_swap_max },
        };

        *ret = c->per_job;
        for (size_t i = 0; i < ELEMENTSOF(l); i++) {
                char a[32], b[32];

                if (l[i].asked == 0)
                        continue;
                if (l[i].asked > l[i].per_job) {
                        units_format_human(l[i].asked, a, sizeof(a));
                        units_format_human(l[i].per_job, b, sizeof(b));
                        return control_error(
                                "a job's %s of %s is above the %s class %s gives each job: --property "
                                "may only tighten (loosening is the policy's per_job:)",
                                l[i].name, a, b, c->name);
                }
                *l[i].dst = l[i].asked;
        }
        return NULL;
}

json_object *place_run(struct api *api, uint64_t client, const struct ucred *peer, const struct pw_request *req) {
        _cleanup_(context_done) struct context x = {};
        struct pw_job_limits limits;
        _cleanup_(place_targets_done) struct place_targets t = {};
        const struct pw_job_class *c;
        struct run *run;
        char why[256];
        json_object *err;
        int r;

        err = check_request(api, peer->uid, req, &c);
        if (!err)
                err = job_limits(c, req, &limits);
        if (err)
                return err;
        if (context_init(api, peer, true, &x) < 0)
                return control_error("out of memory");
        place_targets_init(&t, PROC_ROOT, &x.caller);
        r = place_targets_add(&t, req->pid, why, sizeof(why));
        if (r < 0)
                return control_error("%s", why);
        run = calloc(1, sizeof(*run));
        if (!run)
                return control_error("out of memory");
        *run = (struct run){ .api = api, .client = client, .pid = req->pid };
        snprintf(run->class, sizeof(run->class), "%s", c->name);
        r = jobs_place_async(api->jobs, c, &limits, req->name, peer->uid, "run", req->pid,
                             place_targets_pidfd(&t, req->pid), on_run_placed, run);
        if (r < 0) {
                free(run);
                return control_error("cannot place process %d in class %s: %s", (int) req->pid, c->name, strerror(-r));
        }
        return CONTROL_LATER;
}

/* ---- move, in slices ---- */

enum move_phase {
        MOVE_CHECK,     /* the named processes */
        MOVE_WALK,      /* their trees */
        MOVE_PLACE,     /* a new job with the first of them */
        MOVE_PLACING,   /* ... which the backend is making (the move sleeps) */
        MOVE_ATTACH,    /* the rest, into the job */
        MOVE_ATTACHING, /* ... one, which the backend is moving (the move sleeps) */
        MOVE_ROUND,     /* a walk again, for children forked meanwhile */
        MOVE_DONE,
};

struct move {
        struct api *api;
        uint64_t client;
        uid_t uid;
        struct pw_request req;
        struct context x;
        struct place_targets t;
        enum move_phase phase;
        size_t cursor;  /* CHECK: the next named pid; WALK, ROUND: the next process to walk */
        pid_t *pending; /* ATTACH: what is still to move */
        size_t n_pending, next;
        size_t round_first; /* ROUND: the first process this round found */
        unsigned rounds;
        uint64_t job_id;
        sd_event_source *slice;
        struct move *prev_move, *next_move; /* the manager's moves under way */
};

static struct move *move_free(struct move *mv) {
        if (!mv)
                return NULL;
        if (mv->prev_move)
                mv->prev_move->next_move = mv->next_move;
        else if (mv->api->moves == mv)
                mv->api->moves = mv->next_move;
        if (mv->next_move)
                mv->next_move->prev_move = mv->prev_move;
        jobs_place_forget(mv->api->jobs, mv);
        jobs_attach_forget(mv->api->jobs, mv);
        sd_event_source_disable_unref(mv->slice);
        place_targets_done(&mv->t);
        context_done(&mv->x);
        free(mv->pending);
        free(mv);
        return NULL;
}

void place_moves_free(struct api *api) {
        while (api->moves)
                move_free(api->moves);
}

/* Ends the move with resp (an error, or what was placed). */
static void move_finish(struct move *mv, json_object *resp) {
        json_object *err = NULL;
        int r;

        json_object_object_get_ex(resp, "error", &err);
        log_debug("Move for uid %u: %zu process%s held, answering: %s", (unsigned) mv->uid, mv->t.n,
                  mv->t.n == 1 ? "" : "es", err ? json_object_get_string(err) : "ok");
        r = control_reply(mv->api->control, mv->client, resp);
        if (r < 0)
                log_debug("Move for uid %u: the caller could not be answered: %s", (unsigned) mv->uid, strerror(-r));
        mv->phase = MOVE_DONE;
        move_free(mv); /* its source too: sd-event frees it once this dispatch returns */
}

static struct job *move_job(struct move *mv) {
        return jobs_find_id(mv->api->jobs, mv->job_id);
}

/* What to move next: the processes from index first on, alive and outside the job (or anywhere). */
static int move_pend(struct move *mv, size_t first, const char *outside) {
        mv->pending = mfree(mv->pending);
        mv->next = 0;
        return place_targets_pids(&mv->t, first, outside, &mv->pending, &mv->n_pending);
}

static int step_check(struct move *mv, char *why, size_t len) {
        int r = place_targets_add(&mv->t, mv->req.pids[mv->cursor], why, len);

        if (r < 0)
                return r;
        if (++mv->cursor == mv->req.n_pids) {
                mv->cursor = 0;
                mv->phase = mv->req.tree ? MOVE_WALK : MOVE_PLACE;
        }
        return 0;
}

static int step_walk(struct move *mv, char *why, size_t len) {
        int r = place_targets_walk(&mv->t, &mv->cursor, 1, why, len);

        if (r > 0)
                mv->phase = MOVE_PLACE;
        return r < 0 ? r : 0;
}

static void on_move_placed(void *userdata, int r, struct job *j) {
        struct move *mv = userdata;

        if (r == -ECANCELED)
                return; /* the daemon stops: place_moves_free() frees the move */
        if (r < 0) {
                move_finish(mv,
                            control_error("cannot move the processes into class %s: %s", mv->req.class, strerror(-r)));
                return;
        }
        mv->job_id = j->id;
        mv->next = 1;
        mv->phase = MOVE_ATTACH;
        (void) sd_event_source_set_enabled(mv->slice, SD_EVENT_ON);
}

static int step_place(struct move *mv, char *why, size_t len) {
        const struct pw_job_class *c = policy_find_class(mv->api->policy, mv->req.class);
        int r;

        if (!c) {
                snprintf(why, len, "class '%s' left the policy while the processes were checked", mv->req.class);
                return -ENOENT;
        }
        r = move_pend(mv, 0, NULL);
        if (r >= 0 && mv->n_pending == 0) {
                snprintf(why, len, "the processes exited before they could be moved");
                return -ESRCH;
        }
        /* The job with its first process; the rest follow in slices once it is there. */
        if (r >= 0)
                r = jobs_place_async(mv->api->jobs, c, NULL, mv->req.name, mv->uid, "move", mv->pending[0],
                                     place_targets_pidfd(&mv->t, mv->pending[0]), on_move_placed, mv);
        if (r < 0) {
                snprintf(why, len, "cannot move the processes into class %s: %s", c->name, strerror(-r));
                return r;
        }
        mv->phase = MOVE_PLACING;
        (void) sd_event_source_set_enabled(mv->slice, SD_EVENT_OFF);
        return 0;
}

/* The next of the rest is in the job (or not: it exited, or it was not the process checked). */
static void attach_next(struct move *mv) {
        if (mv->next >= mv->n_pending) {
                mv->phase = mv->req.tree && mv->rounds < PLACE_MOVE_ROUNDS ? MOVE_ROUND : MOVE_DONE;
                mv->cursor = 0;
                mv->round_first = mv->t.n;
                mv->rounds++;
        } else
                mv->phase = MOVE_ATTACH;
        (void) sd_event_source_set_enabled(mv->slice, SD_EVENT_ON);
}

static void on_move_attached(void *userdata, int r, size_t moved) {
        struct move *mv = userdata;

        if (r == -ECANCELED)
                return; /* the daemon stops: place_moves_free() frees the move */
        attach_next(mv);
}

/* One at a time, so that a move of many yields to everything else between its writes. */
static int step_attach(struct move *mv, char *why, size_t len) {
        struct job *j = move_job(mv);
        pid_t pid;
        int r;

        if (!j) {
                snprintf(why, len, "job %" PRIu64 " ended while its processes were moved", mv->job_id);
                return -ESRCH;
        }
        if (mv->next >= mv->n_pending) {
                attach_next(mv);
                return 0;
        }
        pid = mv->pending[mv->next++];
        r = jobs_attach_async(mv->api->jobs, j, &pid, &(int){ place_targets_pidfd(&mv->t, pid) }, 1, on_move_attached,
                              mv);
        if (r < 0) {
                snprintf(why, len, "cannot move process %d into job %" PRIu64 ": %s", (int) pid, j->id, strerror(-r));
                return r;
        }
        mv->phase = MOVE_ATTACHING;
        (void) sd_event_source_set_enabled(mv->slice, SD_EVENT_OFF);
        return 0;
}

/* Children forked while the processes moved stay where their parent was: a walk again, and those outside move. */
static int step_round(struct move *mv, char *why, size_t len) {
        struct job *j = move_job(mv);
        int r;

        if (!j) {
                mv->phase = MOVE_DONE; /* move_done() says why */
                return 0;
        }
        r = place_targets_walk(&mv->t, &mv->cursor, 1, why, len);
        if (r == 0)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* The job is there; what cannot be added now stays where it is. */
                log_warning("Job %" PRIu64 ": %s; left where it is", mv->job_id, why);
                mv->phase = MOVE_DONE;
                return 0;
        }
        /* Those born inside the job (of a parent moved already) need nothing. */
        r = move_pend(mv, mv->round_first, j->path);
        if (r < 0)
                return r;
        mv->phase = mv->n_pending > 0 ? MOVE_ATTACH : MOVE_DONE;
        return 0;
}

static int step(struct move *mv, char *why, size_t len) {
        switch (mv->phase) {
        case MOVE_CHECK:
                return step_check(mv, why, len);
        case MOVE_WALK:
                return step_walk(mv, why, len);
        case MOVE_PLACE:
                return step_place(mv, why, len);
        case MOVE_PLACING:
        case MOVE_ATTACHING:
                break;
        case MOVE_ATTACH:
                return step_attach(mv, why, len);
        case MOVE_ROUND:
                return step_round(mv, why, len);
        case MOVE_DONE:
                break;
        }
        return 0;
}

static void move_done(struct move *mv) {
        struct job *j = move_job(mv);
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        if (!j) {
                move_finish(mv, control_error("job %" PRIu64 " ended while its processes were moved", mv->job_id));
                return;
        }
        (void) place_targets_pids(&mv->t, 0, NULL, &pids, &n);
        move_finish(mv, placed(mv->api, j, pids, n));
}

static int on_slice(sd_event_source *s, void *userdata) {
        struct move *mv = userdata;
        uint64_t end = now_usec(CLOCK_MONOTONIC) + PLACE_SLICE_USEC;
        char why[256] = "";

        do {
                int r = step(mv, why, sizeof(why));

                if (r < 0) {
                        move_finish(mv, r == -ENOMEM ? control_error("out of memory") : control_error("%s", why));
                        return 0;
                }
        } while (mv->phase != MOVE_DONE && mv->phase != MOVE_PLACING && mv->phase != MOVE_ATTACHING &&
                 now_usec(CLOCK_MONOTONIC) < end);
        if (mv->phase == MOVE_DONE)
                move_done(mv);
        return 0;
}

json_object *place_move(struct api *api, uint64_t client, const struct ucred *peer, const struct pw_request *req) {
        const struct pw_job_class *c;
        struct move *mv;
        json_object *err;
        int r;

        assert(api && peer && req && req->n_pids > 0);
        err = check_request(api, peer->uid, req, &c);
        if (err)
                return err;
        mv = calloc(1, sizeof(*mv));
        if (!mv)
                return control_error("out of memory");
        *mv = (struct move){ .api = api, .client = client, .uid = peer->uid, .req = *req, .next_move = api->moves };
        if (mv->next_move)
                mv->next_move->prev_move = mv;
        api->moves = mv;
        r = context_init(api, peer, false, &mv->x);
        if (r >= 0) {
                place_targets_init(&mv->t, PROC_ROOT, &mv->x.caller);
                r = sd_event_add_defer(api->event, &mv->slice, on_slice, mv);
        }
        if (r < 0) {
                move_free(mv);
                return control_error("cannot start the move: %s", strerror(-r));
        }
        /* A slice at each turn of the loop (a defer source is ONESHOT by default), others first: a move goes
         * on only when nothing else is waiting. */
        (void) sd_event_source_set_enabled(mv->slice, SD_EVENT_ON);
        (void) sd_event_source_set_priority(mv->slice, SD_EVENT_PRIORITY_IDLE);
        (void) sd_event_source_set_description(mv->slice, "move-slice");
        return CONTROL_LATER;
}
