/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/inotify.h>

#include "jobs.h"
#include "log.h"
#include "proc.h"
#include "units.h"

/* The journal fields of a message about job j (PAGEWARDEN_JOB=, _CLASS=, _ACTION=). */
#define JOB_FIELDS(j, act) \
        (&(const struct log_fields){ .job = (j)->name, .job_id = (j)->id, .klass = (j)->class, .action = (act) })

/* ---- the end-of-job report ---- */

static json_object *u64_or_null(bool have, uint64_t v) {
        return have ? json_object_new_uint64(v) : NULL;
}

/*
 * Where a job's I/O was counted.  A job in a systemd scope has no io
 * controller of its own (c8ce1ba: no memory cgroup, so no dying one, per
 * job), so what it reads and writes, writeback included, is charged to its
 * class's cgroup; while it is the only such job there, that count is its
 * own (struct job's class_io).  A job that shared its class until its end
 * has no figure: "not measured", never a share or a guess.
 */
struct job_io {
        const char *at; /* "job", "class", or NULL: not measured */
        uint64_t read, written;
        uint64_t from_usec; /* CLOCK_REALTIME: the start of its count */
};

static bool io_at_class(const struct job *j) {
        return !j->unit && !j->start.have_io;
}

/* The length of the part of path that names the cgroup holding it (the class's), 0 if none. */
static size_t class_dir_len(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash ? (size_t) (slash - path) : 0;
}

static bool same_class_dir(const struct job *a, const struct job *b) {
        size_t n = class_dir_len(a->path);

        return n > 0 && n == class_dir_len(b->path) && memcmp(a->path, b->path, n) == 0;
}

static int class_io_read(struct jobs *js, const struct job *j, uint64_t *ret_read, uint64_t *ret_written) {
        _cleanup_free_ char *dir = strndup(j->path, class_dir_len(j->path));

        return dir ? cgroup_io_read(js->backend->engine, dir, ret_read, ret_written) : -ENOMEM;
}

/* j is alone in its class's cgroup from now: its count there starts (none if the class has no io.stat). */
static void class_io_start(struct jobs *js, struct job *j) {
        j->class_io = class_io_read(js, j, &j->class_io_read, &j->class_io_written) >= 0;
        j->class_io_usec = now_usec(CLOCK_REALTIME);
}

/* A job j that counts at its class joined it (it is on the list) or left it (it is off): a second one there
 * ends the count of the first, and the last one left starts its own. */
static void class_io_changed(struct jobs *js, struct job *j, bool joined) {
        struct job *other = NULL;
        unsigned n = 0;

        if (!io_at_class(j) || class_dir_len(j->path) == 0)
                return;
        for (struct job *o = js->list; o; o = o->next)
                if (o != j && io_at_class(o) && same_class_dir(o, j)) {
                        other = o;
                        n++;
                }
        if (joined && n == 0)
                class_io_start(js, j);
        else if (joined) {
                for (struct job *o = js->list; o; o = o->next)
                        if (io_at_class(o) && same_class_dir(o, j))
                                o->class_io = false;
        } else if (n == 1)
                class_io_start(js, other);
}

static struct job_io job_io(struct jobs *js, const struct job *j, const struct cgroup_job_counters *end) {
        struct job_io io = { .from_usec = j->started_usec };
        uint64_t rd, wr;

        if (end && end->have_io) {
                io.at = "job";
                io.read = counter_since(end->io_read, j->start.io_read);
                io.written = counter_since(end->io_written, j->start.io_written);
        } else if (j->class_io && class_io_read(js, j, &rd, &wr) >= 0) {
                io.at = "class";
                io.read = counter_since(rd, j->class_io_read);
                io.written = counter_since(wr, j->class_io_written);
                io.from_usec = j->class_io_usec;
        }
        return io;
}

