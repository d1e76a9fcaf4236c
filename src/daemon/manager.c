/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "manager.h"
#include "place-request.h"
#include "pressure.h"
#include "requests.h"
#include "status.h"
#include "worker.h"

#define STATE_DIR RUNSTATEDIR "/pagewarden"

static void notify_status(struct manager *m) {
        sd_notifyf(false, "STATUS=%u job%s running; %zu job class%s, %zu protected application%s", m->jobs.n,
                   m->jobs.n == 1 ? "" : "s", m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es",
                   m->policy.n_protects, m->policy.n_protects == 1 ? "" : "s");
}

/* The governor's io list follows the devices there are. */
static void on_class_devices_changed(void *userdata) {
        struct manager *m = userdata;

        if (m->govern.active) {
                govern_stop(&m->govern);
                govern_update(&m->govern);
        }
}

/* After jobs end, what they held goes back to the kernel: malloc keeps freed memory in its heap (with 1,200 jobs
 * ended under the scale benchmark, 13 MiB of RSS for 3.5 MiB in use; 6 MiB after a trim).  Once, 10 s after the
 * first end of a burst: an idle daemon does not wake for it. */
#define MANAGER_TRIM_USEC (UINT64_C(10) * 1000000)

static int on_trim(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) malloc_trim(0);
        return 0;
}

