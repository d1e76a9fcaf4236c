/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job registry: jobs by id, name and unit, and how many per class;
 * each job watched (inotify on its cgroup.events, a timer where inotify
 * cannot) until its cgroup is empty, then reported (jobs-report.c) and
 * released; a unit placed by rule registered as a job; the jobs an earlier
 * daemon left adopted.  Placing processes is jobs-place.c's.
 */
#include <assert.h>
#include <inttypes.h>
#include <sys/inotify.h>

#include "jobs-own.h"
#include "proc.h"
#include "units.h"

/* How often a job inotify cannot watch is looked at. */
#define JOBS_POLL_USEC (UINT64_C(2) * 1000000)
/* How often a unit job's counters are read while it runs (struct job). */
#define JOBS_UNIT_SAMPLE_USEC (UINT64_C(5) * 1000000)
/* A unit's cgroup is empty for a moment between its commands (ExecStart= done, ExecStartPost= not yet
 * forked): its job ends when it stays empty this long, or when systemd removes the cgroup. */
#define JOBS_UNIT_GAP_USEC (UINT64_C(1) * 1000000)

/* Written straight into cgroup.procs whatever the backend: it undoes a write, in a cgroup not ours. */
static int move_back(struct jobs *js, const char *cgroup, pid_t pid) {
        return cgroup_job_attach(js->backend->engine, cgroup, pid);
}

void jobs_init(struct jobs *js, sd_event *event, struct backend *backend, struct action_log *log,
               jobs_changed_fn changed, void *userdata, const struct jobs_report *report) {
        *js = (struct jobs){
                .event = event,
                .backend = backend,
                .log = log,
                .changed = changed,
                .userdata = userdata,
                .report = report ? *report : (struct jobs_report){},
                .next_id = 1,
                .procdir = PROC_ROOT,
                .move_back = move_back,
        };
}

struct job *jobs_find(const struct jobs *js, const char *id_or_name) {
        char *end;
        unsigned long long id;

        errno = 0;
        id = strtoull(id_or_name, &end, 10);
        if (!errno && *end == '\0' && end != id_or_name)
                return jobs_find_id(js, id); /* a number is an id, never a name */
        for (struct job *j = js->list; j; j = j->next)
                if (streq(j->name, id_or_name))
                        return j;
        return NULL;
}

struct job *jobs_find_id(const struct jobs *js, uint64_t id) {
        for (struct job *j = js->list; j; j = j->next)
                if (j->id == id)
                        return j;
        return NULL;
}

static struct jobs_class_count *count_find(const struct jobs *js, const char *class) {
        for (size_t i = 0; i < js->n_counts; i++)
                if (streq(js->counts[i].class, class))
                        return &js->counts[i];
        return NULL;
}

/* One job more in class; -ENOMEM only for a class that had none. */
static int count_up(struct jobs *js, const char *class) {
        struct jobs_class_count *c = count_find(js, class);

        if (!c) {
                if (GROW(js->counts, js->counts_allocated, js->n_counts + 1) < 0)
                        return -ENOMEM;
                c = &js->counts[js->n_counts++];
                *c = (struct jobs_class_count){};
                snprintf(c->class, sizeof(c->class), "%s", class);
        }
        c->n++;
        return 0;
}

/* One job less; a class left with none leaves the table (the last entry takes its place). */
static void count_down(struct jobs *js, const char *class) {
        struct jobs_class_count *c = count_find(js, class);

        assert(c && c->n > 0);
        if (--c->n == 0)
                *c = js->counts[--js->n_counts];
}

unsigned jobs_in_class(const struct jobs *js, const char *class) {
        const struct jobs_class_count *c = count_find(js, class);

        return c ? c->n : 0;
}

static struct job *job_free(struct job *j) {
        if (!j)
                return NULL;
        sd_event_source_disable_unref(j->watch);
        sd_event_source_disable_unref(j->first_check);
        sd_event_source_disable_unref(j->gap);
        sd_event_source_disable_unref(j->sample);
        free(j->path);
        free(j->unit);
        app_snapshot_unref(j->apps);
        free(j);
        return NULL;
}

