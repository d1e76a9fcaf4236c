/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>

#include "governor-run.h"
#include "log.h"
#include "pressure.h"
#include "protocol.h"
#include "units.h"

/* The reaction latency's histogram buckets (upper bounds, microseconds): 1, 2.5 and 5 per decade, as
 * Prometheus's default buckets are spaced. */
static const uint64_t latency_bounds_usec[GOVERN_LATENCY_BUCKETS] = {
        250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};

void govern_init(struct govern *g) {
        g->sys_fd = -1;
}

static void watch_close(struct govern_watch *w);
static bool watch_open(struct govern *g, const struct pw_protect *pr, struct govern_watch *w);

void govern_done(struct govern *g) {
        assert(!g->active);
        for (size_t i = 0; i < g->n_parked; i++)
                watch_close(&g->parked[i]);
        g->parked = mfree(g->parked);
        g->n_parked = 0;
        pressure_trigger_close(&g->sys_fd, &g->sys_src);
        g->tallies = mfree(g->tallies);
        g->n_tallies = g->allocated_tallies = 0;
}

/* ---- applying actions ---- */

static void record_latency(struct govern *g, uint64_t usec) {
        g->latencies[g->n_latencies % GOVERN_LATENCIES] = usec;
        g->n_latencies++;
        g->latency_sum_usec += usec;
        for (size_t i = 0; i < GOVERN_LATENCY_BUCKETS; i++)
                if (usec <= latency_bounds_usec[i]) {
                        g->latency_buckets[i]++;
                        break;
                }
}

void govern_write_done(void *userdata, const struct worker_task *t) {
        struct govern *g = userdata;

        if (t->wake_usec) {
                uint64_t lat = t->start_usec - t->wake_usec;

                record_latency(g, lat);
                log_info("Governor: reaction latency %" PRIu64
                         " us from the trigger's wake-up to writing %s of /%s; "
                         "the write (reclaim down to the new limit) took %" PRIu64 " us",
                         lat, t->file, t->path, t->end_usec - t->start_usec);
        }
        if (t->end_usec - t->start_usec > g->write_usec_max)
                g->write_usec_max = t->end_usec - t->start_usec;
        if (t->r < 0 && t->r != -ENOENT)
                action_log_add(g->log, LOG_LEVEL_WARNING, "Governor: writing %s %s of /%s failed: %s", t->file,
                               t->value, t->path, strerror(-t->r));
}

/* The io limits the governor has for c now; the class's iops limits stay. */
static size_t io_limits(const struct govern *g, const struct governor_class *c, struct pw_io_limit *io) {
        const struct pw_job_class *pc = classes_find(g->classes, c->name);

        for (size_t k = 0; k < c->n_io; k++) {
                io[k] = (struct pw_io_limit){ .major = c->io[k].major,
                                              .minor = c->io[k].minor,
                                              .read_bps = c->io[k].rbps,
                                              .write_bps = c->io[k].wbps,
                                              .read_iops = UNITS_MAX,
                                              .write_iops = UNITS_MAX };
                for (size_t j = 0; pc && j < pc->n_io; j++)
                        if (pc->io[j].major == io[k].major && pc->io[j].minor == io[k].minor) {
                                io[k].read_iops = pc->io[j].read_iops;
                                io[k].write_iops = pc->io[j].write_iops;
                        }
        }
        return c->n_io;
}

/* Carries out one action; *value describes it for the log.  Returns 1 when
 * a limit was written now (the reaction latency ends there). */
static int apply_one(struct govern *g, const struct governor_action *a, uint64_t wake_usec, char *value, size_t len) {
        struct governor_class *c = a->class;
        _cleanup_free_ struct pw_io_limit *io = NULL;
        int r;

        value[0] = '\0';
        switch (a->type) {
        case GOV_SET_MEMORY_HIGH:
                units_format_human(a->value, value, len);
                return backend_class_set_memory_high(g->backend, c->name, a->value, wake_usec, govern_write_done, g);
        case GOV_SET_IO:
                units_format_human(c->n_io ? (c->io[0].wbps != UNITS_MAX ? c->io[0].wbps : c->io[0].rbps) : 0, value,
                                   len);
                io = calloc(c->n_io + 1, sizeof(*io));
                if (!io)
                        return -ENOMEM;
                r = backend_class_set_io(g->backend, c->name, io, io_limits(g, c, io));
                return r < 0 ? r : 1;
        case GOV_FREEZE:
        case GOV_THAW:
                r = backend_class_freeze(g->backend, c->name, a->type == GOV_FREEZE);
                return r < 0 ? r : 0;
        }
        return -EINVAL;
}

/* Units placed by rule are jobs of their class, but their cgroups are their own: each gets the action too. */
static void apply_to_units(struct govern *g, const struct governor_action *a) {
        _cleanup_free_ struct pw_io_limit *io = NULL;
        size_t n_io = 0;

        if (a->type == GOV_SET_IO) {
                io = calloc(a->class->n_io + 1, sizeof(*io));
                if (!io)
                        return;
                n_io = io_limits(g, a->class, io);
        }
        for (struct job *j = g->jobs->list; j; j = j->next) {
                if (!j->unit || !streq(j->class, a->class->name))
                        continue;
                switch (a->type) {
                case GOV_SET_MEMORY_HIGH:
                        (void) backend_unit_set_memory_high(g->backend, j->unit, a->value);
                        break;
                case GOV_SET_IO:
                        (void) backend_unit_set_io(g->backend, j->unit, io, n_io);
                        break;
                case GOV_FREEZE:
                case GOV_THAW:
                        (void) backend_unit_freeze(g->backend, j->unit, a->type == GOV_FREEZE);
                        break;
                }
        }
}

