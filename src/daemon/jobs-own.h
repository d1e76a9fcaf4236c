/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the job registry (jobs.c, jobs-place.c, jobs-report.c): the
 * placements and attaches under way, and what its files share.  The rest
 * of the daemon sees jobs.h.
 *
 * Errors: negative errno.
 */

#include "jobs.h"
#include "log.h"

/* The journal fields of a message about job j (PAGEWARDEN_JOB=, _CLASS=, _ACTION=). */
#define JOB_FIELDS(j, act) \
        (&(const struct log_fields){ .job = (j)->name, .job_id = (j)->id, .klass = (j)->class, .action = (act) })

/* A placement under way: the backend takes its time (systemd starts a scope, the kernel moves the process), the
 * loop does not wait. */
struct job_placing {
        struct jobs *js;
        struct cgroup_job_label label;
        char class[POLICY_NAME_MAX + 1];
        pid_t pid;
        int pidfd;         /* pid's process, for the check after the write (-1: none) */
        jobs_placed_fn fn; /* NULL: its caller went away, the job is still made */
        void *userdata;
        struct backend_placing *bp; /* the backend's, while it works */
        struct job_placing *next;
};

/* Processes on their way into a job (jobs_attach_async()). */
struct job_attaching {
        struct jobs *js;
        char *path;
        pid_t *pids;
        int *pidfds; /* ours (dup'ed) */
        size_t n;
        jobs_attached_fn fn; /* NULL: nobody waits */
        void *userdata;
        struct backend_attaching *ba; /* the backend's, while it works */
        struct job_attaching *prev, *next;
};

/* ---- jobs.c ---- */

/* Registers a job in a cgroup that holds it (or held it: then it ends at once); unit: a unit placed by rule, whose
 * cgroup is path (NULL: a job of the daemon's own).  The owner is told (jobs_changed_fn). */
int job_add(struct jobs *js, const struct cgroup_job_label *label, const char *class, const char *path,
            const char *unit, struct job **ret);
/* Frees a placement, off js->placings (or never on it). */
void placing_free(struct job_placing *pl);
/* Takes an attach off js->attachings, cancels what its backend does for it, frees it. */
void attaching_free(struct job_attaching *at);

/* ---- jobs-report.c ---- */

/* A job j that counts its I/O at its class joined it (it is on the list) or left it (it is off). */
void class_io_changed(struct jobs *js, struct job *j, bool joined);
/* The end-of-job report, once per job: from end (NULL: its cgroup was gone before it could be read), logged and
 * kept in the history. */
void job_report(struct jobs *js, struct job *j, const struct cgroup_job_counters *end);
/* The report, from the counters as they are now (the job's cgroup is empty, not yet released). */
void job_report_now(struct jobs *js, struct job *j);