/* Takes j off the list, tells the owner, frees it. */
static void job_end(struct jobs *js, struct job *j) {
        char class[sizeof(j->class)];

        for (struct job **p = &js->list; *p; p = &(*p)->next)
                if (*p == j) {
                        *p = j->next;
                        js->n--;
                        count_down(js, j->class);
                        break;
                }
        class_io_changed(js, j, false);
        memcpy(class, j->class, sizeof(class));
        job_free(j);
        js->changed(js->userdata, class, true);
}

void jobs_forget(struct jobs *js, struct job *j) {
        job_end(js, j);
}

void placing_free(struct job_placing *pl) {
        closep(&pl->pidfd);
        free(pl);
}

void attaching_free(struct job_attaching *at) {
        if (at->ba)
                backend_job_attach_cancel(at->js->backend, at->ba);
        LIST_REMOVE(at->js->attachings, at);
        for (size_t i = 0; i < at->n; i++)
                closep(&at->pidfds[i]);
        free(at->pidfds);
        free(at->pids);
        free(at->path);
        free(at);
}

void jobs_done(struct jobs *js) {
        while (js->attachings) {
                struct job_attaching *at = js->attachings;
                jobs_attached_fn fn = at->fn;
                void *userdata = at->userdata;

                attaching_free(at);
                if (fn)
                        fn(userdata, -ECANCELED, 0);
        }
        while (js->placings) {
                struct job_placing *pl = js->placings;

                js->placings = pl->next;
                if (pl->bp)
                        backend_job_place_cancel(js->backend, pl->bp);
                if (pl->fn)
                        pl->fn(pl->userdata, -ECANCELED, NULL);
                placing_free(pl);
        }
        while (js->list) {
                struct job *j = js->list;

                js->list = j->next;
                job_free(j);
        }
        js->n = 0;
        js->counts = mfree(js->counts);
        js->n_counts = js->counts_allocated = 0;
}

static void release_done(void *userdata, const struct worker_task *t);

static void job_start_release(struct jobs *js, struct job *j) {
        int r;

        if (j->releasing)
                return;
        /* The watch stays enabled (job_check ignores it while the release runs): libsystemd up to v257
         * spins at 100% CPU inside sd_event_wait() on a buffered inotify event whose only source is
         * disabled (systemd#38265).  Seen here: a job ending while its class was frozen hung the daemon. */
        j->releasing = true;
        r = worker_release(js->backend->worker, j->id, j->path, release_done, js);
        if (r < 0) {
                action_log_add(js->log, LOG_LEVEL_ERR, "Job %" PRIu64 " (%s): cannot queue its release: %s", j->id,
                               j->name, strerror(-r));
                j->releasing = false;
        }
}

static void job_check(struct jobs *js, struct job *j);

/* A unit job's counters now, kept for its report (see struct job). */
static void unit_sample(struct jobs *js, struct job *j) {
        struct cgroup_job_counters c;

        cgroup_job_counters(js->backend->engine, j->path, &c);
        if (!c.have_io && !c.have_events && !c.have_psi && !c.have_peak)
                return; /* gone, or nothing counted */
        /* A read that races systemd's removal of the cgroup may find some files and not others: what it missed
         * stays as the last read had it (seen in rules-systemd@6.1: io.stat read, memory.peak gone). */
        if (j->have_last && !c.have_io && j->last.have_io) {
                c.have_io = true;
                c.io_read = j->last.io_read;
                c.io_written = j->last.io_written;
        }
        if (j->have_last && !c.have_events && j->last.have_events) {
                c.have_events = true;
                c.high = j->last.high;
                c.max = j->last.max;
                c.oom_kill = j->last.oom_kill;
        }
        if (j->have_last && !c.have_psi && j->last.have_psi) {
                c.have_psi = true;
                c.memory_stall_usec = j->last.memory_stall_usec;
                c.io_stall_usec = j->last.io_stall_usec;
        }
        if (j->have_last && !c.have_peak && j->last.have_peak) {
                c.have_peak = true;
                c.memory_peak = j->last.memory_peak;
                c.memory_file = j->last.memory_file;
        }
        j->last = c;
        j->last_usec = now_usec(CLOCK_REALTIME);
        j->have_last = true;
}