/*
 * What an ended job's counters say, for its log line: "peak memory at most 1.2 GiB, read 3 MiB, wrote 0 B, its
 * own memory.high hit 2 times, stalled 0.4 s on memory and 0.0 s on I/O", and what its cgroup could not count
 * ("not measured: I/O" where the job's cgroup has no io controller): a missing figure is never written as 0.
 */
static char *job_figures(const struct job *j, const struct cgroup_job_counters *end, const struct job_io *io,
                         bool peak_exact) {
        const struct cgroup_job_counters *s = &j->start;
        const char *missing[4], *sep = "";
        char a[32], b[32], *text = NULL;
        size_t n_missing = 0, size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        if (end->have_peak) {
                units_format_human(end->memory_peak, a, sizeof(a));
                fprintf(f, "peak memory %s%s", peak_exact ? "" : "at most ", a);
                sep = ", ";
        } else
                missing[n_missing++] = "peak memory";
        if (io->at) {
                units_format_human(io->read, a, sizeof(a));
                units_format_human(io->written, b, sizeof(b));
                fprintf(f, "%sread %s, wrote %s", sep, a, b);
                if (streq(io->at, "class") && io->from_usec >= j->started_usec + 1000000)
                        fprintf(f, " (counted at its class, where it ran alone from %" PRIu64 " s after its start)",
                                (io->from_usec - j->started_usec) / 1000000);
                else if (streq(io->at, "class"))
                        fputs(" (counted at its class, where it ran alone)", f);
                sep = ", ";
        } else
                missing[n_missing++] = io_at_class(j) ? "I/O (counted at its class, shared with another job)" : "I/O";
        if (end->have_events) {
                fprintf(f, "%sits own memory.high hit %" PRIu64 " times", sep, counter_since(end->high, s->high));
                sep = ", ";
        } else
                missing[n_missing++] = "memory.high events";
        if (end->have_psi) {
                fprintf(f, "%sstalled %.1f s on memory and %.1f s on I/O", sep,
                        (double) counter_since(end->memory_stall_usec, s->memory_stall_usec) / 1e6,
                        (double) counter_since(end->io_stall_usec, s->io_stall_usec) / 1e6);
                sep = ", ";
        } else
                missing[n_missing++] = "stalls";
        for (size_t i = 0; i < n_missing; i++)
                fprintf(f, "%s%s", i > 0 ? ", " : *sep ? "; not measured: " : "not measured: ", missing[i]);
        if (fclose(f) != 0)
                return mfree(text);
        return text;
}

/* What a job's end is known by, worked out once for its log line and its report. */
struct job_end {
        const struct cgroup_job_counters *end; /* NULL: not read */
        bool sampled;                          /* end is the last read of a unit systemd removed first */
        uint64_t now, runtime;                 /* CLOCK_REALTIME usec; seconds */
        bool oom, peak_exact;
        struct job_io io;
};

static void job_end_log(struct jobs *js, const struct job *j, const struct job_end *e) {
        static const struct cgroup_job_counters none = {};
        _cleanup_free_ char *figures = NULL;
        char rt[32];

        units_format_runtime(e->runtime, rt, sizeof(rt));
        if (e->sampled) {
                figures = job_figures(j, e->end, &e->io, e->peak_exact);
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "end"),
                                      "Job %" PRIu64 " (%s) of class %s: ended after %s; %s (as read %" PRIu64
                                      " s before its end: systemd removed its cgroup first)",
                                      j->id, j->name, j->class, rt, figures ?: "(out of memory)",
                                      counter_since(e->now, j->last_usec) / 1000000);
        } else if (!e->end && !io_at_class(j))
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "end"),
                                      "Job %" PRIu64
                                      " (%s) of class %s: ran %s (its cgroup was gone before its counters "
                                      "could be read)",
                                      j->id, j->name, j->class, rt);
        else {
                /* No end: systemd removed its scope first; its class counted its I/O, if it ran alone there. */
                figures = job_figures(j, e->end ?: &none, &e->io, e->peak_exact);
                action_log_add_fields(js->log, e->oom ? LOG_LEVEL_WARNING : LOG_LEVEL_INFO,
                                      JOB_FIELDS(j, e->oom ? "oom-kill" : "end"),
                                      "Job %" PRIu64 " (%s) of class %s: %s after %s; %s", j->id, j->name, j->class,
                                      e->oom   ? "OOM-killed (a memory.max, its own or its class's)"
                                      : e->end ? "exited"
                                               : "ended",
                                      rt, figures ?: "(out of memory)");
        }
}

