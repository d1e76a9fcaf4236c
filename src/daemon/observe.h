/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Observation: which work that no job holds evicts the protected
 * applications, so that `pagewardenctl suggest` can name it and the rule
 * that would place it.  While anything is protected, every
 * OBSERVE_PERIOD_USEC (jobs or not, governor or not) it reads each
 * protected application's memory counters, and memory.stat and io.stat of
 * every other unit and leaf cgroup of the tree (not pagewarden's own, not a
 * job's, not a protected one's or its ancestors').  A window in which an
 * application was harmed names the cgroups that streamed in it, and for
 * those without a unit a rule could name (a login session, systemd-run's
 * run-*, a plain cgroup) their processes with the most I/O.  What evidence.c
 * decides; consecutive harmful windows (less than OBSERVE_EPISODE_GAP calm
 * ones between them) are one episode, kept in a history of its own
 * (history.c: OBSERVE_EPISODES, history_days) in the file beside the job
 * history.
 *
 * Errors: negative errno, logged here (the daemon layer).
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "cgroup.h"
#include "history.h"
#include "policy.h"

#define OBSERVE_PERIOD_USEC (UINT64_C(10) * 1000000)
#define OBSERVE_EPISODE_GAP 6 /* calm windows (a minute) that end an episode */
#define OBSERVE_EPISODES 128  /* kept, at most (and history_days) */
#define OBSERVE_CGROUPS 1024  /* looked at per window, at most */
#define OBSERVE_DEPTH 8       /* levels below the mount */
#define OBSERVE_PROCESSES 64  /* of one suspect, read for its programs */
/* A window reads the applications in slices of this much time, a turn of the loop each. */
#define OBSERVE_SLICE_USEC (UINT64_C(5) * 1000)

/* A protected application where it runs now. */
struct observe_app {
        char name[POLICY_NAME_MAX + 1];
        char *path; /* below the mount: "/system.slice/db.service" */
};

/*
 * What the observer must know from the daemon each window: the protected
 * applications (*ret_apps, *ret_n_apps) and the cgroups it must not look
 * into (*ret_skip: pagewarden's tree, every job's cgroup), all allocated
 * (freed by the observer).
 */
typedef int (*observe_scope_fn)(void *userdata, struct observe_app **ret_apps, size_t *ret_n_apps, char ***ret_skip,
                                size_t *ret_n_skip);

struct observe_cgroup; /* one cgroup's counters at the last window */
struct observe_round;  /* a window under way */
struct observe_sample; /* one application's */

struct observe {
        sd_event *event;
        struct cgroup_engine *engine;
        const char *procdir; /* "/proc" unless a test says otherwise */
        observe_scope_fn scope;
        void *userdata;
        uint64_t period_usec;
        uint64_t slice_usec; /* 0: OBSERVE_SLICE_USEC (a test's: shorter) */

        struct history episodes;
        bool have_history;
        json_object *open; /* the episode going on, not in the history yet */
        uint64_t next_id;
        unsigned calm; /* windows without harm since the open episode's last */

        struct observe_sample *apps;
        size_t n_apps;
        struct observe_cgroup *cgroups; /* sorted by path */
        size_t n_cgroups;
        uint64_t last_realtime; /* seconds since the epoch, at the last window */
        uint64_t prev_realtime; /* and at the one before (the last window's start) */
        bool last_harmful;      /* the last window harmed an application: its streaming is in the episode */

        sd_event_source *timer;
        struct observe_round *round; /* the window under way (its slices: step) */
        sd_event_source *step;
        /* For status and the benchmarks */
        uint64_t windows, harmful, cpu_usec;
        bool truncated_said;
};

/* path: the episodes' file (NULL: in memory).  Does not start: observe_update() does. */
int observe_init(struct observe *o, sd_event *event, struct cgroup_engine *engine, observe_scope_fn scope,
                 void *userdata, const char *path, uint64_t max_age_sec);
/* The episode going on goes into the history, which is written. */
void observe_done(struct observe *o);
/* Observes while on (something is protected), not otherwise; max_age_sec: how long episodes are kept. */
void observe_update(struct observe *o, bool on, uint64_t max_age_sec);
/* One window now, whole (the tests; the timer's windows are read in slices of OBSERVE_SLICE_USEC). */
void observe_window(struct observe *o);
/* The episodes kept, oldest first, and the one going on: a new array. */
json_object *observe_episodes(const struct observe *o);
/* Each suspect over the episodes, the largest max (evidence_summary()). */
json_object *observe_summary(const struct observe *o, size_t max);
/* For status: {"period_s", "windows", "harmful", "cgroups", "cpu_us", "episodes"}. */
json_object *observe_status(const struct observe *o);
