/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/inotify.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "log.h"
#include "manager.h"
#include "units.h"

#define STATE_DIR RUNSTATEDIR "/pagewarden"

static uint64_t now_realtime(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

void manager_action(struct manager *m, int level, const char *fmt, ...) {
        struct action *a = &m->actions[m->n_actions % MANAGER_ACTIONS];
        char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        if (!msg)
                return;
        log_internal(level, 0, "%s", msg);
        free(a->message);
        a->message = msg;
        a->usec = now_realtime();
        m->n_actions++;
}

static void manager_notify_status(struct manager *m) {
        sd_notifyf(false, "STATUS=%u job%s running; %zu job class%s, %zu protected application%s", m->n_jobs,
                   m->n_jobs == 1 ? "" : "s", m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es",
                   m->policy.n_protects, m->policy.n_protects == 1 ? "" : "s");
}

/* ---- policy -> cgroups ---- */

static void apply_classes(struct manager *m) {
        for (size_t i = 0; i < m->policy.n_classes; i++) {
                const struct pw_job_class *c = &m->policy.classes[i];
                _cleanup_free_ char *path = m->backend->ops->class_path(m->backend, c->name);
                int r = m->backend->ops->class_apply(m->backend, c);

                if (r < 0)
                        manager_action(m, LOG_LEVEL_ERR, "Class %s: cannot apply its limits to /%s: %s", c->name,
                                       strempty(path), strerror(-r));
                else
                        log_debug("Class %s: limits applied to /%s", c->name, strempty(path));
        }
}

/* What the policy asks to protect now ("auto" sizes are the governor's: 0 while no job runs). */
static void protect_requests(struct manager *m, struct backend_protect *req) {
        for (size_t i = 0; i < m->policy.n_protects; i++) {
                const struct pw_protect *pr = &m->policy.protects[i];
                uint64_t a = pr->min.mode == PW_PROTECT_AUTO || pr->low.mode == PW_PROTECT_AUTO
                                     ? manager_auto_protection(m, pr)
                                     : 0;

                req[i] = (struct backend_protect){
                        .name = pr->name,
                        .unit = pr->unit,
                        .cgroup = pr->cgroup ? pr->cgroup + 1 : NULL,
                        .min = pr->min.mode == PW_PROTECT_BYTES ? pr->min.bytes : pr->min.mode == PW_PROTECT_AUTO ? a : 0,
                        .low = pr->low.mode == PW_PROTECT_BYTES ? pr->low.bytes : pr->low.mode == PW_PROTECT_AUTO ? a : 0,
                        .swap_deny = pr->swap_deny,
                };
        }
}

int manager_apply_protection(struct manager *m) {
        size_t n = m->policy.n_protects;
        _cleanup_free_ struct backend_protect *req = calloc(n + 1, sizeof(*req));
        _cleanup_free_ struct cgroup_protect_result *res = calloc(n + 1, sizeof(*res));
        int r;

        if (!req || !res)
                return -ENOMEM;
        protect_requests(m, req);
        r = m->backend->ops->protect_set(m->backend, req, n, res);
        if (r < 0)
                manager_action(m, LOG_LEVEL_ERR, "Protection could not be applied completely: %s", strerror(-r));
        for (size_t i = 0; i < n; i++) {
                const char *what = req[i].unit ?: req[i].cgroup;
                char min[32], eff[32];

                if (res[i].error == -ENOENT)
                        manager_action(m, LOG_LEVEL_WARNING, "Protect %s: %s does not exist or does not run (yet)",
                                       req[i].name, what);
                else if (res[i].error == -EOPNOTSUPP)
                        manager_action(m, LOG_LEVEL_WARNING,
                                       "Protect %s: unit %s needs the systemd backend (systemd is not PID 1 here, or "
                                       "backend: cgroupfs is set); give its cgroup: instead",
                                       req[i].name, what);
                else if (res[i].error < 0)
                        manager_action(m, LOG_LEVEL_WARNING, "Protect %s: %s: %s", req[i].name, what,
                                       strerror(-res[i].error));
                else {
                        units_format_human(res[i].min, min, sizeof(min));
                        units_format_human(res[i].effective_min, eff, sizeof(eff));
                        log_debug("Protect %s: %s has memory.min %s (effective %s)", req[i].name, what, min, eff);
                }
        }
        return r;
}

/* ---- jobs ---- */

struct job *manager_find_job(struct manager *m, const char *id_or_name) {
        char *end;
        unsigned long long id;

        errno = 0;
        id = strtoull(id_or_name, &end, 10);
        for (struct job *j = m->jobs; j; j = j->next)
                if ((!errno && *end == '\0' && j->id == id) || streq(j->name, id_or_name))
                        return j;
        return NULL;
}

static struct job *find_job_id(struct manager *m, uint64_t id) {
        for (struct job *j = m->jobs; j; j = j->next)
                if (j->id == id)
                        return j;
        return NULL;
}

unsigned manager_class_jobs(struct manager *m, const char *class) {
        unsigned n = 0;

        for (struct job *j = m->jobs; j; j = j->next)
                n += streq(j->class, class);
        return n;
}

/* A class that is not in the policy any more goes once it has no job. */
static void remove_class_if_unused(struct manager *m, const char *class) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (m->stopping || policy_find_class(&m->policy, class) || manager_class_jobs(m, class) > 0)
                return;
        path = m->backend->ops->class_path(m->backend, class);
        r = m->backend->ops->class_remove(m->backend, class);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Class %s left the policy; removing /%s failed: %m", class, strempty(path));
        else
                manager_action(m, LOG_LEVEL_INFO, "Class %s left the policy and has no job: /%s removed", class,
                               strempty(path));
}