static void trim_later(struct manager *m) {
        int enabled = SD_EVENT_OFF;

        if (!m->trim) {
                if (sd_event_add_time_relative(m->event, &m->trim, CLOCK_MONOTONIC, MANAGER_TRIM_USEC,
                                               UINT64_C(1000000), on_trim, m) >= 0)
                        (void) sd_event_source_set_description(m->trim, "heap-trim");
                return;
        }
        if (sd_event_source_get_enabled(m->trim, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return; /* due already */
        (void) sd_event_source_set_time_relative(m->trim, MANAGER_TRIM_USEC);
        (void) sd_event_source_set_enabled(m->trim, SD_EVENT_ONESHOT);
}

static void on_jobs_changed(void *userdata, const char *class, bool ended) {
        struct manager *m = userdata;

        appcost_set_running(&m->appcost, m->jobs.n > 0);
        govern_update(&m->govern);
        if (ended) {
                classes_remove_if_unused(&m->classes, class);
                trim_later(m);
        }
        notify_status(m);
}

/* ---- configuration ---- */

/* Settings that cannot change while running keep their old values in s. */
static void keep_fixed_settings(struct manager *m, struct pw_settings *s) {
        if (!streq_ptr(s->socket, m->settings.socket) || !streq_ptr(s->cgroup_root, m->settings.cgroup_root) ||
            !streq_ptr(s->socket_group, m->settings.socket_group))
                log_notice("Changes of socket, socket_group and cgroup_root take effect when the daemon restarts");
        free(s->socket);
        s->socket = TAKE_PTR(m->settings.socket);
        free(s->cgroup_root);
        s->cgroup_root = TAKE_PTR(m->settings.cgroup_root);
        free(s->socket_group);
        s->socket_group = TAKE_PTR(m->settings.socket_group);
        if (!streq_ptr(s->history_file, m->settings.history_file))
                log_notice("A change of history_file takes effect when the daemon restarts");
        free(s->history_file);
        s->history_file = TAKE_PTR(m->settings.history_file);
}

/*
 * A reload in two halves: the files are read and parsed by a thread of the
 * manager's own (200 policy files held the loop 55-78 ms under emulation;
 * requests, triggers and timers are served meanwhile), and what they say is
 * applied on the loop.  Who asks while a round is being read waits for the
 * next round, which reads the files again (they may have changed after the
 * first began): SIGHUPs and requests that come together are one round.
 */
struct reload_waiter {
        api_reloaded_fn done;
        void *userdata;
};

struct reload_round {
        /* read by the thread */
        const struct policy_context *ctx;
        const char *config_path;
        bool config_optional;
        /* written by the thread */
        struct pw_settings settings;
        struct pw_policy policy;
        struct diag_list diags;
        int r;
        uint64_t read_usec; /* how long the thread took */
        /* the loop's */
        struct reload_waiter *waiters;
        size_t n_waiters;
};

static void reload_round_free(void *arg) {
        struct reload_round *rr = arg;

        settings_done(&rr->settings);
        policy_done(&rr->policy);
        diag_list_done(&rr->diags);
        free(rr->waiters);
        free(rr);
}

/* On the thread: nothing here touches the running configuration. */
static void reload_read(void *arg) {
        struct reload_round *rr = arg;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);

        rr->r = config_load(rr->ctx, rr->config_path, rr->config_optional, &rr->settings, &rr->policy, &rr->diags);
        rr->read_usec = now_usec(CLOCK_MONOTONIC) - t0;
}

static void reload_tell(struct reload_waiter *w, size_t n, int r, const char *errors) {
        for (size_t i = 0; i < n; i++)
                w[i].done(w[i].userdata, r, errors);
}

/* The new configuration in force, on the loop.  Where its time goes is said with it (the scale benchmark, with
 * thousands of jobs and hundreds of files: tests/vm/scenarios/scale-bench.sh). */
static int reload_apply(struct manager *m, struct reload_round *rr) {
        struct pw_policy old;
        uint64_t t[6];

        t[0] = now_usec(CLOCK_MONOTONIC);
        if (rr->r < 0) {
                m->failed_reloads++;
                action_log_add(&m->log, LOG_LEVEL_ERR,
                               "Reload of %s failed (%zu error%s): the running policy stays in force", m->config_path,
                               rr->diags.n_errors, rr->diags.n_errors == 1 ? "" : "s");
                log_diags(LOG_LEVEL_ERR, &rr->diags);
                return rr->r;
        }
        log_diags(LOG_LEVEL_WARNING, &rr->diags); /* warnings only: a device not there yet */
        govern_pause(&m->govern);                 /* its state points into the old policy */
        t[1] = now_usec(CLOCK_MONOTONIC);
        keep_fixed_settings(m, &rr->settings);
        settings_done(&m->settings);
        m->settings = rr->settings;
        rr->settings = (struct pw_settings){};
        old = m->policy;
        m->policy = rr->policy;
        rr->policy = (struct pw_policy){};
        m->reloads++;
        log_set_max_level(m->settings.log_level);
        history_set_bounds(&m->history, m->settings.history_jobs, m->settings.history_days * 86400);
        appcost_set_share(&m->appcost, m->settings.pressure.window_usec);

        classes_apply(&m->classes);
        protect_find_fronts(&m->protect, &m->policy);
        t[2] = now_usec(CLOCK_MONOTONIC);
        (void) protect_apply(&m->protect, &m->policy);
        t[3] = now_usec(CLOCK_MONOTONIC);
        govern_resume(&m->govern);
        t[4] = now_usec(CLOCK_MONOTONIC);
        place_rules_update(&m->place_rules);
        observe_update(&m->observe, m->policy.n_protects > 0, m->settings.history_days * 86400);
        for (size_t i = 0; i < old.n_classes; i++)
                classes_remove_if_unused(&m->classes, old.classes[i].name);
        policy_done(&old);
        t[5] = now_usec(CLOCK_MONOTONIC);
        for (struct job *j = m->jobs.list; j; j = j->next)
                if (!policy_find_class(&m->policy, j->class))
                        log_notice("Job %" PRIu64
                                   " (%s): class %s is no longer in the policy; the job keeps its last "
                                   "limits until it ends",
                                   j->id, j->name, j->class);
        action_log_add(&m->log, LOG_LEVEL_INFO,
                       "Reloaded %s: %zu job class%s, %zu protected application%s; %" PRIu64
                       " ms on the event loop (governor %" PRIu64 ", classes %" PRIu64 ", protection %" PRIu64
                       ", rules %" PRIu64 "), the files read in %" PRIu64 " ms off it",
                       m->config_path, m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es", m->policy.n_protects,
                       m->policy.n_protects == 1 ? "" : "s", (t[5] - t[0]) / 1000, (t[1] - t[0] + t[4] - t[3]) / 1000,
                       (t[2] - t[1]) / 1000, (t[3] - t[2]) / 1000, (t[5] - t[4]) / 1000, rr->read_usec / 1000);
        notify_status(m);
        return 0;
}

static int reload_begin(struct manager *m);

/* The files are read: applied, and each who asked is told. */
static void reload_done(struct manager *m, struct reload_round *rr) {
        _cleanup_free_ char *errors = NULL;
        int r;

        m->reloading = NULL;
        if (m->stopping) { /* its waiters were told already */
                reload_round_free(rr);
                return;
        }
        r = reload_apply(m, rr);
        if (r < 0)
                errors = diag_to_string(&rr->diags);
        sd_notify(false, "READY=1");
        reload_tell(rr->waiters, rr->n_waiters, r, errors);
        reload_round_free(rr);
        if (m->reload_again)
                (void) reload_begin(m);
}

static void on_reload_read(void *userdata, const struct worker_task *t) {
        reload_done(userdata, t->arg);
}

/* A round for those who asked since the last began; read by the thread (here without one). */
static int reload_begin(struct manager *m) {
        struct reload_round *rr = calloc(1, sizeof(*rr));
        int r;

        if (!rr)
                return -ENOMEM;
        *rr = (struct reload_round){ .ctx = &m->ctx,
                                     .config_path = m->config_path,
                                     .config_optional = m->config_optional,
                                     .waiters = TAKE_PTR(m->reload_waiters),
                                     .n_waiters = m->n_reload_waiters };
        m->n_reload_waiters = 0;
        m->reload_again = false;
        m->reloading = rr;
        sd_notify(false, "RELOADING=1");
        r = m->loader ? worker_call(m->loader, reload_read, rr, reload_round_free, on_reload_read, m) : -EOPNOTSUPP;
        if (r < 0) { /* no thread: read here */
                reload_read(rr);
                reload_done(m, rr);
        }
        return 0;
}

int manager_reload(struct manager *m, api_reloaded_fn done, void *userdata) {
        assert(m);
        if (m->stopping)
                return -ESHUTDOWN;
        if (done) {
                struct reload_waiter *w = reallocarray(m->reload_waiters, m->n_reload_waiters + 1, sizeof(*w));

                if (!w)
                        return -ENOMEM;
                m->reload_waiters = w;
                w[m->n_reload_waiters++] = (struct reload_waiter){ .done = done, .userdata = userdata };
        }
        if (m->reloading) {
                m->reload_again = true;
                return 0;
        }
        return reload_begin(m);
}

/* At the stop: who waits for a reload is told it will not be (a round being read is dropped when it comes). */
static void reload_cancel(struct manager *m) {
        if (m->reloading) {
                reload_tell(m->reloading->waiters, m->reloading->n_waiters, -ESHUTDOWN, NULL);
                m->reloading->waiters = mfree(m->reloading->waiters);
                m->reloading->n_waiters = 0;
        }
        reload_tell(m->reload_waiters, m->n_reload_waiters, -ESHUTDOWN, NULL);
        m->reload_waiters = mfree(m->reload_waiters);
        m->n_reload_waiters = 0;
        m->reload_again = false;
}

/* ---- signals and the loop ---- */

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        if (!m->stopping) /* its protection is withdrawn already */
                (void) manager_reload(m, NULL, NULL);
        return 0;
}

