/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What a job cost the protected applications: their refaults (evicted pages
 * needed again), major faults and memory stall time while it ran, against
 * their rates while no job ran at all (the idle time since the daemon
 * started).  The samples come from the manager (appcost_sample_fn: it knows
 * where each application's cgroup is); this module keeps the idle baseline
 * and makes the report's "applications" list.
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

struct app_idle {
        char name[POLICY_NAME_MAX + 1];
        uint64_t refaults, majfaults, stall_usec, usec; /* totals over the idle time, and its length */
};

struct appcost {
        appcost_sample_fn sample; /* NULL: nothing is measured */
        void *userdata;
        bool idle;                     /* no job runs now */
        uint64_t idle_since_usec;      /* CLOCK_MONOTONIC */
        struct app_sample *idle_start; /* at idle_since_usec */
        size_t n_idle_start;
        struct app_idle *totals;
        size_t n_totals;
};

void appcost_init(struct appcost *a, appcost_sample_fn sample, void *userdata);
void appcost_done(struct appcost *a);
/* Jobs run (true) or none does (false): the idle baseline is accounted on each change. */
void appcost_set_running(struct appcost *a, bool running);
/* A job's start: the applications now (*ret freed by the caller; NULL, 0 if none or out of memory). */
void appcost_snapshot(struct appcost *a, struct app_sample **ret, size_t *ret_n);
/*
 * At the job's end, after runtime_usec: [{"name", "refaults", "majfaults", "stall_us", and per minute
 * during the job and while no job ran ("idle_..._per_min", null before any idle time)}], for at most
 * APPCOST_REPORT_MAX applications: those the job cost most (stall time, then refaults, then major
 * faults), in the policy's order; *ret_omitted says how many more there were.  The history keeps every
 * report and writes them all to its file at each job's end: listing all of 180 applications made 100
 * reports take 34 MB.
 */
#define APPCOST_REPORT_MAX 8
json_object *appcost_report(struct appcost *a, const struct app_sample *start, size_t n, uint64_t runtime_usec,
                            size_t *ret_omitted);