/* The counters' part of the report: null for what could not be read. */
static void job_end_counters_json(json_object *o, const struct job *j, const struct job_end *e) {
        const struct cgroup_job_counters *end = e->end, *s = &j->start;

        json_object_object_add(o, "memory_peak", u64_or_null(end && end->have_peak, end ? end->memory_peak : 0));
        json_object_object_add(o, "memory_peak_exact", json_object_new_boolean(e->peak_exact));
        json_object_object_add(o, "memory_file", u64_or_null(end != NULL, end ? end->memory_file : 0));
        json_object_object_add(o, "io_read_bytes", u64_or_null(e->io.at != NULL, e->io.read));
        json_object_object_add(o, "io_written_bytes", u64_or_null(e->io.at != NULL, e->io.written));
        json_object_object_add(o, "io_counted_at", e->io.at ? json_object_new_string(e->io.at) : NULL);
        json_object_object_add(o, "io_counted_from", u64_or_null(e->io.at != NULL, e->io.from_usec / 1000000));
        json_object_object_add(o, "memory_high_events",
                               u64_or_null(end && end->have_events, end ? counter_since(end->high, s->high) : 0));
        json_object_object_add(o, "memory_max_events",
                               u64_or_null(end && end->have_events, end ? counter_since(end->max, s->max) : 0));
        json_object_object_add(o, "oom_kills",
                               u64_or_null(end && end->have_events,
                                           end ? counter_since(end->oom_kill, s->oom_kill) : 0));
        json_object_object_add(o, "memory_stall_us",
                               u64_or_null(end && end->have_psi,
                                           end ? counter_since(end->memory_stall_usec, s->memory_stall_usec) : 0));
        json_object_object_add(o, "io_stall_us",
                               u64_or_null(end && end->have_psi,
                                           end ? counter_since(end->io_stall_usec, s->io_stall_usec) : 0));
}

/* What the governor did while the job ran and believed at its end, and what the job cost the applications. */
static void job_end_effects_json(struct jobs *js, json_object *o, const struct job *j, const struct job_end *e) {
        if (js->report.class_actions) {
                struct job_governor_counts c = {};

                js->report.class_actions(js->userdata, j->class, &c);
                json_object_object_add(o, "governor_tightened",
                                       json_object_new_uint64(counter_since(c.tightened, j->governor.tightened)));
                json_object_object_add(o, "governor_froze",
                                       json_object_new_uint64(counter_since(c.frozen, j->governor.frozen)));
                json_object_object_add(o, "governor_undone",
                                       json_object_new_uint64(counter_since(c.undone, j->governor.undone)));
                json_object_object_add(o, "governor_held_off",
                                       json_object_new_uint64(counter_since(c.held_off, j->governor.held_off)));
        }
        if (js->report.governor_beliefs)
                json_object_object_add(o, "governor", js->report.governor_beliefs(js->userdata, j->class));
        if (js->report.appcost) {
                size_t omitted;

                json_object_object_add(o, "applications",
                                       appcost_report(js->report.appcost, j->apps,
                                                      counter_since(e->now, j->started_usec), &omitted));
                json_object_object_add(o, "applications_omitted", json_object_new_uint64(omitted));
        }
}

