/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The job registry: each job is a cgroup (a slot, or a systemd scope) that
 * holds bulk work of one class.  A job is placed (its processes moved in),
 * watched (inotify on its cgroup.events) and, when its last process is gone,
 * released: on the cgroupfs backend the worker reclaims its page cache and
 * keeps the slot for the next job; on systemd, systemd removes the scope.
 * A restarted daemon adopts the jobs an earlier one left.
 *
 * The owner learns of every job that came or went through the changed
 * hook (the governor and the status depend on the set of jobs).  Errors:
 * negative errno; what happens to jobs is recorded in the action log.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "appcost.h"
#include "backend.h"
#include "history.h"
#include "policy.h"
#include "worker.h"

struct jobs;

/* What the governor did to a job's class since the daemon started, and the signals it did not act on (the jobs
 * could not have caused them); a job's report gives the difference over its run. */
struct job_governor_counts {
        uint64_t tightened, frozen, undone, held_off;
};

struct job {
        struct jobs *jobs;
        uint64_t id;
        char name[POLICY_NAME_MAX + 1];
        char class[POLICY_NAME_MAX + 1];
        char by[CGROUP_JOB_BY_MAX + 1]; /* how it was placed ("" if unknown: adopted from an old daemon) */
        char *path;                     /* its cgroup, relative to the cgroup2 mount */
        char *unit;                     /* a unit placed by rule: the unit (its cgroup is systemd's), else NULL */
        uid_t uid;
        uint64_t started_usec;        /* CLOCK_REALTIME */
        sd_event_source *watch;       /* inotify on cgroup.events (or a timer) */
        sd_event_source *first_check; /* a job that ended before it was watched */
        sd_event_source *gap;         /* a unit's cgroup is empty: it ends unless a process comes back */
        bool gap_passed;              /* ... and it stayed empty for JOBS_UNIT_GAP_USEC */
        /* A unit's counters, read every JOBS_UNIT_SAMPLE_USEC and when its cgroup is first seen empty:
         * systemd removes the cgroup as soon as it is empty, often before the daemon can read it, and the
         * report then has these, as of last_usec (CLOCK_REALTIME), rather than nothing. */
        sd_event_source *sample;
        struct cgroup_job_counters last;
        uint64_t last_usec;
        bool have_last;
        bool releasing;
        bool reported;                    /* its end-of-job report is made */
        bool adopted;                     /* from an earlier daemon: its counters start at adoption */
        struct cgroup_job_counters start; /* at its start (or adoption), for the report */
        /* A job in a systemd scope has no io controller of its own: its I/O (writeback too) is charged to its
         * class's cgroup, which counts it exactly while it is the only such job there.  class_io: that holds
         * since class_io_usec (CLOCK_REALTIME), when the class had read and written class_io_read/_written. */
        bool class_io;
        uint64_t class_io_usec, class_io_read, class_io_written;
        /* What status shows of it (status.c), as read at figures.usec (CLOCK_MONOTONIC; 0: not read yet). */
        struct job_figures {
                uint64_t usec;
                bool have; /* its cgroup could be read */
                bool frozen;
                struct cgroup_job_state s;
        } figures;
        uint64_t status_gen;                 /* the last of status's sliced texts that has it (status.c) */
        struct app_snapshot *apps;           /* the protected applications at its start (appcost_snapshot) */
        struct job_governor_counts governor; /* the governor's on its class so far, at its start */
        struct job *next;
};

/* A job of class came (ended false) or went (ended true: it is off the list). */
typedef void (*jobs_changed_fn)(void *userdata, const char *class, bool ended);

/* What the end-of-job reports are made of, and where they go; each may be NULL (the tests leave them out). */
struct jobs_report {
        struct history *history; /* where end-of-job reports go (NULL: nowhere) */
        struct appcost *appcost; /* what a job cost the protected applications (NULL: not measured) */
        /* The governor's actions on a class so far (userdata: jobs_init's); NULL: none counted. */
        void (*class_actions)(void *userdata, const char *class, struct job_governor_counts *ret);
        /* What it believes now, for the report (govern_beliefs_json); NULL: nothing. */
        json_object *(*governor_beliefs)(void *userdata, const char *class);
};

struct jobs_class_count {
        char class[POLICY_NAME_MAX + 1];
        unsigned n;
};