static void job_free(struct manager *m, struct job *j) {
        for (struct job **p = &m->jobs; *p; p = &(*p)->next)
                if (*p == j) {
                        *p = j->next;
                        m->n_jobs--;
                        break;
                }
        sd_event_source_disable_unref(j->watch);
        sd_event_source_disable_unref(j->first_check);
        manager_governor_update(m);
        remove_class_if_unused(m, j->class); /* j is off the list already */
        free(j->path);
        free(j);
}

static void job_start_release(struct manager *m, struct job *j) {
        int r;

        if (j->releasing)
                return;
        j->releasing = true;
        (void) sd_event_source_set_enabled(j->watch, SD_EVENT_OFF);
        r = worker_release(m->worker, j->id, j->path);
        if (r < 0) {
                manager_action(m, LOG_LEVEL_ERR, "Job %" PRIu64 " (%s): cannot queue its release: %s", j->id, j->name,
                               strerror(-r));
                j->releasing = false;
                (void) sd_event_source_set_enabled(j->watch, SD_EVENT_ON);
        }
}

static void job_check(struct manager *m, struct job *j) {
        _cleanup_free_ char *text = NULL;
        bool populated = true;
        int r;

        r = cgroup_read_file(m->engine, j->path, "cgroup.events", &text);
        if (r == -ENOENT || r == -ENODEV) {
                /* systemd removes a scope's cgroup as soon as it is empty: that is the job's end. */
                if (m->backend->ops->releases_jobs)
                        manager_action(m, LOG_LEVEL_WARNING, "Job %" PRIu64 " (%s): its cgroup /%s vanished", j->id,
                                       j->name, j->path);
                else
                        manager_action(m, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s) of class %s ended; systemd removed /%s",
                                       j->id, j->name, j->class, j->path);
                job_free(m, j);
                manager_notify_status(m);
                return;
        }
        if (r >= 0)
                r = cgv_parse_events(text, &populated, NULL);
        if (r < 0) {
                log_warning_errno(r, "Job %" PRIu64 ": cannot read /%s/cgroup.events: %m", j->id, j->path);
                return;
        }
        if (populated)
                return;
        if (!m->backend->ops->releases_jobs) {
                manager_action(m, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s) of class %s ended; systemd removes /%s", j->id,
                               j->name, j->class, j->path);
                job_free(m, j);
                manager_notify_status(m);
                return;
        }
        job_start_release(m, j);
}

static int on_job_first_check(sd_event_source *s, void *userdata) {
        struct job *j = userdata;

        j->first_check = sd_event_source_disable_unref(j->first_check);
        job_check(j->manager, j);
        return 0;
}

static int on_job_events(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        struct job *j = userdata;

        job_check(j->manager, j);
        return 0;
}

static void on_release_done(struct manager *m, uint64_t job_id, int r, const struct cgroup_release *rel) {
        struct job *j = find_job_id(m, job_id);
        char before[32], after[32];

        if (!j)
                return;
        if (r == -EBUSY) { /* something entered the slot again: it is still a job */
                j->releasing = false;
                (void) sd_event_source_set_enabled(j->watch, SD_EVENT_ON);
                job_check(m, j);
                return;
        }
        if (r < 0)
                manager_action(m, LOG_LEVEL_WARNING,
                               "Job %" PRIu64 " (%s) of class %s ended; releasing /%s failed: %s (retried at the next start)",
                               j->id, j->name, j->class, j->path, strerror(-r));
        else {
                units_format_human(rel->before - rel->after, before, sizeof(before));
                units_format_human(rel->after, after, sizeof(after));
                manager_action(m, LOG_LEVEL_INFO,
                               "Job %" PRIu64 " (%s) of class %s ended; /%s reclaimed %s (%s left), slot %s", j->id,
                               j->name, j->class, j->path, before, after, rel->removed ? "removed" : "kept for reuse");
        }
        job_free(m, j);
        manager_notify_status(m);
}