/* The report the history keeps (show prints it). */
static json_object *job_end_json(struct jobs *js, const struct job *j, const struct job_end *e) {
        json_object *o = json_object_new_object();
        char user[256], cgroup[4096];

        if (!o)
                return NULL;
        json_object_object_add(o, "id", json_object_new_uint64(j->id));
        json_object_object_add(o, "name", json_object_new_string(j->name));
        json_object_object_add(o, "class", json_object_new_string(j->class));
        json_object_object_add(o, "placed_by", j->by[0] ? json_object_new_string(j->by) : NULL);
        json_object_object_add(o, "uid", json_object_new_int64(j->uid));
        json_object_object_add(o, "user",
                               user_name_of(j->uid, user, sizeof(user)) ? json_object_new_string(user) : NULL);
        snprintf(cgroup, sizeof(cgroup), "/%s", j->path);
        json_object_object_add(o, "cgroup", json_object_new_string(cgroup));
        json_object_object_add(o, "unit", j->unit ? json_object_new_string(j->unit) : NULL);
        json_object_object_add(o, "state", json_object_new_string("ended"));
        json_object_object_add(o, "started", json_object_new_uint64(j->started_usec / 1000000));
        json_object_object_add(o, "ended", json_object_new_uint64(e->now / 1000000));
        json_object_object_add(o, "runtime", json_object_new_uint64(e->runtime));
        json_object_object_add(o, "how",
                               json_object_new_string(!e->end || e->sampled ? "ended"
                                                      : e->oom              ? "oom-killed"
                                                                            : "exited"));
        /* When its figures were read: its end, or the last read before systemd removed its cgroup. */
        json_object_object_add(o, "counted_until",
                               e->end ? json_object_new_uint64((e->sampled ? j->last_usec : e->now) / 1000000) : NULL);
        json_object_object_add(o, "counted_from", json_object_new_string(j->adopted ? "adoption" : "start"));
        job_end_counters_json(o, j, e);
        job_end_effects_json(js, o, j, e);
        return o;
}

/*
 * What the job cost and how it ended, from its counters now against those at
 * its start; end NULL: its cgroup was gone before it could be read (systemd
 * removes an empty scope at once), then only its times are known.  Logged
 * (a warning if it was OOM-killed) and kept in the history.
 */
static void job_report(struct jobs *js, struct job *j, const struct cgroup_job_counters *end) {
        struct job_end e = {
                .end = end,
                /* A unit's cgroup that systemd removed first: its figures as last read (struct job). */
                .sampled = end && end == &j->last,
                .now = now_usec(CLOCK_REALTIME),
                .oom = end && end->have_events && counter_since(end->oom_kill, j->start.oom_kill) > 0,
                /* A cgroup's memory.peak is its life's: exact for this job only if this job raised it. */
                .peak_exact = end && end->have_peak && j->start.have_peak && end->memory_peak > j->start.memory_peak,
                .io = job_io(js, j, end),
        };
        json_object *o;

        if (j->reported)
                return;
        j->reported = true;
        e.runtime = counter_since(e.now, j->started_usec) / 1000000;
        js->n_ended++;
        js->n_oom_killed += e.oom;
        job_end_log(js, j, &e);
        if (!js->report.history)
                return;
        o = job_end_json(js, j, &e);
        if (o)
                (void) history_add(js->report.history, o);
}

/* The report, from the counters as they are now (the job's cgroup is empty, not yet released). */
static void job_report_now(struct jobs *js, struct job *j) {
        struct cgroup_job_counters end;

        if (j->reported)
                return;
        cgroup_job_counters(js->backend->engine, j->path, &end);
        job_report(js, j, &end);
}

/* How often a job inotify cannot watch is looked at. */
#define JOBS_POLL_USEC (UINT64_C(2) * 1000000)
/* How often a unit job's counters are read while it runs (struct job). */
#define JOBS_UNIT_SAMPLE_USEC (UINT64_C(5) * 1000000)
/* A unit's cgroup is empty for a moment between its commands (ExecStart= done, ExecStartPost= not yet
 * forked): its job ends when it stays empty this long, or when systemd removes the cgroup. */