static int on_sample(sd_event_source *s, uint64_t usec, void *userdata) {
        struct job *j = userdata;

        unit_sample(j->jobs, j);
        (void) sd_event_source_set_time_relative(s, JOBS_UNIT_SAMPLE_USEC);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

static int on_gap(sd_event_source *s, uint64_t usec, void *userdata) {
        struct job *j = userdata;

        j->gap = sd_event_source_disable_unref(j->gap);
        j->gap_passed = true;
        job_check(j->jobs, j); /* may free j */
        return 0;
}

/* True while j is a unit whose cgroup has been empty for less than JOBS_UNIT_GAP_USEC. */
static bool unit_between_commands(struct jobs *js, struct job *j) {
        if (!j->unit || j->gap_passed)
                return false;
        if (!j->gap &&
            sd_event_add_time_relative(js->event, &j->gap, CLOCK_MONOTONIC, JOBS_UNIT_GAP_USEC, 0, on_gap, j) < 0)
                return false; /* cannot wait: it ends now, as before */
        return true;
}

static void job_check(struct jobs *js, struct job *j) {
        _cleanup_free_ char *text = NULL;
        bool populated = true, releases = backend_releases_jobs(js->backend);
        int r;

        if (j->releasing)
                return; /* the worker is at it; release_done() looks again if it must */
        r = cgroup_read_file(js->backend->engine, j->path, "cgroup.events", &text);
        if (r == -ENOENT || r == -ENODEV) {
                /* systemd removes a scope's cgroup as soon as it is empty: that is the job's end. */
                if (releases)
                        action_log_add_fields(js->log, LOG_LEVEL_WARNING, JOB_FIELDS(j, "end"),
                                              "Job %" PRIu64 " (%s): its cgroup /%s vanished", j->id, j->name, j->path);
                else
                        action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "end"),
                                              "Job %" PRIu64 " (%s) of class %s ended; systemd removed /%s", j->id,
                                              j->name, j->class, j->path);
                /* Never read after its start (it ran less than a sample's period, and systemd removed its cgroup
                 * first): not measured, rather than 0. */
                job_report(js, j, j->have_last ? &j->last : NULL);
                job_end(js, j);
                return;
        }
        if (r >= 0)
                r = cgv_parse_events(text, &populated, NULL);
        if (r < 0) {
                log_warning_errno(r, "Job %" PRIu64 ": cannot read /%s/cgroup.events: %m", j->id, j->path);
                return;
        }
        if (populated) {
                j->gap = sd_event_source_disable_unref(j->gap);
                j->gap_passed = false;
                return;
        }
        if (j->unit && !j->gap)
                unit_sample(js, j); /* first seen empty: these are its final figures */
        if (unit_between_commands(js, j))
                return;
        job_report_now(js, j);
        if (!releases) {
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "end"),
                                      "Job %" PRIu64 " (%s) of class %s ended; systemd removes /%s", j->id, j->name,
                                      j->class, j->path);
                job_end(js, j);
                return;
        }
        job_start_release(js, j);
}

static int on_first_check(sd_event_source *s, void *userdata) {
        struct job *j = userdata;

        j->first_check = sd_event_source_disable_unref(j->first_check);
        job_check(j->jobs, j);
        return 0;
}

static int on_events(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        struct job *j = userdata;

        job_check(j->jobs, j);
        return 0;
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata) {
        struct job *j = userdata;

        (void) sd_event_source_set_time_relative(s, JOBS_POLL_USEC);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        job_check(j->jobs, j); /* may free j and s */
        return 0;
}

