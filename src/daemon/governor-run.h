/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Governing: runs the pure governor (governor.h) while jobs run and
 * something is protected, or while it still has limits to give back.  It
 * arms the PSI triggers (pressure.h), samples the protected applications
 * once per window, feeds the governor, applies its actions through the
 * backend, and sets the "auto" protection sizes (protect.h).  When it is
 * not needed it keeps no timer and no trigger: an idle daemon sleeps.
 *
 * Its functions are govern_* (struct govern); the decisions it applies
 * are governor.c's, governor_*.
 *
 * Errors are logged and recorded in the action log: the governor keeps
 * going with what it has.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "backend.h"
#include "cgroup-discover.h"
#include "classes.h"
#include "governor.h"
#include "jobs.h"
#include "policy.h"
#include "protect.h"
#include "worker.h"

#define GOVERN_LATENCIES 256
/* The reaction latency's histogram: its buckets' upper bounds in governor-run.c, from 0.25 ms (a reaction
 * on an idle machine takes less than 1 ms) to 10 s (a reclaim under heavy pressure). */
#define GOVERN_LATENCY_BUCKETS 15

/* What the governor did to a class since the daemon started (its own counters start again with it). */
struct govern_counts {
        uint64_t tightened, relaxed, frozen;
        uint64_t undone; /* tightenings given back at once because they did not help */
};

/* A protected application watched while the governor runs. */
struct govern_watch {
        char *name;
        char *path;               /* relative to the mount */
        bool auto_size;           /* min: or low: auto */
        struct governor_auto est; /* what "auto" estimates it needs, and gives it */
        uint64_t applied;         /* the "auto" size last set (est.gets when it was applied) */
        int fd[2];                /* PSI triggers: memory.pressure, io.pressure */
        sd_event_source *src[2];
        uint64_t arming[2]; /* the worker's token while it arms that trigger (0: none) */
        bool sampled;
        struct governor_sample last;
        uint64_t last_usec; /* when last was read (CLOCK_MONOTONIC) */
        /* Its samples at two recent ticks a window apart: ref[0], one to two windows old, is what a signal is
         * attributed against (a trigger fires at any moment, also just after a tick). */
        struct governor_sample ref[2];
        uint64_t ref_usec[2];
        uint64_t held_off_usec; /* when a signal of its that the jobs cannot cause was last logged */
};

/* The running jobs' counters at two recent ticks, as a watch's ref. */
struct govern_jobs_refs {
        struct governor_jobs_sample now, ref[2];
        uint64_t ref_usec[2];
};

/* The applications a tick reads at most: with more, each is read every few ticks (its signals' thresholds
 * scaled to the windows in between, governor_sample.windows), so that a tick's reads do not grow with the
 * number of protected applications. */
#define GOVERN_SAMPLES_PER_TICK 32

struct govern {
        /* What it works with (owned by the manager). */
        sd_event *event;
        struct backend *backend;
        const struct cgroup_mount *mount;
        const struct pw_policy *policy;
        const struct classes *classes; /* the classes as they are in force (io entries where their devices are) */
        const struct pw_settings *settings;
        uint64_t ram_bytes;
        uint64_t reserve; /* what "auto" leaves to everything unprotected (settings: reserve) */
        bool lists_age;   /* the LRU lists say what is in use (no multi-generational LRU) */
        struct jobs *jobs;
        struct protect *protect;
        struct action_log *log;

        bool stopping; /* no activation any more */
        bool pausing;  /* between govern_pause and govern_resume */
        bool kept_on;  /* the parked triggers are on: the governor ran when a reload paused it */
        bool active;
        uint64_t sampled_usec; /* when this run's last tick read the applications; 0: not yet */
        struct governor gov;
        sd_event_source *tick;
        struct govern_watch *watches;
        size_t n_watches;
        /* A protected unit's cgroup was being asked of PID 1 when the watches were opened (nothing waits for the
         * answer): each tick looks again for those not watched, until none is asked. */
        bool asking;
        size_t next_watch;            /* the first watch the next tick reads (they are read in turns) */
        struct governor_auto **autos; /* room for each watch's estimate (apply_auto's shares, each tick) */
        uint64_t fixed_min;           /* the policy's fixed memory.min, summed (taken from what auto may have) */
        /* The watches of its last run, their triggers open but off: the next start (the next job, a reload)
         * takes those whose application and cgroup are the same, and closes the others off the loop. */
        struct govern_watch *parked;
        size_t n_parked;
        uint64_t arm_token; /* the last token given to a trigger the worker arms */
        int sys_fd;         /* the machine's memory "full" trigger */
        sd_event_source *sys_src;
        bool triggered; /* a trigger fired since the last step */
        char why[160];
        ssize_t trig_watch; /* the watch whose trigger fired (-1: the machine's) */
        bool trig_io;       /* on io.pressure */
        struct govern_jobs_refs jobs_refs;