#define JOBS_UNIT_GAP_USEC (UINT64_C(1) * 1000000)

static int move_back(struct jobs *js, const char *cgroup, pid_t pid);

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

/* A placement under way: the backend may take its time (systemd starts a scope), the loop does not wait. */
struct job_placing {
        struct jobs *js;
        struct cgroup_job_label label;
        char class[POLICY_NAME_MAX + 1];
        pid_t pid;
        int pidfd;         /* pid's process, for the check after the write (-1: none) */
        jobs_placed_fn fn; /* NULL: its caller went away, the job is still made */
        void *userdata;
        struct backend_placing *bp; /* the backend's, while it works */
        sd_event_source *defer;     /* a backend that did not wait: the result, on the next turn */
        int r;
        char *path;
        struct job_placing *next;
};

static void placing_free(struct job_placing *pl) {
        sd_event_source_disable_unref(pl->defer);
        closep(&pl->pidfd);
        free(pl->path);
        free(pl);
}

struct job_attaching {
        struct jobs *js;
        char *path;
        pid_t *pids;
        int *pidfds; /* ours (dup'ed) */
        size_t n;
        jobs_attached_fn fn; /* NULL: nobody waits */
        void *userdata;
        struct backend_attaching *ba; /* the backend's, while it works */
        sd_event_source *defer;       /* a backend that did not wait: the result, on the next turn */
        int r;
        size_t moved;
        struct job_attaching *prev, *next;
};