static void apply_actions(struct govern *g, const struct governor_action *a, size_t n, uint64_t wake_usec) {
        for (size_t i = 0; i < n; i++) {
                struct governor_class *c = a[i].class;
                char v[32];
                int r = apply_one(g, &a[i], wake_usec, v, sizeof(v));

                if (backend_places_units(g->backend))
                        apply_to_units(g, &a[i]);

                if (r == 1 && wake_usec) { /* started now (systemd: the call is sent); else the worker reports */
                        uint64_t lat = now_usec(CLOCK_MONOTONIC) - wake_usec;

                        record_latency(g, lat);
                        log_info("Governor: reaction latency %" PRIu64
                                 " us from the trigger's wake-up to %s of class %s",
                                 lat, governor_action_name(a[i].type), c->name);
                }
                if (a[i].type == GOV_SET_MEMORY_HIGH || a[i].type == GOV_SET_IO)
                        wake_usec = 0; /* the latency is the first write's */
                g->actions++;
                const struct log_fields fields = {
                        .klass = c->name,
                        .action = a[i].type == GOV_FREEZE ? "freeze"
                                  : a[i].type == GOV_THAW ? "thaw"
                                  : a[i].relaxes          ? "relax"
                                                          : "tighten",
                };
                if (r < 0 && r != -ENOENT)
                        action_log_add_fields(g->log, LOG_LEVEL_WARNING, &fields, "Governor: %s on class %s failed: %s",
                                              governor_action_name(a[i].type), c->name, strerror(-r));
                else {
                        _cleanup_free_ char *path = backend_class_path(g->backend, c->name);

                        action_log_add_fields(g->log, LOG_LEVEL_NOTICE, &fields,
                                              "Governor: %s%s%s on class %s (/%s): %s", governor_action_name(a[i].type),
                                              v[0] ? " " : "", v, c->name, strempty(path), a[i].reason);
                }
        }
}

/* ---- readings ---- */

/* Keeps cur as the newest of two references a window apart (ref[0] is then one to two windows old). */
#define REF_ROTATE(ref, ref_usec, cur, now, window)             \
        do {                                                    \
                if (!(ref_usec)[1]) {                           \
                        (ref)[0] = (ref)[1] = (cur);            \
                        (ref_usec)[0] = (ref_usec)[1] = (now);  \
                } else if ((now) - (ref_usec)[1] >= (window)) { \
                        (ref)[0] = (ref)[1];                    \
                        (ref_usec)[0] = (ref_usec)[1];          \
                        (ref)[1] = (cur);                       \
                        (ref_usec)[1] = (now);                  \
                }                                               \
        } while (0)

static struct governor_class *class_find(struct govern *g, const char *name) {
        for (size_t i = 0; i < g->gov.n_classes; i++)
                if (streq(g->gov.classes[i].name, name))
                        return &g->gov.classes[i];
        return NULL;
}

/* Each class's jobs and usage, and what the running jobs did (their cgroups' counters summed): a read per class
 * with jobs and per unit placed by rule, whatever the number of jobs. */
static void update_class_readings(struct govern *g, uint64_t now) {
        struct govern_jobs_refs *jr = &g->jobs_refs;

        jr->now = (struct governor_jobs_sample){};
        for (size_t i = 0; i < g->gov.n_classes; i++) {
                struct governor_class *c = &g->gov.classes[i];
                _cleanup_free_ char *path = NULL;
                uint64_t before = jr->now.current;

                c->jobs = jobs_in_class(g->jobs, c->name);
                c->memory_current = 0;
                if (c->jobs == 0)
                        continue;
                path = backend_class_path(g->backend, c->name);
                if (path)
                        (void) pressure_jobs_add(g->backend->engine, path, &jr->now);
                c->memory_current = jr->now.current - before;
        }
        /* Units placed by rule are outside their class's cgroup. */
        for (struct job *j = g->jobs->list; j; j = j->next) {
                struct governor_class *c = j->unit ? class_find(g, j->class) : NULL;
                uint64_t before = jr->now.current;

                if (!c)
                        continue;
                (void) pressure_jobs_add(g->backend->engine, j->path, &jr->now);
                c->memory_current += jr->now.current - before;
        }
        REF_ROTATE(jr->ref, jr->ref_usec, jr->now, now, g->gov.window_usec);
}

/* Samples one application: true if it shows an early signal (why says which); its "auto" estimate follows,
 * and what it suffered since the last sample is added to r. */
