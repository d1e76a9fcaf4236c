/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The end-of-job report: what a job cost and how it ended, its counters at
 * its end against those at its start (or as last read, when systemd removed
 * its cgroup first), as a line of the action log and as the JSON the
 * history keeps, with what the governor did meanwhile and what the job cost
 * the protected applications; and where a job's I/O was counted (its own
 * cgroup, or its class's while it ran alone there).
 */
#include <inttypes.h>

#include "jobs-own.h"
#include "units.h"

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
void class_io_changed(struct jobs *js, struct job *j, bool joined) {
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
void job_report(struct jobs *js, struct job *j, const struct cgroup_job_counters *end) {
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
void job_report_now(struct jobs *js, struct job *j) {
        struct cgroup_job_counters end;

        if (j->reported)
                return;
        cgroup_job_counters(js->backend->engine, j->path, &end);
        job_report(js, j, &end);
}