static void attaching_free(struct job_attaching *at) {
        if (at->ba)
                backend_job_attach_cancel(at->js->backend, at->ba);
        LIST_REMOVE(at->js->attachings, at);
        sd_event_source_disable_unref(at->defer);
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
static int job_add(struct jobs *js, const struct cgroup_job_label *label, const char *class, const char *path,
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

/* ---- placement ---- */

/* Written straight into cgroup.procs whatever the backend: it undoes a write, in a cgroup not ours. */
static int move_back(struct jobs *js, const char *cgroup, pid_t pid) {
        return cgroup_job_attach(js->backend->engine, cgroup, pid);
}

/* Whether cgroup is path or below it (both relative to the cgroup2 mount, with or without a leading '/'). */
static bool cgroup_within(const char *cgroup, const char *path) {
        const char *rest;

        cgroup += cgroup[0] == '/';
        path += path[0] == '/';
        rest = startswith(cgroup, path);
        return rest && (*rest == '\0' || *rest == '/');
}

bool jobs_recheck(struct jobs *js, const char *path, pid_t pid, int pidfd, uint64_t before_ticks) {
        struct proc_ids other = {}, parent = {};
        bool found = false;
        int r;

        if (pidfd < 0 || proc_written_other(js->procdir, pidfd, pid, before_ticks, &other) <= 0)
                return false;
        if (!cgroup_within(other.cgroup, path))
                goto done; /* the write did not take it, or it is elsewhere already */
        found = true;
        r = proc_ids(js->procdir, other.ppid, &parent);
        if (r >= 0 && cgroup_within(parent.cgroup, path))
                goto done; /* born of the job: where it belongs */
        /* Where it most likely was: a process starts in its parent's cgroup. */
        if (r >= 0)
                r = js->move_back(js, parent.cgroup[0] ? parent.cgroup : "/", pid);
        if (r >= 0)
                action_log_add(js->log, LOG_LEVEL_WARNING,
                               "The process checked as %d ended before it was written into /%s, and a process of uid "
                               "%u took its pid: moved back to its parent's cgroup /%s",
                               (int) pid, path + (path[0] == '/'), (unsigned) other.uid[0], parent.cgroup);
        else
                action_log_add(js->log, LOG_LEVEL_WARNING,
                               "The process checked as %d ended before it was written into /%s, and a process of uid "
                               "%u took its pid: cannot move it back: %s",
                               (int) pid, path + (path[0] == '/'), (unsigned) other.uid[0], strerror(-r));
done:
        proc_ids_done(&other);
        proc_ids_done(&parent);
        return found;
}

/* ---- more processes into a job ---- */

/* Each pid written, checked after the write: what was moved is what the pidfds hold. */
static size_t attaching_check(struct job_attaching *at) {
        uint64_t now = proc_now_ticks();
        size_t moved = 0;

        for (size_t i = 0; i < at->n; i++)
                moved += !jobs_recheck(at->js, at->path, at->pids[i], at->pidfds[i], now) &&
                         (at->pidfds[i] < 0 || proc_pidfd_alive(at->pidfds[i]));
        return moved;
}

static void attaching_finish(struct job_attaching *at, int r, size_t moved) {
        jobs_attached_fn fn = at->fn;
        void *userdata = at->userdata;

        at->ba = NULL;
        attaching_free(at);
        if (fn)
                fn(userdata, r, moved);
}

static void on_backend_attached(void *userdata, int r) {
        struct job_attaching *at = userdata;
        size_t moved;

        at->ba = NULL;
        moved = r >= 0 ? attaching_check(at) : 0;
        attaching_finish(at, r, moved);
}

static int on_attached_now(sd_event_source *s, void *userdata) {
        struct job_attaching *at = userdata;

        attaching_finish(at, at->r, at->moved);
        return 0;
}

int jobs_attach_async(struct jobs *js, const struct job *j, const pid_t *pids, const int *pidfds, size_t n,
                      jobs_attached_fn fn, void *userdata) {
        struct job_attaching *at;
        int r;

        assert(js && j && (pids || n == 0));
        at = calloc(1, sizeof(*at));
        if (!at)
                return -ENOMEM;
        *at = (struct job_attaching){ .js = js, .fn = fn, .userdata = userdata };
        LIST_PREPEND(js->attachings, at);
        at->path = strdup(j->path);
        at->pids = calloc(n + 1, sizeof(*at->pids));
        at->pidfds = calloc(n + 1, sizeof(*at->pidfds));
        if (!at->path || !at->pids || !at->pidfds) {
                attaching_free(at);
                return -ENOMEM;
        }
        for (; at->n < n; at->n++) {
                at->pids[at->n] = pids[at->n];
                at->pidfds[at->n] = pidfds && pidfds[at->n] >= 0 ? fcntl(pidfds[at->n], F_DUPFD_CLOEXEC, 3) : -1;
        }
        /* No process to attach is -ESRCH, from either backend. */
        r = n == 0 ? -ESRCH
                   : backend_job_attach_async(js->backend, at->path, at->pids, n, on_backend_attached, at, &at->ba);
        if (r == -EOPNOTSUPP) { /* a backend that attaches at once (cgroupfs) */
                /* One by one: each write checked at once, before the next can be about a reused pid. */
                for (size_t i = 0; i < n; i++) {
                        size_t moved = 0;

                        if (backend_job_attach(js->backend, at->path, &at->pids[i], 1, &moved) >= 0 && moved > 0 &&
                            !jobs_recheck(js, at->path, at->pids[i], at->pidfds[i], proc_now_ticks()))
                                at->moved++;
                }
                at->r = at->moved > 0 ? 0 : -ESRCH;
                r = fn ? sd_event_add_defer(js->event, &at->defer, on_attached_now, at) : 0;
                if (r >= 0 && !fn) {
                        attaching_free(at);
                        return 0;
                }
        }
        if (r < 0) {
                attaching_free(at);
                return r;
        }
        return 0;
}

void jobs_attach_forget(struct jobs *js, void *userdata) {
        for (struct job_attaching *at = js->attachings; at; at = at->next)
                if (at->userdata == userdata)
                        at->fn = NULL;
}

static void placing_unlink(struct jobs *js, struct job_placing *pl) {
        for (struct job_placing **pp = &js->placings; *pp; pp = &(*pp)->next)
                if (*pp == pl) {
                        *pp = pl->next;
                        break;
                }
}

static void placing_done(struct job_placing *pl, int r, const char *path) {
        struct jobs *js = pl->js;
        struct job *j = NULL;

        pl->bp = NULL;
        placing_unlink(js, pl);
        /* Its process may have ended before the write: then the job is empty and ends as any other. */
        if (r >= 0)
                (void) jobs_recheck(js, path, pl->pid, pl->pidfd, proc_now_ticks());
        if (r >= 0)
                r = job_add(js, &pl->label, pl->class, path, NULL, &j);
        if (r >= 0)
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "start"),
                                      "Job %" PRIu64
                                      " (%s) of class %s started for uid %u with 1 process in /%s, placed by %s",
                                      j->id, j->name, j->class, (unsigned) pl->label.uid, j->path,
                                      j->by[0] ? j->by : "?");
        if (pl->fn)
                pl->fn(pl->userdata, r, j);
        placing_free(pl);
}