static bool sample_watch(struct govern *g, struct govern_watch *w, char *why, size_t len, struct governor_reading *r) {
        struct governor_sample s;
        char what[128];
        bool fired;

        if (pressure_sample_read(g->backend->engine, w->path, &s) < 0)
                return false; /* gone: its triggers report that */
        (void) pressure_io_use_read(g->backend->engine, w->path, &s.io);
        if (w->sampled && g->gov.window_usec > 0)
                s.windows = (unsigned) ((r->now_usec - w->last_usec + g->gov.window_usec / 2) / g->gov.window_usec);
        if (s.some_avg10 > r->psi_avg10)
                r->psi_avg10 = s.some_avg10;
        fired = w->sampled && governor_early_signal_auto(&w->last, &s, w->auto_size && w->applied ? &w->est : NULL,
                                                         what, sizeof(what));
        if (fired)
                snprintf(why, len, "%s (/%s): %s", w->name, w->path, what);
        if (w->sampled) {
                r->stall_usec += s.some_total > w->last.some_total ? s.some_total - w->last.some_total : 0;
                /* Above what auto gives it, its reclaim is the pages it read once going, as auto chose: no harm. */
                if (!(w->auto_size && w->applied && s.current > w->est.gets))
                        r->pages += s.pgsteal > w->last.pgsteal ? s.pgsteal - w->last.pgsteal : 0;
        }
        if (w->auto_size)
                (void) governor_auto_estimate(&w->est, w->sampled ? &w->last : NULL, &s, g->lists_age);
        w->last = s;
        w->last_usec = r->now_usec;
        w->sampled = true;
        REF_ROTATE(w->ref, w->ref_usec, s, r->now_usec, g->gov.window_usec);
        return fired;
}

/* Could the running jobs cause what w shows (w NULL: the whole machine's trigger)?  Else it is logged (once
 * in a cooldown for each application) and counted, and not acted on. */
static bool jobs_can_cause(struct govern *g, struct govern_watch *w, bool io, const char *signal, uint64_t now) {
        const struct govern_jobs_refs *jr = &g->jobs_refs;
        bool app_history = w && w->sampled && w->ref_usec[0] < now, jobs_history = jr->ref_usec[0] < now;
        uint64_t *logged = w ? &w->held_off_usec : &g->held_off_machine_usec;
        char why[160];

        if (governor_jobs_can_cause(app_history ? &w->ref[0] : NULL, app_history ? &w->last : NULL,
                                    jobs_history ? &jr->ref[0] : NULL, jobs_history ? &jr->now : NULL, io, why,
                                    sizeof(why)))
                return true;
        g->held_off++;
        snprintf(g->held_off_why, sizeof(g->held_off_why), "%s: %s", signal, why);
        if (!*logged || now - *logged >= g->gov.cooldown_usec) {
                *logged = now;
                action_log_add(g->log, LOG_LEVEL_NOTICE,
                               "Governor: not acting on %s: %s; limiting the jobs cannot help", signal, why);
        }
        return false;
}

/* What protection may take now: RAM less the reserve, the floors of the classes running jobs, and the fixed
 * memory.min of the policy's entries; *floors says the floors' part. */
static uint64_t auto_available(const struct govern *g, uint64_t *floors) {
        *floors = 0;
        for (size_t i = 0; i < g->gov.n_classes; i++) {
                const struct governor_class *c = &g->gov.classes[i];

                if (c->jobs > 0 && c->floor_high != UNITS_MAX) /* the least the governor leaves them */
                        *floors += c->floor_high;
        }
        return governor_auto_available(g->ram_bytes, g->reserve, *floors, g->fixed_min);
}

/* "auto": protect what each application needs while jobs run, within what the reserve leaves. */
static void apply_auto(struct govern *g) {
        uint64_t floors, available = auto_available(g, &floors);
        bool changed = false;
        size_t n = 0;

        for (size_t i = 0; i < g->n_watches; i++)
                if (g->watches[i].auto_size && g->watches[i].est.source != GOVERNOR_AUTO_NONE)
                        g->autos[n++] = &g->watches[i].est;
        (void) governor_auto_share(g->autos, n, available);
        for (size_t i = 0; i < g->n_watches; i++) {
                struct govern_watch *w = &g->watches[i];
                char v[32], want[32], reserve[32], fl[32];

                if (!w->auto_size || w->est.source == GOVERNOR_AUTO_NONE || w->est.gets == w->applied)
                        continue;
                w->applied = w->est.gets;
                changed = true;
                units_format_human(w->est.gets, v, sizeof(v));
                if (w->est.gets < w->est.want) {
                        units_format_human(w->est.want, want, sizeof(want));
                        units_format_human(g->reserve, reserve, sizeof(reserve));
                        units_format_human(floors, fl, sizeof(fl));
                        action_log_add(g->log, LOG_LEVEL_WARNING,
                                       "Governor: protect %s (/%s) with %s of the %s it needs while jobs run (auto: "
                                       "%s; the reserve, %s, and the running jobs' floors, %s, keep the rest)",
                                       w->name, w->path, v, want, governor_auto_source_name(w->est.source), reserve,
                                       fl);
                } else
                        action_log_add(g->log, LOG_LEVEL_NOTICE,
                                       "Governor: protect %s (/%s) with %s while jobs run (auto: %s)", w->name, w->path,
                                       v, governor_auto_source_name(w->est.source));
                g->actions++;
                if (protect_set_auto(g->protect, w->name, w->est.gets) < 0)
                        log_error("Governor: out of memory");
        }
        if (changed)
                (void) protect_apply(g->protect, g->policy);
}

/* Samples watch i; its early signal, if the jobs could cause it, is the tick's reason (the first one). */
static void sample_in_turn(struct govern *g, size_t i, struct governor_reading *r, char *why, size_t len) {
        struct govern_watch *w = &g->watches[i];
        char what[160];

        if (sample_watch(g, w, what, sizeof(what), r) && !why[0] && jobs_can_cause(g, w, false, what, r->now_usec))
                snprintf(why, len, "%s", what);
}

