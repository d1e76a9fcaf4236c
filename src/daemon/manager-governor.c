/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The governor's wiring: PSI triggers on every protected application's
 * memory.pressure and io.pressure and on /proc/pressure/memory, and a timer
 * that reads the earlier signals (its pages being reclaimed, refaults, major
 * faults, swap growing, memory.events low).  All of it exists only while
 * jobs run and something is protected, or while limits are still to be
 * given back: an idle daemon keeps no timer and reads nothing.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <time.h>

#include "log.h"
#include "manager.h"
#include "units.h"

/* Early signals, per sampling window: this much counts as pressure. */
#define SIGNAL_PAGES 256                     /* pages reclaimed, refaulted or faulted in */
#define SIGNAL_SWAP_BYTES (UINT64_C(1) << 20) /* swap growth */

static uint64_t now_monotonic(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

uint64_t manager_auto_protection(struct manager *m, const struct pw_protect *pr) {
        for (size_t i = 0; m->gov_active && i < m->n_watches; i++)
                if (streq(m->watches[i].name, pr->name))
                        return m->watches[i].auto_bytes;
        return 0;
}

/* ---- triggers ---- */

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* "some" on a protected application: any of its tasks stalled; "full" on the
 * machine: everything stalled at once (a job throttled by its own
 * memory.high alone makes "some" pressure on the machine all the time). */
static int open_trigger(struct manager *m, const char *file, const char *kind, int *ret_fd, sd_event_source **ret_src) {
        uint64_t window = m->settings.pressure.window_usec;
        uint64_t stall = window * m->settings.pressure.threshold / UNITS_PERCENT_FULL;
        char spec[64];
        int fd, r;

        if (stall == 0)
                stall = 1;
        fd = open(file, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        snprintf(spec, sizeof(spec), "%s %" PRIu64 " %" PRIu64, kind, stall, window);
        if (write(fd, spec, strlen(spec) + 1) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        r = sd_event_add_io(m->event, ret_src, fd, EPOLLPRI, on_trigger, m);
        if (r < 0) {
                close(fd);
                return r;
        }
        (void) sd_event_source_set_description(*ret_src, "psi-trigger");
        *ret_fd = fd;
        return 0;
}

static void close_trigger(int *fd, sd_event_source **src) {
        *src = sd_event_source_disable_unref(*src);
        closep(fd);
        *fd = -1;
}

/* ---- applying actions ---- */

static void record_latency(struct manager *m, uint64_t usec) {
        m->latencies[m->n_latencies % MANAGER_LATENCIES] = usec;
        m->n_latencies++;
}

void manager_governor_write_done(struct manager *m, const struct worker_task *t) {
        if (t->wake_usec) {
                uint64_t lat = t->start_usec - t->wake_usec;

                record_latency(m, lat);
                log_info("Governor: reaction latency %" PRIu64 " us from the trigger's wake-up to writing %s of /%s; "
                         "the write (reclaim down to the new limit) took %" PRIu64 " us",
                         lat, t->file, t->path, t->end_usec - t->start_usec);
        }
        if (t->end_usec - t->start_usec > m->write_usec_max)
                m->write_usec_max = t->end_usec - t->start_usec;
        if (t->r < 0 && t->r != -ENOENT)
                manager_action(m, LOG_LEVEL_WARNING, "Governor: writing %s %s of /%s failed: %s", t->file, t->value,
                               t->path, strerror(-t->r));
}

static void apply_actions(struct manager *m, struct governor_action *a, size_t n, uint64_t wake_usec) {
        bool first_write = wake_usec != 0;

        for (size_t i = 0; i < n; i++) {
                struct governor_class *c = a[i].class;
                char v[32];
                int r = 0;

                switch (a[i].type) {
                case GOV_SET_MEMORY_HIGH:
                        r = m->backend->ops->class_set_memory_high(m->backend, c->name, a[i].value,
                                                                   first_write ? wake_usec : 0);
                        if (r == 1 && first_write) { /* started now (systemd: the call is sent) */
                                uint64_t lat = now_monotonic() - wake_usec;

                                record_latency(m, lat);
                                log_info("Governor: reaction latency %" PRIu64 " us from the trigger's wake-up to setting "
                                         "MemoryHigh of class %s",
                                         lat, c->name);
                        }
                        first_write = false;
                        units_format_human(a[i].value, v, sizeof(v));
                        break;
                case GOV_SET_IO: {
                        struct pw_io_limit io[GOVERNOR_MAX_IO];

                        for (size_t k = 0; k < c->n_io; k++)
                                io[k] = (struct pw_io_limit){ .major = c->io[k].major, .minor = c->io[k].minor,
                                                              .read_bps = c->io[k].rbps, .write_bps = c->io[k].wbps,
                                                              .read_iops = UNITS_MAX, .write_iops = UNITS_MAX };
                        /* The policy's iops limits stay. */
                        for (size_t k = 0; k < c->n_io; k++) {
                                const struct pw_job_class *pc = policy_find_class(&m->policy, c->name);

                                for (size_t j = 0; pc && j < pc->n_io; j++)
                                        if (pc->io[j].major == io[k].major && pc->io[j].minor == io[k].minor) {
                                                io[k].read_iops = pc->io[j].read_iops;
                                                io[k].write_iops = pc->io[j].write_iops;
                                        }
                        }
                        r = m->backend->ops->class_set_io(m->backend, c->name, io, c->n_io);
                        units_format_human(c->n_io ? (c->io[0].wbps != UNITS_MAX ? c->io[0].wbps : c->io[0].rbps) : 0, v,
                                           sizeof(v));
                        break;
                }
                case GOV_FREEZE:
                case GOV_THAW:
                        r = m->backend->ops->class_freeze(m->backend, c->name, a[i].type == GOV_FREEZE);
                        v[0] = '\0';
                        break;
                }
                if (first_write && r >= 0 && a[i].type == GOV_SET_IO) {
                        uint64_t lat = now_monotonic() - wake_usec;

                        record_latency(m, lat);
                        log_info("Governor: reaction latency %" PRIu64 " us from the trigger's wake-up to io.max written", lat);
                        first_write = false;
                }
                m->gov_actions++;
                if (r < 0 && r != -ENOENT)
                        manager_action(m, LOG_LEVEL_WARNING, "Governor: %s on class %s failed: %s", governor_action_name(a[i].type),
                                       c->name, strerror(-r));
                else {
                        _cleanup_free_ char *path = m->backend->ops->class_path(m->backend, c->name);

                        manager_action(m, LOG_LEVEL_NOTICE, "Governor: %s%s%s on class %s (/%s): %s",
                                       governor_action_name(a[i].type), v[0] ? " " : "", v, c->name, strempty(path),
                                       a[i].reason);
                }
        }
}

/* ---- readings ---- */

static void update_class_readings(struct manager *m) {
        for (size_t i = 0; i < m->gov.n_classes; i++) {
                struct governor_class *c = &m->gov.classes[i];
                _cleanup_free_ char *path = m->backend->ops->class_path(m->backend, c->name);

                c->jobs = manager_class_jobs(m, c->name);
                if (!path || cgroup_read_u64(m->engine, path, "memory.current", &c->memory_current) < 0)
                        c->memory_current = 0;
        }
}

static uint64_t keyed(const char *text, const char *key) {
        uint64_t v = 0;

        return text && cgv_parse_keyed(text, key, &v) >= 0 ? v : 0;
}

/* Reads the early signals of one protected application; true if one fired (and why). */
static bool sample_watch(struct manager *m, struct gov_watch *w, char *why, size_t len, double *avg10,
                         bool *ret_auto_changed) {
        _cleanup_free_ char *stat = NULL, *events = NULL, *psi = NULL;
        uint64_t pgsteal, refaults, majfaults, swap = 0, low, current;
        struct cgv_psi p;
        bool fired = false;

        if (cgroup_read_file(m->engine, w->path, "memory.stat", &stat) < 0)
                return false; /* gone: its triggers report that */
        (void) cgroup_read_file(m->engine, w->path, "memory.events", &events);
        if (cgroup_read_file(m->engine, w->path, "memory.pressure", &psi) >= 0 && cgv_parse_psi(psi, &p) >= 0 &&
            p.some_avg10 > *avg10)
                *avg10 = p.some_avg10;
        (void) cgroup_read_u64(m->engine, w->path, "memory.swap.current", &swap);
        pgsteal = keyed(stat, "pgsteal");
        refaults = keyed(stat, "workingset_refault_anon") + keyed(stat, "workingset_refault_file");
        majfaults = keyed(stat, "pgmajfault");
        low = keyed(events, "low");

        if (w->sampled) {
                if (pgsteal - w->pgsteal >= SIGNAL_PAGES)
                        fired = snprintf(why, len, "%s (/%s): its memory is being reclaimed (pgsteal +%" PRIu64 ")",
                                         w->name, w->path, pgsteal - w->pgsteal) > 0;
                else if (refaults - w->refaults >= SIGNAL_PAGES)
                        fired = snprintf(why, len, "%s (/%s): it refaults evicted pages (+%" PRIu64 ")", w->name, w->path,
                                         refaults - w->refaults) > 0;
                else if (majfaults - w->majfaults >= SIGNAL_PAGES)
                        fired = snprintf(why, len, "%s (/%s): major faults +%" PRIu64, w->name, w->path,
                                         majfaults - w->majfaults) > 0;
                else if (swap > w->swap && swap - w->swap >= SIGNAL_SWAP_BYTES)
                        fired = snprintf(why, len, "%s (/%s): memory.swap.current grew by %" PRIu64 " KiB", w->name,
                                         w->path, (swap - w->swap) >> 10) > 0;
                else if (low > w->low_events)
                        fired = snprintf(why, len, "%s (/%s): memory.events low +%" PRIu64, w->name, w->path,
                                         low - w->low_events) > 0;
        }
        w->pgsteal = pgsteal;
        w->refaults = refaults;
        w->majfaults = majfaults;
        w->swap = swap;
        w->low_events = low;
        w->sampled = true;

        /* "auto": protect what the application uses while jobs run (never less). */
        if ((w->auto_min || w->auto_low) && cgroup_read_u64(m->engine, w->path, "memory.current", &current) >= 0) {
                uint64_t cap = m->ctx.ram_bytes / 10 * 9; /* leave the jobs and the kernel room */

                if (current > cap)
                        current = cap;
                if (current > w->auto_bytes + (UINT64_C(4) << 20) || (current > w->auto_bytes && !w->auto_bytes)) {
                        w->auto_bytes = current;
                        *ret_auto_changed = true;
                }
        }
        return fired;
}

static void governor_run(struct manager *m, uint64_t wake_usec) {
        struct governor_action actions[GOVERNOR_MAX_ACTIONS];
        struct governor_reading r = { .now_usec = now_monotonic() };
        bool auto_changed = false;
        char why[160] = "";
        size_t n;

        for (size_t i = 0; i < m->n_watches; i++) {
                char w[160];

                if (sample_watch(m, &m->watches[i], w, sizeof(w), &r.psi_avg10, &auto_changed) && !why[0])
                        snprintf(why, sizeof(why), "%s", w);
        }
        if (auto_changed) {
                for (size_t i = 0; i < m->n_watches; i++)
                        if (m->watches[i].auto_min || m->watches[i].auto_low) {
                                char v[32];

                                units_format_human(m->watches[i].auto_bytes, v, sizeof(v));
                                manager_action(m, LOG_LEVEL_NOTICE,
                                               "Governor: protect %s (/%s) with %s while jobs run (auto: its usage)",
                                               m->watches[i].name, m->watches[i].path, v);
                                m->gov_actions++;
                        }
                (void) manager_apply_protection(m);
        }
        if (m->gov_triggered) {
                r.pressure = true;
                r.why = m->gov_why;
                m->gov_triggered = false;
        } else if (why[0]) {
                r.pressure = true;
                r.why = why;
        }
        update_class_readings(m);
        n = governor_step(&m->gov, &r, actions, ELEMENTSOF(actions));
        apply_actions(m, actions, n, wake_usec);
        /* Nothing runs any more and every limit is back: the governor sleeps. */
        manager_governor_update(m);
}

static int on_trigger(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct manager *m = userdata;
        uint64_t wake = now_monotonic();
        const char *what = NULL;

        for (size_t i = 0; i < m->n_watches && !what; i++)
                for (int k = 0; k < 2; k++)
                        if (m->watches[i].fd[k] == fd) {
                                if (revents & EPOLLERR) { /* the cgroup is gone */
                                        log_info("Governor: %s (/%s) is gone, not watched any more", m->watches[i].name,
                                                 m->watches[i].path);
                                        close_trigger(&m->watches[i].fd[k], &m->watches[i].src[k]);
                                        return 0;
                                }
                                snprintf(m->gov_why, sizeof(m->gov_why), "PSI trigger: %s (/%s) %s", m->watches[i].name,
                                         m->watches[i].path, k == 0 ? "memory.pressure" : "io.pressure");
                                what = m->gov_why;
                        }
        if (!what && fd == m->sys_fd) {
                snprintf(m->gov_why, sizeof(m->gov_why), "PSI trigger: the whole machine (/proc/pressure/memory full)");
                what = m->gov_why;
        }
        if (!what)
                return 0;
        log_debug("Governor: %s", what);
        m->gov_triggered = true;
        /* React now, not at the next tick: this is what the latency measures. */
        governor_run(m, wake);
        return 0;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;

        governor_run(m, 0);
        if (m->gov_active) {
                (void) sd_event_source_set_time_relative(s, m->gov.window_usec);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

/* ---- activation ---- */

static bool governor_needed(struct manager *m) {
        bool protected = false;

        if (m->stopping)
                return false;
        for (size_t i = 0; i < m->policy.n_protects; i++)
                protected = protected || m->policy.protects[i].cgroup ||
                            (m->policy.protects[i].unit && !m->backend->ops->releases_jobs);
        return (m->n_jobs > 0 && protected) || (m->gov_active && !governor_at_rest(&m->gov));
}

static void governor_start(struct manager *m) {
        size_t n = 0;
        int r;

        governor_init(&m->gov, &m->settings, m->ctx.ram_bytes);
        m->gov.classes = calloc(m->policy.n_classes + 1, sizeof(struct governor_class));
        m->watches = calloc(m->policy.n_protects + 1, sizeof(struct gov_watch));
        if (!m->gov.classes || !m->watches) {
                log_error("Governor: out of memory");
                free(m->gov.classes);
                free(m->watches);
                m->gov.classes = NULL;
                m->watches = NULL;
                return;
        }
        for (size_t i = 0; i < m->policy.n_classes; i++)
                governor_class_init(&m->gov.classes[m->gov.n_classes++], &m->policy.classes[i]);
        for (size_t i = 0; i < m->policy.n_protects; i++) {
                const struct pw_protect *pr = &m->policy.protects[i];
                struct backend_protect bp = { .name = pr->name, .unit = pr->unit, .cgroup = pr->cgroup ? pr->cgroup + 1 : NULL };
                struct gov_watch *w = &m->watches[n];
                _cleanup_free_ char *mem = NULL, *io = NULL;

                *w = (struct gov_watch){ .fd = { -1, -1 } };
                r = m->backend->ops->protect_path(m->backend, &bp, &w->path);
                if (r < 0) {
                        log_debug("Governor: %s is not watched: %s", pr->name, strerror(-r));
                        continue;
                }
                w->name = strdup(pr->name);
                w->auto_min = pr->min.mode == PW_PROTECT_AUTO;
                w->auto_low = pr->low.mode == PW_PROTECT_AUTO;
                if (!w->name || asprintf(&mem, "%s/%s/memory.pressure", m->mount.path, w->path) < 0 ||
                    asprintf(&io, "%s/%s/io.pressure", m->mount.path, w->path) < 0) {
                        free(w->name);
                        free(w->path);
                        continue;
                }
                n++;
                if (!m->mount.psi)
                        continue;
                r = open_trigger(m, mem, "some", &w->fd[0], &w->src[0]);
                if (r >= 0)
                        r = open_trigger(m, io, "some", &w->fd[1], &w->src[1]);
                if (r < 0)
                        log_warning_errno(r, "Governor: no PSI trigger on %s (/%s): %m; its memory counters are still read",
                                          w->name, w->path);
        }
        m->n_watches = n;
        if (m->mount.psi) {
                r = open_trigger(m, "/proc/pressure/memory", "full", &m->sys_fd, &m->sys_src);
                if (r < 0)
                        log_warning_errno(r, "Governor: no PSI trigger on /proc/pressure/memory: %m");
        }
        r = sd_event_add_time_relative(m->event, &m->gov_tick, CLOCK_MONOTONIC, m->gov.window_usec, 0, on_tick, m);
        if (r < 0)
                log_error_errno(r, "Governor: cannot start its timer: %m");
        else
                (void) sd_event_source_set_description(m->gov_tick, "governor-tick");
        m->gov_active = true;
        log_info("Governor: watching %zu protected application%s while %u job%s run%s", m->n_watches,
                 m->n_watches == 1 ? "" : "s", m->n_jobs, m->n_jobs == 1 ? "" : "s", m->n_jobs == 1 ? "s" : "");
        /* The first sample sets the baselines and the "auto" protection. */
        governor_run(m, 0);
}

void manager_governor_stop(struct manager *m) {
        bool had_auto = false;

        if (!m->gov_active)
                return;
        m->gov_active = false;
        m->gov_tick = sd_event_source_disable_unref(m->gov_tick);
        close_trigger(&m->sys_fd, &m->sys_src);
        for (size_t i = 0; i < m->n_watches; i++) {
                had_auto = had_auto || m->watches[i].auto_bytes;
                close_trigger(&m->watches[i].fd[0], &m->watches[i].src[0]);
                close_trigger(&m->watches[i].fd[1], &m->watches[i].src[1]);
                free(m->watches[i].name);
                free(m->watches[i].path);
        }
        free(m->watches);
        m->watches = NULL;
        m->n_watches = 0;
        /* Every class back to what the policy says, thawed. */
        for (size_t i = 0; i < m->gov.n_classes; i++) {
                struct governor_class *c = &m->gov.classes[i];
                const struct pw_job_class *pc = policy_find_class(&m->policy, c->name);

                if (c->frozen)
                        (void) m->backend->ops->class_freeze(m->backend, c->name, false);
                if (pc && (c->high != c->configured_high || c->frozen))
                        (void) m->backend->ops->class_apply(m->backend, pc);
                else if (pc)
                        for (size_t k = 0; k < c->n_io; k++)
                                if (c->io[k].rbps != c->io[k].configured_rbps || c->io[k].wbps != c->io[k].configured_wbps) {
                                        (void) m->backend->ops->class_apply(m->backend, pc);
                                        break;
                                }
        }
        free(m->gov.classes);
        m->gov.classes = NULL;
        m->gov.n_classes = 0;
        /* "auto" protection lasts while jobs run; at a stop it stays, like the rest. */
        if (had_auto && !m->stopping)
                (void) manager_apply_protection(m);
        log_info("Governor: idle (no job runs or nothing is protected): no timer, no trigger");
}

void manager_governor_update(struct manager *m) {
        bool need = governor_needed(m);

        if (need && !m->gov_active)
                governor_start(m);
        else if (!need && m->gov_active)
                manager_governor_stop(m);
}

/* ---- status ---- */

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static json_object *limit(uint64_t v) {
        return v == UNITS_MAX ? json_object_new_string("max") : json_object_new_uint64(v);
}

json_object *manager_governor_json(struct manager *m) {
        json_object *o = json_object_new_object(), *classes = json_object_new_array(), *lat = json_object_new_object();
        unsigned n = m->n_latencies < MANAGER_LATENCIES ? m->n_latencies : MANAGER_LATENCIES;
        uint64_t sorted[MANAGER_LATENCIES];

        json_object_object_add(o, "active", json_object_new_boolean(m->gov_active));
        json_object_object_add(o, "under_pressure", json_object_new_boolean(m->gov_active && m->gov.under_pressure));
        json_object_object_add(o, "actions", json_object_new_uint64(m->gov_actions));
        memcpy(sorted, m->latencies, n * sizeof(uint64_t));
        qsort(sorted, n, sizeof(uint64_t), cmp_u64);
        json_object_object_add(lat, "count", json_object_new_uint64(m->n_latencies));
        json_object_object_add(lat, "median_us", n ? json_object_new_uint64(sorted[n / 2]) : NULL);
        json_object_object_add(lat, "max_us", n ? json_object_new_uint64(sorted[n - 1]) : NULL);
        json_object_object_add(lat, "longest_write_us", json_object_new_uint64(m->write_usec_max));
        json_object_object_add(o, "reaction_latency", lat);
        for (size_t i = 0; m->gov_active && i < m->gov.n_classes; i++) {
                const struct governor_class *c = &m->gov.classes[i];
                json_object *co = json_object_new_object(), *io = json_object_new_array();

                json_object_object_add(co, "name", json_object_new_string(c->name));
                json_object_object_add(co, "memory_high_configured", limit(c->configured_high));
                json_object_object_add(co, "memory_high", limit(c->high));
                for (size_t k = 0; k < c->n_io; k++) {
                        json_object *d = json_object_new_object();
                        char dev[32];

                        snprintf(dev, sizeof(dev), "%u:%u", c->io[k].major, c->io[k].minor);
                        json_object_object_add(d, "device", json_object_new_string(dev));
                        json_object_object_add(d, "read_bps", limit(c->io[k].rbps));
                        json_object_object_add(d, "write_bps", limit(c->io[k].wbps));
                        json_object_array_add(io, d);
                }
                json_object_object_add(co, "io", io);
                json_object_object_add(co, "frozen", json_object_new_boolean(c->frozen));
                json_object_object_add(co, "tightened", json_object_new_uint64(c->n_tightened));
                json_object_object_add(co, "relaxed", json_object_new_uint64(c->n_relaxed));
                json_object_object_add(co, "frozen_times", json_object_new_uint64(c->n_frozen));
                json_object_object_add(co, "last_action", c->last_action[0] ? json_object_new_string(c->last_action) : NULL);
                json_object_array_add(classes, co);
        }
        json_object_object_add(o, "classes", classes);
        return o;
}