        /* Signals the jobs could not have caused (governor_jobs_can_cause): not acted on. */
        uint64_t held_off;
        char held_off_why[256];
        uint64_t held_off_machine_usec; /* when the machine's trigger was last logged so */

        /* For status. */
        uint64_t actions;
        uint64_t latencies[GOVERN_LATENCIES]; /* trigger wake-up to the limit's write, usec (a ring) */
        unsigned n_latencies;
        uint64_t latency_buckets[GOVERN_LATENCY_BUCKETS]; /* how many in each bucket (not cumulative) */
        uint64_t latency_sum_usec;
        uint64_t write_usec_max; /* the longest memory.high write (its reclaim) */
        /* Per class, the counts of the governor's earlier runs (each start makes its classes anew). */
        struct govern_tally {
                char name[POLICY_NAME_MAX + 1];
                struct govern_counts counts;
        } * tallies;
        size_t n_tallies, allocated_tallies;
};

void govern_init(struct govern *g);
/* Frees what it keeps for status (call after govern_stop()). */
void govern_done(struct govern *g);
/* Starts or stops the governor as the jobs and the policy need it now. */
void govern_update(struct govern *g);
/* Stops it: every class back to the policy's limits, thawed. */
void govern_stop(struct govern *g);
/* Around a reload, whose new policy the governor's state cannot point into: stopped, then started again as
 * govern_update would.  The triggers of the applications it watches before and after stay on throughout (not
 * off and on again: three system calls each), and the first sample is the next tick's. */
void govern_pause(struct govern *g);
void govern_resume(struct govern *g);
/* A memory.high write the worker did for the governor (userdata: the governor): its latency, a failure. */
void govern_write_done(void *userdata, const struct worker_task *t);
json_object *govern_json(const struct govern *g);
/*
 * Whether the whole machine's memory pressure (/proc/pressure/memory full)
 * must be watched: only when no protected application has a PSI trigger of
 * its own.  The applications' own pressure is what the governor acts on; a
 * throttled job stalls the machine by itself (its reclaim at memory.high is
 * "full" pressure), and acting on that tightened jobs while no application
 * was in distress, slowing them for nothing.
 */
bool govern_needs_machine_trigger(const struct govern *g);
/* What "auto" estimates the protected application name needs and gives it, while the governor runs; NULL
 * otherwise (or for an entry that is not auto). */
const struct governor_auto *govern_auto_of(const struct govern *g, const char *name);
/* While it runs, the governor reads every protected application at each tick: when its last tick is at most
 * max_age_usec before now_usec, fn(userdata, name, sample) for each application it read then, and true; false,
 * calling nothing, otherwise (it does not run, or has not ticked yet: the caller reads them itself).  A job's start and
 * end take these rather than reading the applications again. */
bool govern_recent_samples(const struct govern *g, uint64_t now_usec, uint64_t max_age_usec,
                           void (*fn)(void *userdata, const char *name, const struct governor_sample *s),
                           void *userdata);
/* What the governor did to class since the daemon started (zeros for a class it never governed). */
void govern_class_counts(const struct govern *g, const char *class, struct govern_counts *ret);
/* What the governor believes now, for a job of class's end-of-job report: {"auto": [{"name", "needs", "gets",
 * "source"}], "reserve", "class_last_action", "last_held_off"} (members null when there is nothing to say). */
json_object *govern_beliefs_json(const struct govern *g, const char *class);