static void govern_run(struct govern *g, uint64_t wake_usec) {
        struct governor_action actions[GOVERNOR_MAX_ACTIONS];
        struct governor_reading r = { .now_usec = now_usec(CLOCK_MONOTONIC) };
        char why[160] = "";
        size_t n;

        size_t slice = g->n_watches < GOVERN_SAMPLES_PER_TICK ? g->n_watches : GOVERN_SAMPLES_PER_TICK;

        update_class_readings(g, r.now_usec); /* first: which classes run jobs (their floors) sizes "auto" */
        /* The applications in turn, at most GOVERN_SAMPLES_PER_TICK a tick (each file read costs, under
         * emulation most of all); one whose trigger fired is read now whatever its turn. */
        for (size_t k = 0; k < slice; k++)
                sample_in_turn(g, (g->next_watch + k) % g->n_watches, &r, why, sizeof(why));
        if (g->n_watches > 0)
                g->next_watch = (g->next_watch + slice) % g->n_watches;
        if (g->triggered && g->trig_watch >= 0 && (size_t) g->trig_watch < g->n_watches &&
            g->watches[g->trig_watch].last_usec != r.now_usec)
                sample_in_turn(g, (size_t) g->trig_watch, &r, why, sizeof(why));
        g->sampled_usec = r.now_usec;
        apply_auto(g);
        if (g->triggered) {
                g->triggered = false;
                r.pressure = jobs_can_cause(g, g->trig_watch >= 0 ? &g->watches[g->trig_watch] : NULL, g->trig_io,
                                            g->why, r.now_usec);
                r.why = g->why;
        }
        if (!r.pressure && why[0]) {
                r.pressure = true;
                r.why = why;
        }
        n = governor_step(&g->gov, &r, actions, ELEMENTSOF(actions));
        apply_actions(g, actions, n, wake_usec);
        /* Nothing runs any more and every limit is back: the governor sleeps. */
        govern_update(g);
}

/* ---- events ---- */

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct govern *g = userdata;
        uint64_t wake = now_usec(CLOCK_MONOTONIC);
        bool found = false;

        for (size_t i = 0; i < g->n_watches && !found; i++)
                for (int k = 0; k < 2 && !found; k++) {
                        struct govern_watch *w = &g->watches[i];

                        if (w->fd[k] != fd)
                                continue;
                        if (revents & EPOLLERR) { /* the cgroup is gone */
                                log_info("Governor: %s (/%s) is gone, not watched any more", w->name, w->path);
                                pressure_trigger_release(g->backend->worker, &w->fd[k], &w->src[k]);
                                return 0;
                        }
                        snprintf(g->why, sizeof(g->why), "PSI trigger: %s (/%s) %s", w->name, w->path,
                                 k == 0 ? "memory.pressure" : "io.pressure");
                        g->trig_watch = (ssize_t) i;
                        g->trig_io = k == 1;
                        found = true;
                }
        if (!found && fd == g->sys_fd) {
                snprintf(g->why, sizeof(g->why), "PSI trigger: the whole machine (/proc/pressure/memory full)");
                g->trig_watch = -1;
                g->trig_io = false;
                found = true;
        }
        if (!found)
                return 0;
        log_debug("Governor: %s", g->why);
        g->triggered = true;
        /* React now, not at the next tick: this is what the latency measures. */
        govern_run(g, wake);
        return 0;
}

static bool watched(const struct govern *g, const char *name) {
        for (size_t i = 0; i < g->n_watches; i++)
                if (streq(g->watches[i].name, name))
                        return true;
        return false;
}

