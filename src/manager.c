/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <signal.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "manager.h"

static void manager_notify_status(struct manager *m) {
        sd_notifyf(false, "STATUS=%zu job class%s, %zu protected application%s; cgroup2 at %s",
                   m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es", m->policy.n_protects,
                   m->policy.n_protects == 1 ? "" : "s", m->mount.path);
}

int manager_reload(struct manager *m, char **ret_errors) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        struct pw_settings settings = {};
        struct pw_policy policy = {};
        int r;

        sd_notify(false, "RELOADING=1");
        r = config_load(&m->ctx, m->config_path, m->config_optional, &settings, &policy, &diags);
        if (r < 0) {
                _cleanup_free_ char *text = diag_to_string(&diags);

                m->failed_reloads++;
                settings_done(&settings);
                policy_done(&policy);
                log_error("Reload of %s failed, the running policy stays in force:", m->config_path);
                if (text)
                        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                                log_error("%s", line);
                if (ret_errors)
                        *ret_errors = diag_to_string(&diags);
                sd_notify(false, "READY=1");
                return r;
        }
        settings_done(&m->settings);
        policy_done(&m->policy);
        m->settings = settings;
        m->policy = policy;
        m->reloads++;
        log_set_max_level(m->settings.log_level);
        log_info("Reloaded %s: %zu job classes, %zu protected applications", m->config_path, m->policy.n_classes,
                 m->policy.n_protects);
        manager_notify_status(m);
        sd_notify(false, "READY=1");
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        manager_reload(userdata, NULL);
        return 0;
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        log_info("Received %s, stopping", strsignal((int) si->ssi_signo));
        sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

int manager_new(const char *config_path, bool config_optional, const struct policy_context *ctx, struct pw_settings *settings,
                struct pw_policy *policy, const struct cgroup_mount *mount, struct manager **ret) {
        _cleanup_(manager_freep) struct manager *m = NULL;
        static const struct {
                int sig;
                sd_event_signal_handler_t handler;
                const char *name;
        } signals[] = {
                { SIGTERM, on_sigterm, "sigterm" },
                { SIGINT, on_sigterm, "sigint" },
                { SIGHUP, on_sighup, "sighup" },
        };
        sigset_t mask;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return -ENOMEM;
        m->config_optional = config_optional;
        m->ctx = *ctx;
        m->settings = *settings;
        *settings = (struct pw_settings){};
        m->policy = *policy;
        *policy = (struct pw_policy){};
        m->mount = *mount;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                sigaddset(&mask, signals[i].sig);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(signals); i++) {
                sd_event_source *s;

                r = sd_event_add_signal(m->event, &s, signals[i].sig, signals[i].handler, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(s, signals[i].name);
                /* The source lives as long as the event loop. */
                r = sd_event_source_set_floating(s, true);
                sd_event_source_unref(s);
                if (r < 0)
                        return r;
        }
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

struct manager *manager_free(struct manager *m) {
        if (!m)
                return NULL;
        sd_event_unref(m->event);
        settings_done(&m->settings);
        policy_done(&m->policy);
        free(m->config_path);
        free(m);
        return NULL;
}

int manager_run(struct manager *m) {
        int r;

        manager_notify_status(m);
        sd_notify(false, "READY=1");
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}