static void on_worker_done(void *userdata, const struct worker_task *t) {
        struct manager *m = userdata;

        if (t->kind == WORKER_RELEASE)
                on_release_done(m, t->job_id, t->r, &t->rel);
        else
                manager_governor_write_done(m, t);
}

/* Registers a job in a slot that holds it (or held it: then it is released at once). */
static int job_add(struct manager *m, const struct cgroup_job_label *label, const char *class, const char *path,
                   struct job **ret) {
        _cleanup_free_ char *events = NULL;
        struct job *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        j->manager = m;
        j->id = label->id;
        j->uid = label->uid;
        j->started_usec = label->started_usec;
        snprintf(j->name, sizeof(j->name), "%s", label->name);
        snprintf(j->class, sizeof(j->class), "%s", class);
        j->path = strdup(path);
        if (!j->path || asprintf(&events, "%s/%s/cgroup.events", cgroup_engine_mount(m->engine), path) < 0) {
                free(j->path);
                free(j);
                return -ENOMEM;
        }
        r = sd_event_add_inotify(m->event, &j->watch, events, IN_MODIFY, on_job_events, j);
        if (r < 0) {
                free(j->path);
                free(j);
                return r;
        }
        (void) sd_event_source_set_description(j->watch, "job-cgroup-events");
        j->next = m->jobs;
        m->jobs = j;
        m->n_jobs++;
        if (label->id >= m->next_job_id)
                m->next_job_id = label->id + 1;
        if (ret)
                *ret = j;
        manager_governor_update(m);
        /* It may have ended before the watch was in place: look once, on the next
         * turn of the loop (the caller still uses j). */
        r = sd_event_add_defer(m->event, &j->first_check, on_job_first_check, j);
        if (r < 0)
                log_warning_errno(r, "Job %" PRIu64 ": cannot schedule its first check: %m", j->id);
        manager_notify_status(m);
        return 0;
}

int manager_place(struct manager *m, const char *class, const char *name, uid_t uid, const pid_t *pids, size_t n,
                  struct job **ret, size_t *ret_moved) {
        struct cgroup_job_label label = { .id = m->next_job_id, .uid = uid, .started_usec = now_realtime() };
        _cleanup_free_ char *path = NULL;
        size_t moved = 0;
        struct job *j;
        int r;

        if (name && name[0])
                snprintf(label.name, sizeof(label.name), "%s", name);
        else
                snprintf(label.name, sizeof(label.name), "job-%" PRIu64, label.id);
        r = m->backend->ops->job_place(m->backend, class, &label, pids, n, &moved, &path);
        if (r < 0)
                return r;
        m->next_job_id++;
        r = job_add(m, &label, class, path, &j);
        if (r < 0)
                return r;
        manager_action(m, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s) of class %s started for uid %u with %zu process%s in /%s",
                       j->id, j->name, j->class, (unsigned) uid, moved, moved == 1 ? "" : "es", j->path);
        *ret = j;
        if (ret_moved)
                *ret_moved = moved;
        return 0;
}

