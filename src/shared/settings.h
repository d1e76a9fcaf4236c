/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon settings (pagewarden.yaml): backend, log level, control
 * socket, cgroup root, where the policy files are, and the pressure
 * governor's levels; and config_load(), which reads the settings and then
 * the policy they point to.
 *
 * Functions return 0 on success, -EINVAL when the input had errors (they
 * are in the diag_list, with file, line and column), or another negative
 * errno for failures that are not the input's fault.  Out of memory is
 * always -ENOMEM, never an abort: then free what was filled in with
 * settings_done() (and policy_done()); the diagnostics may be incomplete
 * (diags->oom).
 */

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "policy.h"

#define PW_DEFAULT_CONFIG SYSCONFDIR "/pagewarden/pagewarden.yaml"
#define PW_DEFAULT_SOCKET RUNSTATEDIR "/pagewarden/control.sock"
#define PW_DEFAULT_CGROUP_ROOT "pagewarden.slice"
#define PW_DEFAULT_HISTORY_FILE "/var/lib/pagewarden/history.json"

enum pw_backend {
        PW_BACKEND_AUTO,
        PW_BACKEND_SYSTEMD,
        PW_BACKEND_CGROUPFS,
};

enum pw_log_level {
        PW_LOG_ERR = 3,
        PW_LOG_WARNING = 4,
        PW_LOG_NOTICE = 5,
        PW_LOG_INFO = 6,
        PW_LOG_DEBUG = 7,
};

struct pw_settings {
        char *path; /* the settings file, NULL when defaults only */
        char *policy_dir;
        char *socket;
        char *socket_group; /* NULL: root's group */
        char *cgroup_root;  /* relative to the cgroup2 mount, no leading '/' */
        enum pw_backend backend;
        bool restore_on_stop;
        bool run_fallback;                   /* pagewardenctl run without a daemon: run the command unmanaged */
        uint64_t history_jobs, history_days; /* ended jobs kept: at most this many, this many days */
        char *history_file;                  /* where they are kept */
        enum pw_log_level log_level;
        /* What "auto" protection leaves to everything unprotected (the kernel, sshd, journald, the jobs' own
         * floors come on top), bytes; UNITS_MAX: the default, a tenth of RAM and at least 64 MiB. */
        uint64_t reserve;
        struct {
                uint32_t threshold; /* stall share of the window, hundredths of % */
                uint64_t window_usec;
                uint32_t release; /* avg10 level, hundredths of % */
                uint64_t cooldown_usec;
        } pressure;
};

/* Settings: path NULL gives the defaults; so does a missing file when
 * optional (the default path).  A relative policy_dir is taken relative to
 * the settings file's directory; the default is policies.d beside it. */
int settings_parse_source(const struct policy_context *ctx, const struct source *src, struct pw_settings *s,
                          struct diag_list *diags);
int settings_load(const struct policy_context *ctx, const char *path, bool optional, struct pw_settings *s,
                  struct diag_list *diags);
/* The defaults, as documented in pagewarden.yaml(5); 0 or -ENOMEM (then settings_done() frees what was set). */
int settings_init(struct pw_settings *s);
void settings_done(struct pw_settings *s);

/* The daemon's whole configuration: the settings file, then its policy_dir. */
int config_load(const struct policy_context *ctx, const char *settings_path, bool optional, struct pw_settings *s,
                struct pw_policy *p, struct diag_list *diags);

const char *pw_backend_to_string(enum pw_backend b);
const char *pw_log_level_to_string(enum pw_log_level l);
