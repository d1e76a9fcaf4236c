/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's event wiring: sd-event loop, signals, reload.  The manager
 * owns the running configuration; a reload builds a complete new one first
 * and replaces the running one only when it is valid.
 */

#include <systemd/sd-event.h>

#include "cgroup-discover.h"
#include "policy.h"

struct manager {
        sd_event *event;
        char *config_path;
        bool config_optional; /* the default path: a missing file means defaults */
        struct policy_context ctx;
        struct pw_settings settings;
        struct pw_policy policy;
        struct cgroup_mount mount;
        unsigned reloads, failed_reloads;
};

int manager_new(const char *config_path, bool config_optional, const struct policy_context *ctx, struct pw_settings *settings,
                struct pw_policy *policy, const struct cgroup_mount *mount, struct manager **ret);
struct manager *manager_free(struct manager *m);
static inline void manager_freep(struct manager **m) {
        manager_free(*m);
}

/* Loads the configuration again; the running one stays when the new one is invalid.
 * On -EINVAL, *ret_errors (if given) holds the diagnostics as text. */
int manager_reload(struct manager *m, char **ret_errors);

/* Runs the event loop until SIGTERM or SIGINT. */
int manager_run(struct manager *m);