/*
 * Jobs keep running, under their class's configured limits and thawed;
 * protection is withdrawn only with restore_on_stop.  Done while the loop
 * still runs: the bus attached to it is closed when it exits.
 */
static void manager_stop(struct manager *m) {
        if (m->stopping)
                return;
        m->stopping = m->govern.stopping = true;
        reload_cancel(m);
        place_rules_stop(&m->place_rules, m->settings.restore_on_stop);
        place_rules_done(&m->place_rules);
        govern_stop(&m->govern);
        if (m->settings.restore_on_stop)
                (void) protect_withdraw(&m->protect);
        (void) backend_thaw_all(m->backend);
        /* Where classes are units (systemd's transient slices), those without
         * a job stop with the daemon, so that no unit of pagewarden's outlives
         * it (a removed package leaves none behind); they come back with the
         * next start.  A class with a job stays, with its limits. */
        if (backend_places_units(m->backend)) {
                for (size_t i = 0; i < m->policy.n_classes; i++)
                        if (jobs_in_class(&m->jobs, m->policy.classes[i].name) == 0)
                                (void) backend_class_remove(m->backend, m->policy.classes[i].name);
                if (m->jobs.n == 0)
                        (void) backend_class_remove(m->backend, NULL);
        }
}

static void exit_loop(void *userdata) {
        struct manager *m = userdata;

        (void) sd_event_exit(m->event, 0);
}