struct jobs {
        sd_event *event;
        struct backend *backend;
        struct action_log *log;
        jobs_changed_fn changed;
        void *userdata;
        struct job *list;
        unsigned n;
        /* Jobs per class, kept as jobs come and go (the governor asks every tick): classes with jobs only. */
        struct jobs_class_count *counts;
        size_t n_counts, counts_allocated;
        struct job_placing *placings;     /* under way */
        struct job_attaching *attachings; /* processes on their way into jobs */
        uint64_t next_id;
        /* The jobs that ended, and those of them OOM-killed, since the daemon started (for status). */
        uint64_t n_ended, n_oom_killed;
        struct jobs_report report;
        const char *procdir; /* "/proc"; tests set a fake one */
        /* How jobs_recheck() moves a process back to cgroup (tests record it instead). */
        int (*move_back)(struct jobs *js, const char *cgroup, pid_t pid);
};

/* report: NULL for none. */
void jobs_init(struct jobs *js, sd_event *event, struct backend *backend, struct action_log *log,
               jobs_changed_fn changed, void *userdata, const struct jobs_report *report);
/* Forgets every job (their cgroups stay: a restarted daemon adopts them). */
void jobs_done(struct jobs *js);

/* By id, or by name. */
struct job *jobs_find(const struct jobs *js, const char *id_or_name);
struct job *jobs_find_id(const struct jobs *js, uint64_t id);
unsigned jobs_in_class(const struct jobs *js, const char *class);

/* The end of a placement: r, and the new job (NULL on error). */
typedef void (*jobs_placed_fn)(void *userdata, int r, struct job *j);
/* A new job of class c for uid holding pid; by says how it was placed ("run", "move", a rule); limits: the
 * job's own (NULL: what the class gives each job).  pidfd (borrowed; -1: none) holds pid's process: once
 * the pid is written, jobs_recheck() undoes a write that was not about it (the job is then empty).  The
 * loop does not wait: fn comes later, once (never before this returns 0; not at all if this fails); with
 * -ECANCELED from jobs_done() if the daemon stops first. */
int jobs_place_async(struct jobs *js, const struct pw_job_class *c, const struct pw_job_limits *limits,
                     const char *name, uid_t uid, const char *by, pid_t pid, int pidfd, jobs_placed_fn fn,
                     void *userdata);
/*
 * Pids are written as numbers (cgroup.procs, systemd's PIDs): after pid was
 * written into path (no later than before_ticks, proc_now_ticks()) as the
 * process pidfd holds, a process that took the pid of one that had ended
 * (proc_written_other()) and now sits in path is moved back to its parent's
 * cgroup, where a process starts, and the action is logged.  true when the
 * write was not about the process pidfd holds.
 */
bool jobs_recheck(struct jobs *js, const char *path, pid_t pid, int pidfd, uint64_t before_ticks);
/* The end of a jobs_attach_async: r (-ECANCELED: the daemon stops), and how many of the processes moved. */
typedef void (*jobs_attached_fn)(void *userdata, int r, size_t moved);
/*
 * More processes into job j, each held by pidfds[i] (borrowed; -1: none) and
 * checked through it after its write (jobs_recheck()).  The loop does not
 * wait for PID 1: fn (NULL: nobody waits) comes later, once, never before
 * this returns 0.
 */
int jobs_attach_async(struct jobs *js, const struct job *j, const pid_t *pids, const int *pidfds, size_t n,
                      jobs_attached_fn fn, void *userdata);
/* The attaches userdata asked for go on without it: fn is not called. */
void jobs_attach_forget(struct jobs *js, void *userdata);
/* The placements userdata asked for go on without it: their jobs are made, fn is not called. */
void jobs_place_forget(struct jobs *js, void *userdata);
/* Is pid being placed? */
bool jobs_placing(const struct jobs *js, pid_t pid);
/* A unit placed by rule that runs (in path) becomes a job of class c, if it is not one yet. */
int jobs_add_unit(struct jobs *js, const struct pw_job_class *c, const char *unit, const char *path, const char *by,
                  struct job **ret);
/* The job of a unit, or NULL. */
struct job *jobs_find_unit(const struct jobs *js, const char *unit);
/* Forgets a job without touching its cgroup (a unit whose rule left the policy). */
void jobs_forget(struct jobs *js, struct job *j);

/* After a restart (or a crash): the jobs an earlier instance left, and thaws every class. */
int jobs_adopt(struct jobs *js);