/* After a restart (or a crash): find the jobs an earlier instance left. */
static int adopt(struct manager *m) {
        struct cgroup_slot *slots = NULL;
        size_t n = 0, adopted = 0, ended = 0;
        int r;

        r = m->backend->ops->thaw_all(m->backend);
        if (r < 0)
                log_warning_errno(r, "Cannot thaw every class: %m");
        r = m->backend->ops->scan(m->backend, &slots, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot find the jobs below /%s: %m", m->backend->root);
        for (size_t i = 0; i < n; i++) {
                struct job *j;

                if (!slots[i].labelled) {
                        if (slots[i].populated)
                                manager_action(m, LOG_LEVEL_WARNING,
                                               "Slot /%s holds processes but no job label: left alone", slots[i].path);
                        continue;
                }
                if (find_job_id(m, slots[i].label.id))
                        slots[i].label.id = m->next_job_id; /* a duplicate id: never two jobs with one id */
                r = job_add(m, &slots[i].label, slots[i].class, slots[i].path, &j);
                if (r < 0) {
                        log_warning_errno(r, "Cannot adopt /%s: %m", slots[i].path);
                        continue;
                }
                if (slots[i].populated) {
                        adopted++;
                        manager_action(m, LOG_LEVEL_INFO, "Job %" PRIu64 " (%s) of class %s adopted in /%s", j->id, j->name,
                                       j->class, j->path);
                } else
                        ended++;
        }
        cgroup_slots_free(slots, n);
        if (adopted || ended)
                log_info("Adopted %zu running job%s; %zu ended while no daemon ran, released", adopted,
                         adopted == 1 ? "" : "s", ended);
        return 0;
}

/* ---- configuration ---- */

int manager_reload(struct manager *m, char **ret_errors) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        struct pw_settings settings = {};
        struct pw_policy policy = {}, old;
        int r;

        sd_notify(false, "RELOADING=1");
        r = config_load(&m->ctx, m->config_path, m->config_optional, &settings, &policy, &diags);
        if (r < 0) {
                _cleanup_free_ char *text = diag_to_string(&diags);

                m->failed_reloads++;
                settings_done(&settings);
                policy_done(&policy);
                manager_action(m, LOG_LEVEL_ERR, "Reload of %s failed (%zu error%s): the running policy stays in force",
                               m->config_path, diags.n, diags.n == 1 ? "" : "s");
                if (text)
                        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                                log_error("%s", line);
                if (ret_errors)
                        *ret_errors = diag_to_string(&diags);
                sd_notify(false, "READY=1");
                return r;
        }
        if (!streq_ptr(settings.socket, m->settings.socket) || !streq_ptr(settings.cgroup_root, m->settings.cgroup_root) ||
            !streq_ptr(settings.socket_group, m->settings.socket_group))
                log_notice("Changes of socket, socket_group and cgroup_root take effect when the daemon restarts");
        manager_governor_stop(m); /* its state points into the old policy */
        old = m->policy;
        m->policy = policy;
        /* Settings that cannot change while running keep their old values. */
        free(settings.socket);
        settings.socket = TAKE_PTR(m->settings.socket);
        free(settings.cgroup_root);
        settings.cgroup_root = TAKE_PTR(m->settings.cgroup_root);
        free(settings.socket_group);
        settings.socket_group = TAKE_PTR(m->settings.socket_group);
        settings_done(&m->settings);
        m->settings = settings;
        m->reloads++;
        log_set_max_level(m->settings.log_level);

        apply_classes(m);
        (void) manager_apply_protection(m);
        manager_governor_update(m);
        for (size_t i = 0; i < old.n_classes; i++)
                remove_class_if_unused(m, old.classes[i].name);
        policy_done(&old);
        for (struct job *j = m->jobs; j; j = j->next)
                if (!policy_find_class(&m->policy, j->class))
                        log_notice("Job %" PRIu64 " (%s): class %s is no longer in the policy; the job keeps its last "
                                   "limits until it ends",
                                   j->id, j->name, j->class);
        manager_action(m, LOG_LEVEL_INFO, "Reloaded %s: %zu job class%s, %zu protected application%s", m->config_path,
                       m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es", m->policy.n_protects,
                       m->policy.n_protects == 1 ? "" : "s");
        manager_notify_status(m);
        sd_notify(false, "READY=1");
        return 0;
}

/* ---- signals and the loop ---- */

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        manager_reload(userdata, NULL);
        return 0;
}

/*
 * Jobs keep running, under their class's configured limits and thawed;
 * protection is withdrawn only with restore_on_stop.  Done while the loop
 * still runs: the bus attached to it is closed when it exits.
 */
static void manager_stop(struct manager *m) {
        int r;

        if (m->stopping)
                return;
        m->stopping = true;
        manager_governor_stop(m);
        if (m->settings.restore_on_stop) {
                r = m->backend->ops->protect_set(m->backend, NULL, 0, NULL);
                if (r < 0)
                        log_warning_errno(r, "Restoring the original protection values failed: %m");
                else
                        log_info("Protection withdrawn: original memory.min/low/swap.max values restored");
        }
        (void) m->backend->ops->thaw_all(m->backend);
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct manager *m = userdata;

        log_info("Received %s, stopping; running jobs keep running under their limits", strsignal((int) si->ssi_signo));
        sd_notify(false, "STOPPING=1");
        manager_stop(m);
        return sd_event_exit(m->event, 0);
}