/* The first signal stops, and the loop ends once the backend's writes (a restore, a thaw) are answered; a second
 * one ends it at once. */
static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        if (m->stopping)
                return sd_event_exit(m->event, 0);
        log_info("Received %s, stopping; running jobs keep running under their limits", strsignal((int) si->ssi_signo));
        sd_notify(false, "STOPPING=1");
        manager_stop(m);
        if (backend_when_answered(m->backend, exit_loop, m) > 0)
                return 0;
        return sd_event_exit(m->event, 0);
}

static int add_signals(struct manager *m) {
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

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                sigaddset(&mask, signals[i].sig);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        signal(SIGPIPE, SIG_IGN);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++) {
                sd_event_source *s;

                r = sd_event_add_signal(m->event, &s, signals[i].sig, signals[i].handler, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(s, signals[i].name);
                r = sd_event_source_set_floating(s, true);
                sd_event_source_unref(s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int setup_watchdog(struct manager *m) {
        uint64_t usec = 0;
        int r = sd_event_set_watchdog(m->event, true);

        if (r < 0)
                return log_error_errno(r, "Cannot set up the watchdog: %m");
        if (r > 0 && sd_watchdog_enabled(false, &usec) > 0)
                log_info("Watchdog: systemd expects a keep-alive within %" PRIu64 " ms", usec / 1000);
        return 0;
}

/* The ended jobs, from history_file; its directory is made if its parent is there (/var/lib).  Written by the
 * loop at most once a second, and at the stop (history_done). */
static int history_open(struct manager *m) {
        _cleanup_free_ char *dir = strdup(m->settings.history_file);
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (!dir)
                return -ENOMEM;
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                        log_warning_errno(-errno, "Job history: cannot make %s (%m): ended jobs are not kept", dir);
        }
        return history_init(&m->history, m->event, m->settings.history_file, m->settings.history_jobs,
                            m->settings.history_days * 86400);
}

struct app_samples {
        struct app_sample *out;
        size_t n, max;
};

static void app_sample_add(struct app_samples *a, const char *name, const struct governor_sample *s) {
        if (a->n >= a->max)
                return;
        a->out[a->n] =
                (struct app_sample){ .refaults = s->refaults, .majfaults = s->majfaults, .stall_usec = s->some_total };
        snprintf(a->out[a->n].name, sizeof(a->out[a->n].name), "%s", name);
        a->n++;
}

static void on_governor_sample(void *userdata, const char *name, const struct governor_sample *s) {
        app_sample_add(userdata, name, s);
}

/* Each protected application whose cgroup is there: its refaults, major faults and memory stall time.  While
 * jobs run, the governor's tick has read them all within the last two windows: a job's start or end costs no
 * read then, however many applications are protected; otherwise two files each (memory.stat, memory.pressure). */
static size_t sample_apps(void *userdata, struct app_sample *out, size_t max) {
        struct manager *m = userdata;
        struct app_samples a = { .out = out, .max = max };

        if (govern_recent_samples(&m->govern, now_usec(CLOCK_MONOTONIC), 2 * m->settings.pressure.window_usec,
                                  on_governor_sample, &a))
                return a.n;
        for (size_t i = 0; i < m->policy.n_protects && a.n < max; i++) {
                const struct pw_protect *pr = &m->policy.protects[i];
                _cleanup_free_ char *path = NULL;
                struct governor_sample s;

                if (backend_protect_path(m->backend, pr, &path) >= 0 &&
                    pressure_cost_read(m->backend->engine, path, &s) >= 0)
                        app_sample_add(&a, pr->name, &s);
        }
        return a.n;
}

/* The governor's actions on a class since the daemon started (jobs report the difference over their run). */
static void class_actions(void *userdata, const char *class, struct job_governor_counts *ret) {
        struct manager *m = userdata;
        struct govern_counts c;

        /* Since the daemon started, not since the governor's last start: a
         * job's report takes the difference between its start and its end,
         * and a reload or an idle spell between them restarts the governor. */
        govern_class_counts(&m->govern, class, &c);
        *ret = (struct job_governor_counts){
                .tightened = c.tightened, .frozen = c.frozen, .undone = c.undone, .held_off = m->govern.held_off
        };
}

static json_object *governor_beliefs(void *userdata, const char *class) {
        struct manager *m = userdata;

        return govern_beliefs_json(&m->govern, class);
}

/* What observation looks at: the protected applications where they run, and not pagewarden's tree or a job's
 * cgroup.  A job below pagewarden's root is left out with it; only those elsewhere (a unit placed by rule runs
 * where systemd put it) are named one by one: observation compares every cgroup it walks with each name. */
static int observe_scope(void *userdata, struct observe_app **ret_apps, size_t *ret_n_apps, char ***ret_skip,
                         size_t *ret_n_skip) {
        struct manager *m = userdata;
        const char *root = cgroup_engine_root(m->backend->engine);
        struct observe_app *apps = calloc(m->policy.n_protects ?: 1, sizeof(*apps));
        char **skip = calloc(m->jobs.n + 1, sizeof(*skip));
        size_t n_apps = 0, n_skip = 0;

        if (!apps || !skip || !(skip[n_skip++] = strdup(root))) {
                free(apps);
                free(skip);
                return -ENOMEM;
        }
        for (struct job *j = m->jobs.list; j; j = j->next)
                if (j->path && !path_under(j->path, root) && (skip[n_skip] = strdup(j->path)))
                        n_skip++;
        for (size_t i = 0; i < m->policy.n_protects; i++) {
                const struct pw_protect *pr = &m->policy.protects[i];

                if (backend_protect_path(m->backend, pr, &apps[n_apps].path) < 0)
                        continue;
                snprintf(apps[n_apps].name, sizeof(apps[n_apps].name), "%s", pr->name);
                n_apps++;
        }
        *ret_apps = apps;
        *ret_n_apps = n_apps;
        *ret_skip = skip;
        *ret_n_skip = n_skip;
        return 0;
}

/* Observation's episodes: observations.json beside the job history. */
static void observe_open(struct manager *m) {
        _cleanup_free_ char *path = strdup(m->settings.history_file);
        char *slash = path ? strrchr(path, '/') : NULL;
        _cleanup_free_ char *file = NULL;
        int r;

        if (slash)
                *slash = '\0';
        if (!path || asprintf(&file, "%s/observations.json", slash ? path : ".") < 0)
                file = NULL;
        r = observe_init(&m->observe, m->event, m->backend->engine, observe_scope, m, file,
                         m->settings.history_days * 86400);
        if (r < 0)
                log_warning_errno(r, "Observation: cannot start (%m): unplaced work is not observed");
}

static int reload_for_api(void *userdata, api_reloaded_fn done, void *done_userdata) {
        return manager_reload(userdata, done, done_userdata);
}

/* The modules, wired to one another. */
static void wire(struct manager *m) {
        m->classes = (struct classes){ .event = m->event,
                                       .backend = m->backend,
                                       .policy = &m->policy,
                                       .ctx = &m->ctx,
                                       .jobs = &m->jobs,
                                       .log = &m->log,
                                       .stopping = &m->stopping,
                                       .devices_changed = on_class_devices_changed,
                                       .userdata = m };
        appcost_init(&m->appcost, sample_apps, m, m->settings.pressure.window_usec);
        jobs_init(&m->jobs, m->event, m->backend, &m->log, on_jobs_changed, m,
                  &(struct jobs_report){ .history = &m->history,
                                         .appcost = &m->appcost,
                                         .class_actions = class_actions,
                                         .governor_beliefs = governor_beliefs });
        protect_init(&m->protect, m->event, m->backend, &m->log);
        m->govern = (struct govern){
                .event = m->event,
                .backend = m->backend,
                .mount = &m->mount,
                .policy = &m->policy,
                .classes = &m->classes,
                .settings = &m->settings,
                .ram_bytes = m->ctx.ram_bytes,
                .jobs = &m->jobs,
                .protect = &m->protect,
                .log = &m->log,
        };
        govern_init(&m->govern);
        observe_open(m);
        m->place_rules = (struct place_rules){
                .event = m->event,
                .policy = &m->policy,
                .classes = &m->classes,
                .backend = m->backend,
                .jobs = &m->jobs,
                .log = &m->log,
        };
        place_rules_init(&m->place_rules);
        m->api = (struct api){
                .event = m->event,
                .backend = m->backend,
                .policy = &m->policy,
                .classes = &m->classes,
                .jobs = &m->jobs,
                .history = &m->history,
                .govern = &m->govern,
                .protect = &m->protect,
                .observe = &m->observe,
                .log = &m->log,
                .loop = &m->loop,
                .started_usec = m->started_usec,
                .stopping = &m->stopping,
                .reload = reload_for_api,
                .reload_userdata = m,
        };
}

int manager_new(const char *config_path, bool config_optional, const struct policy_context *ctx,
                struct pw_settings *settings, struct pw_policy *policy, const struct cgroup_mount *mount,
                struct manager **ret) {
        _cleanup_(manager_freep) struct manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return -ENOMEM;
        m->config_optional = config_optional;
        m->started_usec = now_usec(CLOCK_REALTIME);
        m->ctx = *ctx;
        m->settings = *settings;
        *settings = (struct pw_settings){};
        m->policy = *policy;
        *policy = (struct pw_policy){};
        m->mount = *mount;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        r = add_signals(m);
        if (r < 0)
                return r;
        r = history_open(m);
        if (r < 0)
                return r;
        r = setup_watchdog(m);
        if (r < 0)
                return r;
        r = backend_open(&(struct backend_setup){ .event = m->event,
                                                  .mount = m->mount.path,
                                                  .root = m->settings.cgroup_root,
                                                  .state_dir = STATE_DIR,
                                                  .want = m->settings.backend },
                         &m->backend);
        if (r < 0)
                return r;
        /* A reload's files are read by a thread of their own: not the backend's worker, whose reclaim under
         * pressure can take seconds. */
        r = worker_new(m->event, m->backend->engine, &m->loader);
        if (r < 0)
                log_warning_errno(r, "No thread to read the configuration with (%m): reloads read it on the loop");
        wire(m);
        *ret = TAKE_PTR(m);
        return 0;
}

int manager_start(struct manager *m) {
        int r;

        classes_apply(&m->classes);
        protect_find_fronts(&m->protect, &m->policy);
        (void) protect_apply(&m->protect, &m->policy);
        r = jobs_adopt(&m->jobs);
        if (r < 0)
                return r;
        place_rules_update(&m->place_rules);
        observe_update(&m->observe, m->policy.n_protects > 0, m->settings.history_days * 86400);
        r = control_new(m->event, m->settings.socket, m->settings.socket_group, requests_handle, &m->api,
                        &m->api.control);
        if (r < 0)
                return log_error_errno(r, "Cannot open the control socket %s: %m", m->settings.socket);
        return 0;
}

int manager_run(struct manager *m) {
        int r;

        notify_status(m);
        sd_notify(false, "READY=1");
        r = loop_run(m->event, &m->loop);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

struct manager *manager_free(struct manager *m) {
        if (!m)
                return NULL;
        m->stopping = m->govern.stopping = true;
        m->loader = worker_free(m->loader); /* a round it reads is dropped */
        reload_cancel(m);
        m->trim = sd_event_source_disable_unref(m->trim);
        place_moves_free(&m->api);
        status_done(&m->api);
        m->api.control = control_free(m->api.control);
        classes_done(&m->classes);
        observe_done(&m->observe);
        if (m->backend) {
                place_rules_done(&m->place_rules);
                govern_stop(&m->govern);
                jobs_done(&m->jobs);
                protect_done(&m->protect);
        }
        govern_done(&m->govern);
        m->backend = backend_free(m->backend);
        history_done(&m->history); /* after the jobs' last reports: writes what is pending */
        m->event = sd_event_unref(m->event);
        settings_done(&m->settings);
        policy_done(&m->policy);
        action_log_done(&m->log);
        appcost_done(&m->appcost);
        free(m->config_path);
        free(m);
        return NULL;
}
