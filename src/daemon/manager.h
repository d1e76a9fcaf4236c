/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's event wiring: the sd-event loop with its signals (SIGHUP
 * reloads, SIGTERM stops), the watchdog, the control socket, and the
 * modules it connects: jobs (the registry), protect (protection of
 * applications), govern (the pressure governor), place_rules (placement by
 * the policy's rules), all on one backend.  The
 * manager owns the running configuration; a reload builds a complete new
 * one first and replaces the running one only when it is valid.
 *
 * Errors: negative errno, logged here (the daemon layer).
 */

#include <systemd/sd-event.h>

#include "action-log.h"
#include "api.h"
#include "backend.h"
#include "cgroup-discover.h"
#include "classes.h"
#include "control.h"
#include "governor-run.h"
#include "jobs.h"
#include "loop.h"
#include "observe.h"
#include "place-rules.h"
#include "policy.h"
#include "protect.h"
#include "settings.h"

struct manager {
        sd_event *event;
        char *config_path;
        bool config_optional; /* the default path: a missing file means defaults */
        struct policy_context ctx;
        struct pw_settings settings;
        struct pw_policy policy;
        struct cgroup_mount mount;
        struct backend *backend;
        struct action_log log;
        struct jobs jobs;
        struct history history; /* ended jobs */
        struct appcost appcost; /* what jobs cost the protected applications */
        struct protect protect;
        struct govern govern;
        struct place_rules place_rules;
        struct observe observe; /* unplaced work that evicts the protected applications */
        struct api api;         /* what the control socket's requests act on (the socket is its control) */
        struct classes classes; /* the job classes in the kernel, and io limits that follow their devices */
        unsigned reloads, failed_reloads;
        uint64_t started_usec;  /* CLOCK_REALTIME */
        struct loop_stats loop; /* how long the loop's dispatches took */
        sd_event_source *trim;  /* the heap given back to the kernel after jobs ended */
        /* Reloads: the files are read by the loader's thread (manager.c). */
        struct worker *loader;
        struct reload_round *reloading;       /* the round being read */
        struct reload_waiter *reload_waiters; /* who asked since it began: the next round's */
        size_t n_reload_waiters;
        bool reload_again; /* a reload was asked since it began */
        bool stopping;
};

/* Takes over settings and policy (they are left empty). */
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

/* Loads the configuration again, its files read off the loop; the running one stays when the new one is invalid.
 * done (may be NULL) is told once it is over (api_reloaded_fn; before this returns only when no thread could be
 * had); a negative errno: no reload, and done is not told (-ESHUTDOWN: the daemon stops). */
int manager_reload(struct manager *m, api_reloaded_fn done, void *userdata);
