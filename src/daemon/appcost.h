/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What a job cost the protected applications: their refaults (evicted pages
 * needed again), major faults and memory stall time while it ran, against
 * their rates while no job ran at all (the idle time since the daemon
 * started).  The samples come from the manager (appcost_sample_fn: it knows
 * where each application's cgroup is); this module keeps the idle baseline
 * and makes the report's "applications" list.
 *
 * A job's start and end refer to a snapshot of every application, shared
 * with the jobs that started or ended less than share_usec before (the
 * governor's window): 2,000 jobs placed at once read the applications once
 * a window, not 2,000 times (issue 27: 5 reads per application per job,
 * 900 per move at 180 applications), and keep one copy.
 *
 * Errors: out of memory gives NULL (no snapshot: the job's report has no
 * "applications"), never an error to the job.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct app_sample {
        char name[POLICY_NAME_MAX + 1];
        uint64_t refaults, majfaults, stall_usec;
};

/* Fills at most max samples, one per protected application whose cgroup is there now; returns how many. */
typedef size_t (*appcost_sample_fn)(void *userdata, struct app_sample *out, size_t max);

/* The applications' names, in the order they were sampled: shared (counted) by every snapshot taken while the
 * protected applications stay the same, so that a snapshot holds counters only. */
struct app_roster {
        unsigned refs;
        size_t n;
        char (*names)[POLICY_NAME_MAX + 1];
};

struct app_counters {
        uint64_t refaults, majfaults, stall_usec;
};

/* The applications' counters at one moment (c[i] is roster->names[i]'s); counted references (the jobs that
 * started then).  24 bytes an application: 2,000 jobs started one by one keep about as many snapshots. */
struct app_snapshot {
        unsigned refs;
        uint64_t usec; /* CLOCK_MONOTONIC */
        struct app_roster *roster;
        size_t n;
        struct app_counters c[];
};

static inline const char *app_snapshot_name(const struct app_snapshot *s, size_t i) {
        return s->roster->names[i];
}

struct app_snapshot *app_snapshot_ref(struct app_snapshot *s);
/* Drops a reference; NULL. */
struct app_snapshot *app_snapshot_unref(struct app_snapshot *s);

struct app_idle {
        char name[POLICY_NAME_MAX + 1];
        uint64_t refaults, majfaults, stall_usec, usec; /* totals over the idle time, and its length */
};

struct appcost {
        appcost_sample_fn sample; /* NULL: nothing is measured */
        void *userdata;
        uint64_t share_usec;             /* a snapshot younger than this is taken again as it is */
        struct app_snapshot *recent;     /* the last one taken (a reference) */
        struct app_roster *roster;       /* the names of the last one taken (a reference) */
        bool idle;                       /* no job runs now */
        uint64_t idle_since_usec;        /* CLOCK_MONOTONIC */
        struct app_snapshot *idle_start; /* at idle_since_usec */
        struct app_idle *totals;
        size_t n_totals;
};

void appcost_init(struct appcost *a, appcost_sample_fn sample, void *userdata, uint64_t share_usec);
void appcost_done(struct appcost *a);
/* A new share_usec (a reload changed the window). */
void appcost_set_share(struct appcost *a, uint64_t share_usec);
/* Jobs run (true) or none does (false): the idle baseline is accounted on each change. */
void appcost_set_running(struct appcost *a, bool running);
/* The applications now, or as they were less than share_usec ago (a reference: app_snapshot_unref() it);
 * NULL if nothing is measured, no application is there or out of memory. */
struct app_snapshot *appcost_snapshot(struct appcost *a);
/*
 * At the job's end, after runtime_usec: [{"name", "refaults", "majfaults", "stall_us", and per minute
 * during the job and while no job ran ("idle_..._per_min", null before any idle time)}], for at most
 * APPCOST_REPORT_MAX applications: those the job cost most (stall time, then refaults, then major
 * faults), in the policy's order; *ret_omitted says how many more there were.  The history keeps every
 * report and writes them all to its file at each job's end: listing all of 180 applications made 100
 * reports take 34 MB.
 */
#define APPCOST_REPORT_MAX 8
json_object *appcost_report(struct appcost *a, const struct app_snapshot *start, uint64_t runtime_usec,
                            size_t *ret_omitted);