/*
 * inotify on the job's cgroup.events; when inotify cannot (its watches are
 * exhausted: fs.inotify.max_user_watches), a timer: the job is tracked
 * either way, never left in a cgroup nobody watches.
 */
static int watch(struct jobs *js, struct job *j) {
        _cleanup_free_ char *events = NULL;
        int r;

        if (asprintf(&events, "%s/%s/cgroup.events", cgroup_engine_mount(js->backend->engine), j->path) < 0)
                return -ENOMEM;
        r = sd_event_add_inotify(js->event, &j->watch, events, IN_MODIFY, on_events, j);
        if (r >= 0) {
                (void) sd_event_source_set_description(j->watch, "job-cgroup-events");
                return 0;
        }
        log_warning_errno(r, "Job %" PRIu64 ": cannot watch /%s with inotify (%m): polling it every %u s", j->id,
                          j->path, (unsigned) (JOBS_POLL_USEC / 1000000));
        r = sd_event_add_time_relative(js->event, &j->watch, CLOCK_MONOTONIC, JOBS_POLL_USEC, 0, on_poll, j);
        if (r >= 0)
                (void) sd_event_source_set_description(j->watch, "job-poll");
        return r;
}

/* The worker released an ended job's cgroup (userdata: the jobs). */
static void release_done(void *userdata, const struct worker_task *t) {
        struct jobs *js = userdata;
        struct job *j = jobs_find_id(js, t->job_id);
        char freed[32], left[32];

        if (!j)
                return;
        if (t->r == -EBUSY) { /* something entered the slot again: it is still a job */
                j->releasing = false;
                j->reported = false; /* and it will end again */
                job_check(js, j);
                return;
        }
        if (t->r < 0)
                action_log_add_fields(js->log, LOG_LEVEL_WARNING, JOB_FIELDS(j, "end"),
                                      "Job %" PRIu64
                                      " (%s) of class %s ended; releasing /%s failed: %s (retried at the next "
                                      "start)",
                                      j->id, j->name, j->class, j->path, strerror(-t->r));
        else {
                units_format_human(t->rel.before - t->rel.after, freed, sizeof(freed));
                units_format_human(t->rel.after, left, sizeof(left));
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "end"),
                                      "Job %" PRIu64 " (%s) of class %s ended; /%s reclaimed %s (%s left), slot %s",
                                      j->id, j->name, j->class, j->path, freed, left,
                                      t->rel.removed ? "removed" : "kept for reuse");
        }
        job_end(js, j);
}

/* Registers a job in a cgroup that holds it (or held it: then it ends at once); unit: a unit placed by rule, whose
 * cgroup is path (NULL: a job of the daemon's own). */
int job_add(struct jobs *js, const struct cgroup_job_label *label, const char *class, const char *path,
            const char *unit, struct job **ret) {
        struct job *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        *j = (struct job){ .jobs = js, .id = label->id, .uid = label->uid, .started_usec = label->started_usec };
        snprintf(j->name, sizeof(j->name), "%s", label->name);
        snprintf(j->class, sizeof(j->class), "%s", class);
        snprintf(j->by, sizeof(j->by), "%s", label->by);
        j->path = strdup(path);
        j->unit = unit ? strdup(unit) : NULL;
        if (j->path)
                cgroup_job_counters(js->backend->engine, j->path, &j->start);
        if (js->report.appcost)
                j->apps = appcost_snapshot(js->report.appcost);
        if (js->report.class_actions)
                js->report.class_actions(js->userdata, j->class, &j->governor);
        r = j->path && (j->unit || !unit) ? watch(js, j) : -ENOMEM;
        if (r >= 0)
                r = count_up(js, j->class);
        if (r < 0) {
                job_free(j);
                return r;
        }
        j->next = js->list;
        js->list = j;
        js->n++;
        class_io_changed(js, j, true);
        if (label->id >= js->next_id)
                js->next_id = label->id + 1;
        /* It may have ended before the watch was in place: look once, on the next
         * turn of the loop (the caller still uses j). */
        r = sd_event_add_defer(js->event, &j->first_check, on_first_check, j);
        if (r < 0)
                log_warning_errno(r, "Job %" PRIu64 ": cannot schedule its first check: %m", j->id);
        js->changed(js->userdata, j->class, false);
        if (ret)
                *ret = j;
        return 0;
}

