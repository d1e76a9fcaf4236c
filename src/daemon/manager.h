/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's event wiring: the sd-event loop with signals, the control
 * socket, an inotify watch on each job's cgroup.events, and the worker that
 * releases ended jobs.  The manager owns the running configuration; a reload
 * builds a complete new one first and replaces the running one only when it
 * is valid.
 */

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "backend.h"
#include "cgroup-discover.h"
#include "cgroup.h"
#include "control.h"
#include "governor.h"
#include "policy.h"
#include "settings.h"
#include "worker.h"

struct job {
        struct manager *manager;
        uint64_t id;
        char name[POLICY_NAME_MAX + 1];
        char class[POLICY_NAME_MAX + 1];
        char *path; /* the slot, relative to the cgroup2 mount */
        uid_t uid;
        uint64_t started_usec; /* CLOCK_REALTIME */
        sd_event_source *watch;       /* inotify on cgroup.events */
        sd_event_source *first_check; /* a job that ended before it was watched */
        bool releasing;
        struct job *next;
};

#define MANAGER_ACTIONS 32
#define MANAGER_LATENCIES 256

/* A protected application the governor watches while jobs run. */
struct gov_watch {
        char *name;
        char *path; /* relative to the mount */
        bool auto_min, auto_low;
        uint64_t auto_bytes; /* the protection "auto" gives it now: its usage while jobs run */
        int fd[2];           /* PSI triggers: memory.pressure, io.pressure */
        sd_event_source *src[2];
        bool sampled;
        uint64_t pgsteal, refaults, majfaults, swap, low_events;
};

struct action {
        uint64_t usec; /* CLOCK_REALTIME */
        char *message;
};

struct manager {
        sd_event *event;
        char *config_path;
        bool config_optional; /* the default path: a missing file means defaults */
        struct policy_context ctx;
        struct pw_settings settings;
        struct pw_policy policy;
        struct cgroup_mount mount;
        struct cgroup_engine *engine;
        struct worker *worker;
        struct backend *backend;
        struct control *control;
        struct job *jobs;
        unsigned n_jobs;
        uint64_t next_job_id;
        struct action actions[MANAGER_ACTIONS]; /* a ring, oldest overwritten */
        unsigned n_actions;
        unsigned reloads, failed_reloads;
        const char *state_dir;

        /* The pressure governor (manager-governor.c): active only while jobs
         * run and something is protected, or while it has limits to give back. */
        struct governor gov;
        bool gov_active;
        sd_event_source *gov_tick;
        struct gov_watch *watches;
        size_t n_watches;
        int sys_fd;
        sd_event_source *sys_src;
        bool stopping;      /* no governor activation any more */
        bool gov_triggered; /* a trigger fired since the last step */
        char gov_why[160];
        uint64_t gov_actions;
        uint64_t latencies[MANAGER_LATENCIES]; /* trigger wake-up to the limit's write, usec */
        unsigned n_latencies;
        uint64_t write_usec_max;                /* the longest memory.high write (its reclaim) */
};

int manager_new(const char *config_path, bool config_optional, const struct policy_context *ctx,
                struct pw_settings *settings, struct pw_policy *policy, const struct cgroup_mount *mount,
                struct manager **ret);
struct manager *manager_free(struct manager *m);
static inline void manager_freep(struct manager **m) {
        manager_free(*m);
}

/* Applies the policy, adopts the job tree, opens the control socket. */
int manager_start(struct manager *m);
/* Runs the event loop until SIGTERM or SIGINT; then stops cleanly. */
int manager_run(struct manager *m);

/* Loads the configuration again; the running one stays when the new one is invalid.
 * On -EINVAL, *ret_errors (if given) holds the diagnostics as text. */
int manager_reload(struct manager *m, char **ret_errors);

/* Logs a line and keeps it among the recent actions shown by status. */
void manager_action(struct manager *m, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct job *manager_find_job(struct manager *m, const char *id_or_name);
unsigned manager_class_jobs(struct manager *m, const char *class);
/* A new job of class for uid holding pids (those that still exist); *ret_moved of them moved. */
int manager_place(struct manager *m, const char *class, const char *name, uid_t uid, const pid_t *pids, size_t n,
                  struct job **ret, size_t *ret_moved);

/* manager-governor.c */
void manager_governor_update(struct manager *m); /* after jobs came or went, or a reload */
void manager_governor_stop(struct manager *m);   /* limits back to the policy's, thawed */
void manager_governor_write_done(struct manager *m, const struct worker_task *t);
/* The size an "auto" protection has now (0 when the governor does not run). */
uint64_t manager_auto_protection(struct manager *m, const struct pw_protect *pr);
json_object *manager_governor_json(struct manager *m);
int manager_apply_protection(struct manager *m);

/* manager-status.c: what `pagewardenctl status` shows. */
json_object *manager_status_json(struct manager *m);
json_object *manager_job_json(struct manager *m, const struct job *j);
/* manager-control.c: the control socket's requests. */
json_object *manager_handle_request(void *userdata, const struct ucred *peer, const struct pw_request *req);