static void on_backend_placed(void *userdata, int r, const char *path) {
        placing_done(userdata, r, path);
}

static int on_placed_now(sd_event_source *s, void *userdata) {
        struct job_placing *pl = userdata;

        placing_done(pl, pl->r, pl->path);
        return 0;
}

int jobs_place_async(struct jobs *js, const struct pw_job_class *c, const struct pw_job_limits *limits,
                     const char *name, uid_t uid, const char *by, pid_t pid, int pidfd, jobs_placed_fn fn,
                     void *userdata) {
        struct job_placing *pl;
        int r;

        assert(js && c && fn);
        pl = calloc(1, sizeof(*pl));
        if (!pl)
                return -ENOMEM;
        *pl = (struct job_placing){ .js = js,
                                    .pid = pid,
                                    .pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : -1,
                                    .fn = fn,
                                    .userdata = userdata,
                                    .label = {
                                            .id = js->next_id, .uid = uid, .started_usec = now_usec(CLOCK_REALTIME) } };
        if (name && name[0])
                snprintf(pl->label.name, sizeof(pl->label.name), "%s", name);
        else
                snprintf(pl->label.name, sizeof(pl->label.name), "job-%" PRIu64, pl->label.id);
        snprintf(pl->label.by, sizeof(pl->label.by), "%s", strempty(by));
        snprintf(pl->class, sizeof(pl->class), "%s", c->name);
        r = backend_job_place_async(js->backend, c->name, limits ?: &c->per_job, &pl->label, pid, on_backend_placed, pl,
                                    &pl->bp);
        if (r == -EOPNOTSUPP) { /* a backend that places at once (cgroupfs) */
                size_t moved = 0;

                pl->r = backend_job_place(js->backend, c->name, limits ?: &c->per_job, &pl->label, &pid, 1, &moved,
                                          &pl->path);
                r = sd_event_add_defer(js->event, &pl->defer, on_placed_now, pl);
                if (r >= 0)
                        (void) sd_event_source_set_priority(pl->defer, SD_EVENT_PRIORITY_IMPORTANT);
                if (r < 0 && pl->r >= 0)
                        log_warning("Job %" PRIu64 ": placed in /%s, but cannot go on: %s", pl->label.id, pl->path,
                                    strerror(-r));
        }
        if (r < 0) {
                placing_free(pl);
                return r;
        }
        js->next_id++; /* taken, whatever comes of it: two placements under way never share an id */
        pl->next = js->placings;
        js->placings = pl;
        return 0;
}

void jobs_place_forget(struct jobs *js, void *userdata) {
        for (struct job_placing *pl = js->placings; pl; pl = pl->next)
                if (pl->userdata == userdata)
                        pl->fn = NULL;
}

bool jobs_placing(const struct jobs *js, pid_t pid) {
        for (const struct job_placing *pl = js->placings; pl; pl = pl->next)
                if (pl->pid == pid)
                        return true;
        return false;
}

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