/* ---- units placed by rule, and adoption ---- */

struct job *jobs_find_unit(const struct jobs *js, const char *unit) {
        for (struct job *j = js->list; j; j = j->next)
                if (j->unit && streq(j->unit, unit))
                        return j;
        return NULL;
}

/* A job name from a unit's: "restic-daily.service" is "restic-daily". */
static void unit_job_name(const char *unit, char *buf, size_t len) {
        snprintf(buf, len, "%.*s", (int) strcspn(unit, "."), unit);
        for (char *c = buf; *c; c++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *c))
                        *c = '-';
        if (policy_name_problem(buf))
                snprintf(buf, len, "unit");
}

int jobs_add_unit(struct jobs *js, const struct pw_job_class *c, const char *unit, const char *path, const char *by,
                  struct job **ret) {
        struct cgroup_job_label label = { .id = js->next_id, .started_usec = now_usec(CLOCK_REALTIME) };
        struct job *j = jobs_find_unit(js, unit);
        int r;

        if (j) {
                if (ret)
                        *ret = j;
                return 0;
        }
        unit_job_name(unit, label.name, sizeof(label.name));
        snprintf(label.by, sizeof(label.by), "%s", strempty(by));
        r = job_add(js, &label, c->name, path, unit, &j);
        if (r < 0)
                return r;
        if (js->event && sd_event_add_time_relative(js->event, &j->sample, CLOCK_MONOTONIC, JOBS_UNIT_SAMPLE_USEC, 0,
                                                    on_sample, j) >= 0)
                (void) sd_event_source_set_description(j->sample, "job-unit-sample");
        action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "start"),
                              "Job %" PRIu64 " (%s) of class %s: unit %s runs in /%s, placed by %s", j->id, j->name,
                              j->class, unit, j->path, j->by);
        if (ret)
                *ret = j;
        return 0;
}

static int slot_by_id(const void *x, const void *y) {
        const struct cgroup_slot *a = x, *b = y;

        return a->label.id < b->label.id ? -1 : a->label.id > b->label.id;
}

int jobs_adopt(struct jobs *js) {
        struct cgroup_slot *slots = NULL;
        size_t n = 0, adopted = 0, ended = 0;
        int r;

        r = backend_thaw_all(js->backend);
        if (r < 0)
                log_warning_errno(r, "Cannot thaw every class: %m");
        r = backend_scan(js->backend, &slots, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot find the jobs below /%s: %m", js->backend->root);
        /* In the order they were placed, as the list had them (newest first), whatever order the directories
         * come in. */
        if (n > 1)
                qsort(slots, n, sizeof(*slots), slot_by_id);
        for (size_t i = 0; i < n; i++) {
                struct job *j;

                if (!slots[i].labelled) {
                        if (slots[i].populated)
                                action_log_add(js->log, LOG_LEVEL_WARNING,
                                               "Slot /%s holds processes but no job label: left alone", slots[i].path);
                        continue;
                }
                if (jobs_find_id(js, slots[i].label.id))
                        slots[i].label.id = js->next_id; /* a duplicate id: never two jobs with one id */
                r = job_add(js, &slots[i].label, slots[i].class, slots[i].path, NULL, &j);
                if (r < 0) {
                        log_warning_errno(r, "Cannot adopt /%s: %m", slots[i].path);
                        continue;
                }
                j->adopted = true;
                if (slots[i].populated) {
                        adopted++;
                        action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "adopt"),
                                              "Job %" PRIu64 " (%s) of class %s adopted in /%s", j->id, j->name,
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