/* The protected units whose cgroup PID 1 had not said yet at the start: watched from the tick after its answer. */
static void watches_complete(struct govern *g) {
        g->asking = false;
        for (size_t i = 0; i < g->policy->n_protects; i++) {
                const struct pw_protect *pr = &g->policy->protects[i];

                if (pr->unit && !watched(g, pr->name) && watch_open(g, pr, &g->watches[g->n_watches])) {
                        log_info("Governor: watching %s (/%s) too", pr->name, g->watches[g->n_watches].path);
                        g->n_watches++;
                }
        }
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct govern *g = userdata;

        if (g->asking)
                watches_complete(g);
        govern_run(g, 0);
        if (g->active) {
                (void) sd_event_source_set_time_relative(s, g->gov.window_usec);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* ---- activation ---- */

static bool protects_something(const struct govern *g) {
        for (size_t i = 0; i < g->policy->n_protects; i++)
                if (g->policy->protects[i].cgroup ||
                    (g->policy->protects[i].unit && backend_protects_units(g->backend)))
                        return true;
        return false;
}

bool govern_needs_machine_trigger(const struct govern *g) {
        for (size_t i = 0; i < g->n_watches; i++)
                for (int k = 0; k < 2; k++)
                        if (g->watches[i].fd[k] >= 0 || g->watches[i].arming[k])
                                return false; /* one armed, or being armed by the worker */
        return true;
}

static bool needed(const struct govern *g) {
        if (g->stopping)
                return false;
        return (g->jobs->n > 0 && protects_something(g)) || (g->active && !governor_at_rest(&g->gov));
}

/* "some" on a protected application: any of its tasks stalled; "full" on the
 * machine: everything stalled at once (a job throttled by its own
 * memory.high alone makes "some" pressure on the machine all the time). */
static int arm(struct govern *g, const char *path, const char *resource, const char *kind, int *fd,
               sd_event_source **src) {
        uint64_t window = g->settings->pressure.window_usec;

        return pressure_trigger_open(g->event, g->backend->engine, path, resource, kind,
                                     window * g->settings->pressure.threshold / UNITS_PERCENT_FULL, window, on_trigger,
                                     g, fd, src);
}

/* The machine's trigger on while no application has one of its own (govern_needs_machine_trigger), else closed
 * off the loop. */
static void machine_trigger_update(struct govern *g) {
        int r;

        if (g->mount->psi && govern_needs_machine_trigger(g)) {
                if (g->sys_fd >= 0)
                        pressure_trigger_enable(g->sys_fd, g->sys_src, true);
                else {
                        r = arm(g, NULL, "memory", "full", &g->sys_fd, &g->sys_src);
                        if (r < 0)
                                log_warning_errno(r, "Governor: no PSI trigger on /proc/pressure/memory: %m");
                }
        } else
                pressure_trigger_release(g->backend->worker, &g->sys_fd, &g->sys_src);
}

/* The watch (in this run's or the parked ones) whose trigger k the worker arms under token. */
static struct govern_watch *arming_watch(struct govern *g, uint64_t token, int *ret_k, bool *ret_parked) {
        for (size_t i = 0; i < g->n_watches + g->n_parked; i++) {
                struct govern_watch *w = i < g->n_watches ? &g->watches[i] : &g->parked[i - g->n_watches];

                for (int k = 0; k < 2; k++)
                        if (w->arming[k] == token) {
                                *ret_k = k;
                                *ret_parked = i >= g->n_watches;
                                return w;
                        }
        }
        return NULL;
}

/* A trigger the worker armed: watched if its watch is still there (off while the governor sleeps), else closed
 * off the loop (a reload or the governor's stop dropped the watch meanwhile). */
static void on_armed(void *userdata, const struct worker_task *t) {
        struct govern *g = userdata;
        struct govern_watch *w;
        bool parked = false;
        int k = 0, r = t->r;

        w = arming_watch(g, t->token, &k, &parked);
        if (w)
                w->arming[k] = 0;
        if (r >= 0 && w) {
                r = pressure_trigger_watch(g->event, t->fd, on_trigger, g, &w->src[k]);
                if (r >= 0) {
                        w->fd[k] = t->fd;
                        if (!g->active || parked)
                                (void) pressure_trigger_enable(w->fd[k], w->src[k], false);
                }
        }
        if ((r < 0 || !w) && t->fd >= 0)
                (void) worker_close(g->backend->worker, t->fd, NULL, NULL);
        if (r < 0 && w)
                log_warning_errno(r,
                                  "Governor: no PSI trigger on %s (/%s) %s.pressure: %m; its memory counters are "
                                  "still read",
                                  w->name, w->path, k == 0 ? "memory" : "io");
        /* The machine's trigger is the fallback while no application has one: none got one after all, or the
         * first has one now. */
        if (w && g->active && !parked)
                machine_trigger_update(g);
}

/* Arms w's two triggers: by the worker when there is one (the loop does not wait for the kernel), else here. */
static void watch_arm(struct govern *g, struct govern_watch *w) {
        const char *resources[2] = { "memory", "io" };
        uint64_t window = g->settings->pressure.window_usec;
        uint64_t stall = window * g->settings->pressure.threshold / UNITS_PERCENT_FULL;
        int r = 0;

        for (int k = 0; k < 2 && r >= 0; k++) {
                if (g->backend->worker) {
                        w->arming[k] = ++g->arm_token;
                        r = pressure_trigger_arm(g->backend->worker, w->path, resources[k], "some", stall, window,
                                                 w->arming[k], on_armed, g);
                        if (r < 0)
                                w->arming[k] = 0;
                } else
                        r = arm(g, w->path, resources[k], "some", &w->fd[k], &w->src[k]);
        }
        if (r < 0)
                log_warning_errno(r, "Governor: no PSI trigger on %s (/%s): %m; its memory counters are still read",
                                  w->name, w->path);
}

static void watch_close(struct govern_watch *w) {
        pressure_trigger_close(&w->fd[0], &w->src[0]);
        pressure_trigger_close(&w->fd[1], &w->src[1]);
        w->name = mfree(w->name);
        w->path = mfree(w->path);
}

/* Closes w's triggers off the loop. */
static void watch_release(struct govern *g, struct govern_watch *w) {
        pressure_trigger_release(g->backend->worker, &w->fd[0], &w->src[0]);
        pressure_trigger_release(g->backend->worker, &w->fd[1], &w->src[1]);
        w->name = mfree(w->name);
        w->path = mfree(w->path);
}

/* w (its name and path set) takes the triggers of a parked watch of the same application and cgroup, turned
 * on again; false if there is none. */
static bool watch_unpark(struct govern *g, struct govern_watch *w) {
        for (size_t i = 0; i < g->n_parked; i++) {
                struct govern_watch *p = &g->parked[i];

                bool alive = true;

                if (!p->name || !streq(p->name, w->name) || !streq(p->path, w->path))
                        continue;
                /* (One the worker still arms is taken as it will be: on when it comes, as this run's.) */
                for (int k = 0; k < 2; k++)
                        alive = alive &&
                                (p->arming[k] ||
                                 (p->fd[k] >= 0 && (g->kept_on || pressure_trigger_enable(p->fd[k], p->src[k], true))));
                if (!alive) { /* the cgroup went while the governor slept: new triggers */
                        watch_release(g, p);
                        return false;
                }
                for (int k = 0; k < 2; k++) {
                        w->fd[k] = p->fd[k];
                        w->src[k] = p->src[k];
                        w->arming[k] = p->arming[k];
                        p->fd[k] = -1;
                        p->src[k] = NULL;
                        p->arming[k] = 0;
                }
                watch_close(p); /* its strings; its triggers are w's now */
                return true;
        }
        return false;
}

/* Finds a protected application's cgroup and arms its triggers; false if it is not there (yet). */
static bool watch_open(struct govern *g, const struct pw_protect *pr, struct govern_watch *w) {
        int r;

        *w = (struct govern_watch){ .fd = { -1, -1 } };
        r = backend_protect_path(g->backend, pr, &w->path);
        if (r == -EINPROGRESS)
                g->asking = true;
        if (r < 0) {
                log_debug("Governor: %s is not watched%s: %s", pr->name, r == -EINPROGRESS ? " yet" : "", strerror(-r));
                return false;
        }
        w->name = strdup(pr->name);
        if (!w->name) {
                w->path = mfree(w->path);
                return false;
        }
        w->auto_size = pr->min.mode == PW_PROTECT_AUTO || pr->low.mode == PW_PROTECT_AUTO;
        if (g->mount->psi && !watch_unpark(g, w))
                watch_arm(g, w);
        return true;
}

/* Whether the multi-generational LRU is on (/sys/kernel/mm/lru_gen/enabled, a bit mask: bit 0 is the LRU's). */
static bool mglru_enabled(void) {
        _cleanup_fclose_ FILE *f = fopen("/sys/kernel/mm/lru_gen/enabled", "re");
        unsigned long v = 0;

        return f && fscanf(f, "%lx", &v) == 1 && (v & 1);
}

static void govern_start(struct govern *g) {
        int r;

        governor_init(&g->gov, g->settings, g->ram_bytes);
        g->jobs_refs = (struct govern_jobs_refs){};
        g->reserve = governor_reserve(g->settings->reserve, g->ram_bytes);
        g->lists_age = !mglru_enabled();
        g->gov.classes = calloc(g->policy->n_classes + 1, sizeof(struct governor_class));
        g->watches = calloc(g->policy->n_protects + 1, sizeof(struct govern_watch));
        g->autos = calloc(g->policy->n_protects + 1, sizeof(*g->autos));
        if (!g->gov.classes || !g->watches || !g->autos) {
                log_error("Governor: out of memory");
                g->gov.classes = mfree(g->gov.classes);
                g->watches = mfree(g->watches);
                g->autos = mfree(g->autos);
                return;
        }
        /* What the policy's fixed memory.min take from "auto" (the policy changes only at a reload, which
         * starts the governor again). */
        g->fixed_min = 0;
        for (size_t i = 0; i < g->policy->n_protects; i++)
                if (g->policy->protects[i].min.mode == PW_PROTECT_BYTES)
                        g->fixed_min += g->policy->protects[i].min.bytes;
        for (size_t i = 0; i < g->policy->n_classes; i++) {
                const struct pw_job_class *pc = classes_find(g->classes, g->policy->classes[i].name);

                if (pc && governor_class_init(&g->gov.classes[g->gov.n_classes], pc) >= 0)
                        g->gov.n_classes++;
                else
                        log_error("Governor: out of memory; class %s is not governed", g->policy->classes[i].name);
        }
        g->asking = false;
        for (size_t i = 0; i < g->policy->n_protects; i++)
                g->n_watches += watch_open(g, &g->policy->protects[i], &g->watches[g->n_watches]);
        /* What the last run watched and this one does not (a reload changed it): closed off the loop. */
        for (size_t i = 0; i < g->n_parked; i++)
                watch_release(g, &g->parked[i]);
        g->parked = mfree(g->parked);
        g->n_parked = 0;
        machine_trigger_update(g);
        r = sd_event_add_time_relative(g->event, &g->tick, CLOCK_MONOTONIC, g->gov.window_usec, 0, on_tick, g);
        if (r < 0)
                log_error_errno(r, "Governor: cannot start its timer: %m");
        else
                (void) sd_event_source_set_description(g->tick, "governor-tick");
        g->active = true;
        g->sampled_usec = 0;
        log_info("Governor: watching %zu protected application%s while %u job%s run%s", g->n_watches,
                 g->n_watches == 1 ? "" : "s", g->jobs->n, g->jobs->n == 1 ? "" : "s", g->jobs->n == 1 ? "s" : "");
        /* The first sample sets the baselines and the "auto" protection (after a reload: at the tick). */
        if (!g->pausing)
                govern_run(g, 0);
}

/* A class the governor changed gets the policy's limits again, thawed. */
static void class_reset(struct govern *g, const struct governor_class *c) {
        const struct pw_job_class *pc = classes_find(g->classes, c->name);

        if (c->frozen)
                (void) backend_class_freeze(g->backend, c->name, false);
        if (pc && !governor_class_at_rest(c))
                (void) backend_class_apply(g->backend, pc);
        for (struct job *j = g->jobs->list; j && pc && !governor_class_at_rest(c); j = j->next)
                if (j->unit && streq(j->class, c->name)) {
                        if (c->frozen)
                                (void) backend_unit_freeze(g->backend, j->unit, false);
                        (void) backend_unit_apply(g->backend, j->unit, pc);
                }
}

static struct govern_tally *tally_find(const struct govern *g, const char *class) {
        for (size_t i = 0; i < g->n_tallies; i++)
                if (streq(g->tallies[i].name, class))
                        return &g->tallies[i];
        return NULL;
}

/* Keeps the counts of a class the governor stops governing, for status. */
static void tally_add(struct govern *g, const struct governor_class *c) {
        struct govern_tally *t = tally_find(g, c->name);

        if (!t) {
                if (GROW(g->tallies, g->allocated_tallies, g->n_tallies + 1) < 0) {
                        log_error("Governor: out of memory; the counts of class %s are lost", c->name);
                        return;
                }
                t = &g->tallies[g->n_tallies++];
                *t = (struct govern_tally){};
                snprintf(t->name, sizeof(t->name), "%s", c->name);
        }
        t->counts.tightened += c->n_tightened;
        t->counts.relaxed += c->n_relaxed;
        t->counts.frozen += c->n_frozen;
        t->counts.undone += c->n_unhelpful;
}

/* The triggers of the watches w, and the machine's, off (the governor sleeps; they stay open for its next run). */
static void park_off(struct govern_watch *w, size_t n, struct govern *g) {
        pressure_trigger_enable(g->sys_fd, g->sys_src, false);
        for (size_t i = 0; i < n; i++)
                for (int k = 0; k < 2; k++)
                        pressure_trigger_enable(w[i].fd[k], w[i].src[k], false);
}

void govern_stop(struct govern *g) {
        bool had_auto = false;

        if (!g->active)
                return;
        g->active = false;
        g->sampled_usec = 0;
        g->tick = sd_event_source_disable_unref(g->tick);
        for (size_t i = 0; i < g->n_watches; i++)
                had_auto = had_auto || g->watches[i].applied;
        /* Closing a trigger waits in the kernel: kept for the next run (off), or closed off the loop. */
        assert(g->n_parked == 0);
        if (g->stopping) {
                pressure_trigger_release(g->backend->worker, &g->sys_fd, &g->sys_src);
                for (size_t i = 0; i < g->n_watches; i++)
                        watch_release(g, &g->watches[i]);
                g->watches = mfree(g->watches);
        } else {
                g->kept_on = g->pausing; /* a reload's: its triggers stay on for govern_resume */
                if (!g->kept_on)
                        park_off(g->watches, g->n_watches, g);
                g->parked = TAKE_PTR(g->watches);
                g->n_parked = g->n_watches;
        }
        g->n_watches = 0;
        g->asking = false;
        for (size_t i = 0; i < g->gov.n_classes; i++) {
                class_reset(g, &g->gov.classes[i]);
                tally_add(g, &g->gov.classes[i]);
                governor_class_done(&g->gov.classes[i]);
        }
        g->gov.classes = mfree(g->gov.classes);
        g->gov.n_classes = 0;
        g->autos = mfree(g->autos);
        /* "auto" protection lasts while jobs run; at a stop it stays, like the rest. */
        protect_clear_auto(g->protect);
        if (had_auto && !g->stopping)
                (void) protect_apply(g->protect, g->policy);
        log_info("Governor: idle (no job runs or nothing is protected): no timer, its triggers off");
}

void govern_pause(struct govern *g) {
        g->pausing = true;
        govern_stop(g);
}

void govern_resume(struct govern *g) {
        govern_update(g);
        if (!g->active) /* it sleeps after all: what stayed on goes off */
                park_off(g->parked, g->n_parked, g);
        g->pausing = g->kept_on = false;
}

void govern_update(struct govern *g) {
        bool need = needed(g);

        if (need && !g->active)
                govern_start(g);
        else if (!need && g->active)
                govern_stop(g);
}

/* ---- status ---- */

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Cumulative, as Prometheus has them: [{"le_us": 250, "count": N}, ...]; those above the last are only in count. */
static json_object *buckets_json(const struct govern *g) {
        json_object *buckets = json_object_new_array();
        uint64_t n = 0;

        for (size_t i = 0; i < GOVERN_LATENCY_BUCKETS; i++) {
                json_object *b = json_object_new_object();

                n += g->latency_buckets[i];
                json_object_object_add(b, "le_us", json_object_new_uint64(latency_bounds_usec[i]));
                json_object_object_add(b, "count", json_object_new_uint64(n));
                json_object_array_add(buckets, b);
        }
        return buckets;
}

static json_object *latency_json(const struct govern *g) {
        json_object *lat = json_object_new_object();
        unsigned n = g->n_latencies < GOVERN_LATENCIES ? g->n_latencies : GOVERN_LATENCIES;
        uint64_t sorted[GOVERN_LATENCIES];

        memcpy(sorted, g->latencies, n * sizeof(uint64_t));
        qsort(sorted, n, sizeof(uint64_t), cmp_u64);
        json_object_object_add(lat, "count", json_object_new_uint64(g->n_latencies));
        json_object_object_add(lat, "median_us", n ? json_object_new_uint64(sorted[n / 2]) : NULL);
        json_object_object_add(lat, "max_us", n ? json_object_new_uint64(sorted[n - 1]) : NULL);
        json_object_object_add(lat, "longest_write_us", json_object_new_uint64(g->write_usec_max));
        json_object_object_add(lat, "sum_us", json_object_new_uint64(g->latency_sum_usec));
        json_object_object_add(lat, "buckets", buckets_json(g));
        return lat;
}

static json_object *class_json(const struct governor_class *c) {
        json_object *co = json_object_new_object(), *io = json_object_new_array();

        json_object_object_add(co, "name", json_object_new_string(c->name));
        json_object_object_add(co, "memory_high_configured", protocol_limit_json(c->configured_high));
        json_object_object_add(co, "memory_high", protocol_limit_json(c->high));
        for (size_t k = 0; k < c->n_io; k++) {
                json_object *d = json_object_new_object();
                char dev[32];

                snprintf(dev, sizeof(dev), "%u:%u", c->io[k].major, c->io[k].minor);
                json_object_object_add(d, "device", json_object_new_string(dev));
                json_object_object_add(d, "read_bps", protocol_limit_json(c->io[k].rbps));
                json_object_object_add(d, "write_bps", protocol_limit_json(c->io[k].wbps));
                json_object_array_add(io, d);
        }
        json_object_object_add(co, "io", io);
        json_object_object_add(co, "frozen", json_object_new_boolean(c->frozen));
        json_object_object_add(co, "tightened", json_object_new_uint64(c->n_tightened));
        json_object_object_add(co, "relaxed", json_object_new_uint64(c->n_relaxed));
        json_object_object_add(co, "frozen_times", json_object_new_uint64(c->n_frozen));
        json_object_object_add(co, "undone", json_object_new_uint64(c->n_unhelpful));
        json_object_object_add(co, "last_action", c->last_action[0] ? json_object_new_string(c->last_action) : NULL);
        return co;
}

json_object *govern_json(const struct govern *g) {
        json_object *o = json_object_new_object(), *classes = json_object_new_array();

        json_object_object_add(o, "active", json_object_new_boolean(g->active));
        json_object_object_add(o, "under_pressure", json_object_new_boolean(g->active && g->gov.under_pressure));
        json_object_object_add(o, "actions", json_object_new_uint64(g->actions));
        json_object_object_add(o, "held_off", json_object_new_uint64(g->held_off));
        json_object_object_add(o, "last_held_off", g->held_off_why[0] ? json_object_new_string(g->held_off_why) : NULL);
        json_object_object_add(o, "reaction_latency", latency_json(g));
        for (size_t i = 0; g->active && i < g->gov.n_classes; i++)
                json_object_array_add(classes, class_json(&g->gov.classes[i]));
        json_object_object_add(o, "classes", classes);
        return o;
}

const struct governor_auto *govern_auto_of(const struct govern *g, const char *name) {
        for (size_t i = 0; g->active && i < g->n_watches; i++)
                if (g->watches[i].auto_size && streq(g->watches[i].name, name))
                        return &g->watches[i].est;
        return NULL;
}

/* How many ticks it takes to read every application once. */
static size_t govern_turns(const struct govern *g) {
        return g->n_watches <= GOVERN_SAMPLES_PER_TICK
                       ? 1
                       : (g->n_watches + GOVERN_SAMPLES_PER_TICK - 1) / GOVERN_SAMPLES_PER_TICK;
}

bool govern_recent_samples(const struct govern *g, uint64_t now_usec, uint64_t max_age_usec,
                           void (*fn)(void *userdata, const char *name, const struct governor_sample *s),
                           void *userdata) {
        if (!g->active || g->sampled_usec == 0 || g->sampled_usec > now_usec ||
            now_usec - g->sampled_usec > max_age_usec)
                return false;
        for (size_t i = 0; i < g->n_watches; i++) {
                const struct govern_watch *w = &g->watches[i];

                /* read within its last turn (the applications are read in turns: one a tick could not
                 * read is left out) */
                if (w->sampled && w->last_usec <= now_usec && now_usec - w->last_usec <= max_age_usec * govern_turns(g))
                        fn(userdata, w->name, &w->last);
        }
        return true;
}

void govern_class_counts(const struct govern *g, const char *class, struct govern_counts *ret) {
        const struct govern_tally *t = tally_find(g, class);

        *ret = t ? t->counts : (struct govern_counts){};
        for (size_t i = 0; g->active && i < g->gov.n_classes; i++)
                if (streq(g->gov.classes[i].name, class)) {
                        ret->tightened += g->gov.classes[i].n_tightened;
                        ret->relaxed += g->gov.classes[i].n_relaxed;
                        ret->frozen += g->gov.classes[i].n_frozen;
                        ret->undone += g->gov.classes[i].n_unhelpful;
                }
}

static json_object *auto_json(const struct govern_watch *w) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "name", json_object_new_string(w->name));
        json_object_object_add(o, "needs", json_object_new_uint64(w->est.want));
        json_object_object_add(o, "gets", json_object_new_uint64(w->est.gets));
        json_object_object_add(o, "source", json_object_new_string(governor_auto_source_name(w->est.source)));
        return o;
}

json_object *govern_beliefs_json(const struct govern *g, const char *class) {
        json_object *o = json_object_new_object(), *autos = json_object_new_array();
        const char *last = NULL;

        for (size_t i = 0; g->active && i < g->n_watches; i++)
                if (g->watches[i].auto_size && g->watches[i].est.source != GOVERNOR_AUTO_NONE)
                        json_object_array_add(autos, auto_json(&g->watches[i]));
        for (size_t i = 0; g->active && i < g->gov.n_classes; i++)
                if (streq(g->gov.classes[i].name, class) && g->gov.classes[i].last_action[0])
                        last = g->gov.classes[i].last_action;
        json_object_object_add(o, "auto", autos);
        json_object_object_add(o, "reserve", g->active ? json_object_new_uint64(g->reserve) : NULL);
        json_object_object_add(o, "class_last_action", last ? json_object_new_string(last) : NULL);
        json_object_object_add(o, "last_held_off", g->held_off_why[0] ? json_object_new_string(g->held_off_why) : NULL);
        return o;
}