int manager_new(const char *config_path, bool config_optional, const struct policy_context *ctx,
                struct pw_settings *settings, struct pw_policy *policy, const struct cgroup_mount *mount,
                struct manager **ret) {
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
        bool use_systemd;
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
        m->next_job_id = 1;
        m->state_dir = STATE_DIR;
        m->sys_fd = -1;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
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
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the watchdog: %m");
        if (r > 0) {
                uint64_t usec = 0;

                (void) sd_event_get_watchdog(m->event);
                (void) sd_watchdog_enabled(false, &usec);
                log_info("Watchdog: systemd expects a keep-alive within %" PRIu64 " ms", usec / 1000);
        }

        /* systemd owns the tree on a systemd host: ask it, unless told otherwise. */
        use_systemd = m->settings.backend == PW_BACKEND_SYSTEMD ||
                      (m->settings.backend == PW_BACKEND_AUTO && backend_systemd_available());
        r = cgroup_engine_new(m->mount.path, m->settings.cgroup_root, m->state_dir, !use_systemd, &m->engine);
        if (r < 0)
                return log_error_errno(r, "Cannot set up /%s below %s: %m", m->settings.cgroup_root, m->mount.path);
        r = worker_new(m->event, m->engine, on_worker_done, m, &m->worker);
        if (r < 0)
                return log_error_errno(r, "Cannot start the worker thread: %m");
        if (use_systemd) {
                r = backend_systemd_new(m->engine, m->worker, m->event, m->settings.cgroup_root, m->state_dir,
                                        &m->backend);
                if (r < 0 && m->settings.backend == PW_BACKEND_SYSTEMD)
                        return log_error_errno(r, "backend: systemd, but systemd cannot be used: %m");
                if (r < 0) {
                        /* auto: a systemd that does not answer is no systemd.  The engine
                         * must now manage the tree itself. */
                        log_warning_errno(r, "systemd is PID 1 but its bus does not answer (%m): using the cgroupfs backend");
                        worker_free(m->worker);
                        cgroup_engine_free(m->engine);
                        m->worker = NULL;
                        r = cgroup_engine_new(m->mount.path, m->settings.cgroup_root, m->state_dir, true, &m->engine);
                        if (r < 0)
                                return log_error_errno(r, "Cannot set up /%s below %s: %m", m->settings.cgroup_root,
                                                       m->mount.path);
                        r = worker_new(m->event, m->engine, on_worker_done, m, &m->worker);
                        if (r < 0)
                                return log_error_errno(r, "Cannot start the worker thread: %m");
                        use_systemd = false;
                }
        }
        if (!use_systemd) {
                r = backend_cgroupfs_new(m->engine, m->worker, m->event, &m->backend);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int manager_start(struct manager *m) {
        const struct cgroup_features *f = cgroup_engine_features(m->engine);
        int r;

        if (m->backend->ops->releases_jobs) {
                log_info("cgroup2 at %s, jobs below /%s (cgroupfs backend); memory.reclaim %s, swap accounting %s, "
                         "freezer %s, cpu %s",
                         m->mount.path, m->backend->root, f->memory_reclaim ? "yes" : "no", f->swap ? "yes" : "no",
                         f->freeze ? "yes" : "no", f->cpu ? "yes" : "no");
                if (!f->user_xattr)
                        return log_error_errno(EOPNOTSUPP, "cgroupfs has no user xattrs (Linux 5.7 or later is needed)");
        } else
                log_info("cgroup2 at %s, jobs in %s (systemd backend: transient slices and scopes)", m->mount.path,
                         m->backend->root);
        apply_classes(m);
        (void) manager_apply_protection(m);
        r = adopt(m);
        if (r < 0)
                return r;
        r = control_new(m->event, m->settings.socket, m->settings.socket_group, manager_handle_request, m, &m->control);
        if (r < 0)
                return log_error_errno(r, "Cannot open the control socket %s: %m", m->settings.socket);
        return 0;
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

struct manager *manager_free(struct manager *m) {
        if (!m)
                return NULL;
        m->stopping = true;
        control_free(m->control);
        worker_free(m->worker); /* before the jobs: it calls back into them */
        if (m->backend)
                manager_governor_stop(m);
        while (m->jobs)
                job_free(m, m->jobs);
        backend_free(m->backend);
        cgroup_engine_free(m->engine);
        sd_event_unref(m->event);
        settings_done(&m->settings);
        policy_done(&m->policy);
        for (unsigned i = 0; i < MANAGER_ACTIONS; i++)
                free(m->actions[i].message);
        free(m->config_path);
        free(m);
        return NULL;
}
