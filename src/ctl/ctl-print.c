/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <time.h>

#include "ctl-json.h"
#include "ctl-print.h"
#include "ctl-table.h"
#include "units.h"
#include "util.h"

/* ---- reading fields that may be missing, null or of another type (ctl-json.h) ---- */

/* The i-th element of an array if it is an object (else a table skips it). */
static json_object *object_at(json_object *array, size_t i) {
        json_object *v = json_object_array_get_idx(array, i);

        return json_object_is_type(v, json_type_object) ? v : NULL;
}

static const char *dash(const char *s) {
        return s && *s ? s : "-";
}

/* ---- values, formatted into a buffer ---- */

#define VALUE_MAX 64

static const char *fmt_int(json_object *v, char buf[static VALUE_MAX]) {
        if (!json_object_is_type(v, json_type_int))
                return "-";
        snprintf(buf, VALUE_MAX, "%" PRId64, json_object_get_int64(v));
        return buf;
}

/* A size in bytes, "max", or a word the daemon chose ("auto"). */
static const char *fmt_size(json_object *v, char buf[static VALUE_MAX]) {
        uint64_t u;

        if (json_object_is_type(v, json_type_string)) {
                snprintf(buf, VALUE_MAX, "%s", dash(json_object_get_string(v)));
                return buf;
        }
        if (!uint_value(v, &u))
                return "-";
        units_format_human(u, buf, VALUE_MAX);
        return buf;
}

static const char *fmt_bandwidth(json_object *v, char buf[static VALUE_MAX]) {
        uint64_t u;

        if (!uint_value(v, &u))
                return fmt_size(v, buf);
        units_format_human(u, buf, VALUE_MAX - 2);
        strcat(buf, "/s");
        return buf;
}

/* A time in seconds since the epoch: local HH:MM:SS if today (and !full), else with the date. */
static const char *fmt_time(json_object *v, bool full, char buf[static VALUE_MAX]) {
        struct tm tm, today;
        time_t t, now;
        double d;

        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return "-";
        d = json_object_get_double(v);
        if (!(d >= 0 && d < 1e12))
                return "-";
        t = (time_t) d;
        now = time(NULL);
        if (!localtime_r(&t, &tm) || !localtime_r(&now, &today))
                return "-";
        if (!full && tm.tm_year == today.tm_year && tm.tm_yday == today.tm_yday)
                strftime(buf, VALUE_MAX, "%H:%M:%S", &tm);
        else
                strftime(buf, VALUE_MAX, "%Y-%m-%d %H:%M:%S", &tm);
        return buf;
}

static const char *fmt_percent(json_object *v, char buf[static VALUE_MAX]) {
        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
                return "-";
        snprintf(buf, VALUE_MAX, "%.2f", json_object_get_double(v));
        return buf;
}

void ctl_print_set_style(const struct ctl_print_style *s) {
        ctl_table_set_style(s);
}

/* ---- limits: the value in force, and the configured one where it differs ---- */

typedef const char *(*formatter_t)(json_object *v, char buf[static VALUE_MAX]);

/* in_force or configured (either may be null: a class without cgroup, or no longer in the policy). */
static void limit_cell(struct table *t, json_object *configured, json_object *in_force, const char *key,
                       formatter_t fmt) {
        json_object *cfg = field(configured, key), *cur = field(in_force, key);
        char a[VALUE_MAX], b[VALUE_MAX];

        if (!json_object_is_type(in_force, json_type_object))
                table_add(t, fmt(cfg, a));
        else if (!json_object_is_type(configured, json_type_object) || json_object_equal(cfg, cur))
                table_add(t, fmt(cur, a));
        else
                table_addf(t, "%s (cfg %s)", fmt(cur, a), fmt(cfg, b));
}

/* "254:0 rbps 200 MiB/s wbps 80 MiB/s, 8:0 wiops 2000": the limits that are not max. */
static char *io_text(json_object *io) {
        static const struct {
                const char *key, *label;
                formatter_t fmt;
        } keys[] = {
                { "read_bps", "rbps", fmt_bandwidth },
                { "write_bps", "wbps", fmt_bandwidth },
                { "read_iops", "riops", fmt_int },
                { "write_iops", "wiops", fmt_int },
        };
        size_t n = array_length(io), size = 0;
        char *buf = NULL;
        FILE *m;

        if (n == 0)
                return strdup("-");
        m = open_memstream(&buf, &size);
        if (!m)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *d = json_object_array_get_idx(io, i);
                bool any = false;

                fprintf(m, "%s%s", i > 0 ? ", " : "", dash(str_field(d, "device")));
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        json_object *v = field(d, keys[k].key);
                        char b[VALUE_MAX];

                        if (!v || streq_ptr(json_object_get_string(v), "max"))
                                continue;
                        fprintf(m, " %s %s", keys[k].label, keys[k].fmt(v, b));
                        any = true;
                }
                if (!any)
                        fputs(" max", m);
        }
        if (fclose(m) != 0)
                return mfree(buf);
        return buf;
}

static void io_cell(struct table *t, json_object *configured, json_object *in_force) {
        json_object *cfg = field(configured, "io"), *cur = field(in_force, "io");
        _cleanup_free_ char *a = NULL, *b = NULL;

        if (!json_object_is_type(in_force, json_type_object))
                table_take(t, io_text(cfg));
        else if (!json_object_is_type(configured, json_type_object) || json_object_equal(cfg, cur))
                table_take(t, io_text(cur));
        else if (!(a = io_text(cur)) || !(b = io_text(cfg)))
                table_take(t, NULL);
        else
                table_addf(t, "%s (cfg %s)", a, b);
}

/* ---- sections ---- */

static int print_classes(FILE *f, json_object *classes) {
        static const char *const header[] = {
                "NAME", "JOBS", "MEMORY", "HIGH", "MAX", "SWAP MAX", "CPU", "IO", "STATE"
        };
        _cleanup_(table_done) struct table t = { .cut = { 8, 4, 5, 6, 9 } }; /* IO, HIGH, MAX, SWAP MAX, STATE */
        size_t n = array_length(classes);

        if (n == 0) {
                fputs("  none\n", f);
                return 0;
        }
        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < n; i++) {
                json_object *c = object_at(classes, i);
                json_object *cfg = field(c, "configured"), *cur = field(c, "in_force");
                char a[VALUE_MAX];

                if (!c)
                        continue;
                table_add(&t, str_field(c, "name"));
                table_add(&t, fmt_int(field(c, "jobs"), a));
                /* The class's own cgroup and its units' (an older daemon gives the cgroup's alone, in force). */
                table_add(&t, fmt_size(field(c, "memory_current") ?: field(cur, "memory_current"), a));
                limit_cell(&t, cfg, cur, "memory_high", fmt_size);
                limit_cell(&t, cfg, cur, "memory_max", fmt_size);
                limit_cell(&t, cfg, cur, "memory_swap_max", fmt_size);
                limit_cell(&t, cfg, cur, "cpu_weight", fmt_int);
                io_cell(&t, cfg, cur);
                if (is_false(field(c, "in_policy"))) {
                        table_add(&t, is_true(field(cur, "frozen")) ? "frozen, not in policy" : "not in policy");
                        table_color(&t, COLOR_YELLOW);
                } else if (array_length(field(c, "io_waiting")) > 0) {
                        /* The first device is enough to say why; io_waiting in --json has them all. */
                        table_addf(&t, "%sio waits for %s%s", is_true(field(cur, "frozen")) ? "frozen, " : "",
                                   dash(json_object_get_string(json_object_array_get_idx(field(c, "io_waiting"), 0))),
                                   array_length(field(c, "io_waiting")) > 1 ? ", ..." : "");
                        table_color(&t, COLOR_RED);
                } else {
                        table_add(&t, is_true(field(cur, "frozen")) ? "frozen" : "-");
                        table_color(&t, is_true(field(cur, "frozen")) ? COLOR_YELLOW : NULL);
                }
        }
        return table_print(f, &t, "  ");
}

static void job_class_cell(struct table *t, json_object *job) {
        if (is_false(field(job, "class_in_policy")))
                table_addf(t, "%s (not in policy)", dash(str_field(job, "class")));
        else
                table_add(t, str_field(job, "class"));
}

static void job_user_cell(struct table *t, json_object *job) {
        char a[VALUE_MAX];

        if (str_field(job, "user"))
                table_add(t, str_field(job, "user"));
        else
                table_add(t, fmt_int(field(job, "uid"), a));
}

/* How a job was placed, in a word: run, move or rule ("placed_by" has the whole). */
static void job_by_cell(struct table *t, json_object *j) {
        const char *by = str_field(j, "placed_by");

        if (by)
                table_addf(t, "%.*s", (int) strcspn(by, " "), by);
        else
                table_add(t, NULL);
}

/* A daemon with many jobs answers with the figures it has and reads the older ones again in the background
 * (pagewardend(8)): says so when some are older than a few seconds, or not read yet. */
#define FIGURES_OLD_MS 5000

static void print_figures_age(FILE *f, json_object *jobs, const char *indent) {
        size_t n = array_length(jobs), old = 0, unread = 0;
        uint64_t oldest = 0;

        for (size_t i = 0; i < n; i++) {
                json_object *j = object_at(jobs, i), *age = field(j, "figures_age_ms");

                if (!j || !json_object_object_get_ex(j, "figures_age_ms", NULL))
                        continue; /* a daemon that reads them all at each request */
                if (!json_object_is_type(age, json_type_int))
                        unread++;
                else if (json_object_get_uint64(age) >= FIGURES_OLD_MS) {
                        old++;
                        oldest = json_object_get_uint64(age) > oldest ? json_object_get_uint64(age) : oldest;
                }
        }
        if (old > 0)
                fprintf(f, "%sthe figures of %zu of %zu jobs were read up to %" PRIu64 " s ago", indent, old, n,
                        oldest / 1000);
        if (unread > 0)
                fprintf(f, "%s%zu of %zu jobs have no figures yet", old > 0 ? "; " : indent, unread, n);
        if (old + unread > 0)
                fputs(" (the daemon reads them again now)\n", f);
}

static int print_jobs(FILE *f, json_object *jobs, const char *indent) {
        static const char *const header[] = { "ID",      "NAME", "CLASS",  "BY",    "USER",
                                              "STARTED", "PIDS", "MEMORY", "CACHE", "CGROUP" };
        _cleanup_(table_done) struct table t = { .cut = { 10, 2, 6 } }; /* CGROUP, NAME, STARTED */
        size_t n = array_length(jobs);
        int r;

        if (n == 0) {
                fprintf(f, "%snone\n", indent);
                return 0;
        }
        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < n; i++) {
                json_object *j = object_at(jobs, i);
                char a[VALUE_MAX];

                if (!j)
                        continue;
                table_add(&t, fmt_int(field(j, "id"), a));
                table_add(&t, str_field(j, "name"));
                job_class_cell(&t, j);
                job_by_cell(&t, j);
                job_user_cell(&t, j);
                table_add(&t, fmt_time(field(j, "started"), false, a));
                table_add(&t, fmt_int(field(j, "pids"), a));
                table_add(&t, fmt_size(field(j, "memory_current"), a));
                table_add(&t, fmt_size(field(j, "memory_file"), a));
                table_add(&t, str_field(j, "cgroup"));
        }
        r = table_print(f, &t, indent);
        if (r >= 0)
                print_figures_age(f, jobs, indent);
        return r;
}

/* memory_min / memory_low: in force, with what is configured and what is effective where they differ; "auto"
 * is sized and applied only while jobs run (jobs_run: some do). */
static void protection_cell(struct table *t, json_object *prot, bool jobs_run) {
        json_object *cfg = field(prot, "configured"), *cur = field(prot, "in_force"), *eff = field(prot, "effective");
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX];
        bool show_cfg = !json_object_equal(cfg, cur), show_eff = eff && !json_object_equal(eff, cur);

        if (!json_object_is_type(prot, json_type_object))
                table_add(t, NULL);
        else if (!jobs_run && streq_ptr(json_object_get_string(cfg), "auto") &&
                 json_object_is_type(cur, json_type_int) && json_object_get_uint64(cur) == 0)
                table_add(t, "auto: applied while jobs run");
        else if (show_cfg && show_eff)
                table_addf(t, "%s (cfg %s, eff %s)", fmt_size(cur, a), fmt_size(cfg, b), fmt_size(eff, c));
        else if (show_cfg)
                table_addf(t, "%s (cfg %s)", fmt_size(cur, a), fmt_size(cfg, b));
        else if (show_eff)
                table_addf(t, "%s (eff %s)", fmt_size(cur, a), fmt_size(eff, c));
        else
                table_add(t, fmt_size(cur, a));
}

static void psi_cell(struct table *t, json_object *psi) {
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX], d[VALUE_MAX];

        if (!json_object_is_type(psi, json_type_object)) {
                table_add(t, NULL);
                return;
        }
        table_addf(t, "some %s/%s full %s/%s", fmt_percent(field(psi, "some_avg10"), a),
                   fmt_percent(field(psi, "some_avg60"), b), fmt_percent(field(psi, "full_avg10"), c),
                   fmt_percent(field(psi, "full_avg60"), d));
}

static int print_protected(FILE *f, json_object *prots, bool jobs_run) {
        static const char *const header[] = { "NAME", "TARGET",    "MEMORY",           "MIN",  "LOW",
                                              "SWAP", "SWAP USED", "PRESSURE 10s/60s", "STATE" };
        _cleanup_(table_done) struct table t = { .cut = { 8, 5, 4, 2, 9 } }; /* PRESSURE, LOW, MIN, TARGET, STATE */
        size_t n = array_length(prots);
        int r;

        if (n == 0) {
                fputs("  none\n", f);
                return 0;
        }
        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < n; i++) {
                json_object *p = object_at(prots, i);
                json_object *error = field(p, "error");
                char a[VALUE_MAX];

                if (!p)
                        continue;
                table_add(&t, str_field(p, "name"));
                table_add(&t, str_field(p, "unit") ?: str_field(p, "cgroup"));
                table_add(&t, fmt_size(field(p, "memory_current"), a));
                protection_cell(&t, field(p, "memory_min"), jobs_run);
                protection_cell(&t, field(p, "memory_low"), jobs_run);
                table_add(&t, str_field(p, "swap"));
                table_add(&t, fmt_size(field(p, "swap_current"), a));
                psi_cell(&t, field(p, "psi"));
                if (!error) {
                        table_add(&t, "ok");
                        table_color(&t, COLOR_GREEN);
                } else {
                        table_addf(&t, "error: %s", dash(json_object_get_string(error)));
                        table_color(&t, COLOR_RED);
                }
        }
        r = table_print(f, &t, "  ");
        if (r < 0)
                return r;
        /* What "auto" believes each application needs while jobs run, and why; what it gets if less. */
        for (size_t i = 0; i < n; i++) {
                json_object *au = field(object_at(prots, i), "auto");
                char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX];
                uint64_t needs = json_object_get_uint64(field(au, "needs")),
                         gets = json_object_get_uint64(field(au, "gets"));

                if (!json_object_is_type(au, json_type_object))
                        continue;
                fprintf(f, "  auto %s: needs %s, ", dash(str_field(object_at(prots, i), "name")),
                        fmt_size(field(au, "needs"), a));
                if (gets < needs)
                        fprintf(f, "gets %s (reserve %s, jobs' floors)\n", fmt_size(field(au, "gets"), b),
                                fmt_size(field(au, "reserve"), c));
                else
                        fputs("gets it all\n", f);
                fprintf(f, "    estimated from: %s\n", dash(str_field(au, "source")));
        }
        return 0;
}

static int print_actions(FILE *f, json_object *actions) {
        _cleanup_(table_done) struct table t = { .n_columns = 2, .cut = { 2 } };
        size_t n = array_length(actions);

        if (n == 0) {
                fputs("  none\n", f);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *a = object_at(actions, i);
                char b[VALUE_MAX];

                if (!a)
                        continue;
                table_add(&t, fmt_time(field(a, "time"), false, b));
                table_add(&t, str_field(a, "message"));
        }
        return table_print(f, &t, "  ");
}

/* Unplaced work that streamed while protected applications lost memory (observation; suggest says more). */
static int print_unplaced(FILE *f, json_object *list) {
        static const char *const header[] = { "NAME", "CACHE CHARGED", "EPISODES", "LAST" };
        _cleanup_(table_done) struct table t = { .cut = { 1 } };
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX];

        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < array_length(list); i++) {
                json_object *u = object_at(list, i);

                if (!u)
                        continue;
                table_add(&t, dash(str_field(u, "name")));
                table_add(&t, fmt_size(field(u, "charged_bytes"), a));
                table_add(&t, fmt_int(field(u, "episodes"), b));
                table_add(&t, fmt_time(field(u, "last"), true, c));
        }
        return table_print(f, &t, "  ");
}

/* The governor: idle or watching, its counters, and each class's limits in force against the policy's. */
static int print_governor(FILE *f, json_object *gov) {
        static const char *const header[] = { "CLASS", "MEMORY.HIGH", "FROZEN", "LAST ACTION" };
        _cleanup_(table_done) struct table t = { .cut = { 4, 2 } }; /* LAST ACTION, MEMORY.HIGH */
        json_object *lat = field(gov, "reaction_latency"), *classes = field(gov, "classes");
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX];

        if (!gov) {
                fputs("  -\n", f);
                return 0;
        }
        fprintf(f, "  %s%s; %s actions; reaction latency median %s us, max %s us\n",
                is_true(field(gov, "active")) ? "watching" : "idle",
                is_true(field(gov, "under_pressure")) ? ", under pressure" : "", fmt_int(field(gov, "actions"), a),
                fmt_int(field(lat, "median_us"), b), fmt_int(field(lat, "max_us"), c));
        if (json_object_get_int64(field(gov, "held_off")) > 0)
                fprintf(f, "  %s signals not acted on: the jobs could not cause them (the actions say why)\n",
                        fmt_int(field(gov, "held_off"), a));
        if (array_length(classes) == 0)
                return 0;
        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < array_length(classes); i++) {
                json_object *cl = object_at(classes, i);

                if (!cl)
                        continue;
                table_add(&t, dash(str_field(cl, "name")));
                table_addf(&t, "%s (cfg %s)", fmt_size(field(cl, "memory_high"), a),
                           fmt_size(field(cl, "memory_high_configured"), b));
                table_add(&t, is_true(field(cl, "frozen")) ? "yes" : "no");
                table_color(&t, is_true(field(cl, "frozen")) ? COLOR_YELLOW : NULL);
                table_add(&t, dash(str_field(cl, "last_action")));
        }
        return table_print(f, &t, "  ");
}

/* ---- top ---- */

/* The jobs of a list by id, sorted, so that each of 2,000 rows finds its job of two seconds ago in log time
 * (issue 27: a linear search for each row was quadratic). */
struct job_ref {
        int64_t id;
        json_object *job;
};

static int job_ref_cmp(const void *x, const void *y) {
        const struct job_ref *a = x, *b = y;

        return a->id < b->id ? -1 : a->id > b->id;
}

/* The jobs with an integer id, sorted by it (*ret NULL, 0 if none or out of memory: then no rates). */
static void job_index(json_object *jobs, struct job_ref **ret, size_t *ret_n) {
        size_t n = array_length(jobs), k = 0;
        struct job_ref *refs = n ? calloc(n, sizeof(*refs)) : NULL;

        for (size_t i = 0; refs && i < n; i++) {
                json_object *j = object_at(jobs, i), *id = field(j, "id");

                if (j && json_object_is_type(id, json_type_int))
                        refs[k++] = (struct job_ref){ .id = json_object_get_int64(id), .job = j };
        }
        if (k > 1)
                qsort(refs, k, sizeof(*refs), job_ref_cmp);
        *ret = refs;
        *ret_n = k;
}

static json_object *job_by_id(const struct job_ref *refs, size_t n, json_object *id) {
        struct job_ref key, *hit;

        if (!refs || !json_object_is_type(id, json_type_int))
                return NULL;
        key.id = json_object_get_int64(id);
        hit = bsearch(&key, refs, n, sizeof(*refs), job_ref_cmp);
        return hit ? hit->job : NULL;
}

static void rate_cell(struct table *t, json_object *now, json_object *before, double seconds, bool signed_rate) {
        uint64_t a, b;
        char buf[VALUE_MAX];

        if (!uint_value(now, &a) || !uint_value(before, &b) || seconds <= 0) {
                table_add(t, NULL);
                return;
        }
        if (a >= b)
                units_format_human((uint64_t) ((double) (a - b) / seconds), buf, sizeof(buf));
        else if (signed_rate) {
                units_format_human((uint64_t) ((double) (b - a) / seconds), buf + 1, sizeof(buf) - 1);
                buf[0] = '-';
        } else {
                table_add(t, NULL); /* a counter that went back: another job in the same slot */
                return;
        }
        table_addf(t, "%s/s", buf);
}

/* The seconds between the reads of a job's figures in two answers seconds apart: a daemon with many jobs
 * answers with figures read earlier (figures_age_ms), and two answers may carry the same read (0: no rate). */
static double read_interval(json_object *j, json_object *prev, double seconds) {
        uint64_t age, prev_age;

        if (!uint_value(field(j, "figures_age_ms"), &age) || !uint_value(field(prev, "figures_age_ms"), &prev_age))
                return seconds; /* a daemon that reads them for each answer */
        return seconds + ((double) prev_age - (double) age) / 1000.0;
}

static int print_jobs_top(FILE *f, json_object *jobs, json_object *prev_jobs, double seconds) {
        static const char *const header[] = { "ID",    "NAME",   "CLASS",   "PIDS",  "MEMORY",
                                              "MEM/s", "READ/s", "WRITE/s", "STATE", "CGROUP" };
        _cleanup_(table_done) struct table t = { .cut = { 10, 2 } }; /* CGROUP, NAME */
        _cleanup_free_ struct job_ref *prev = NULL;
        size_t n = array_length(jobs), n_prev;

        if (n == 0) {
                fputs("  none\n", f);
                return 0;
        }
        job_index(prev_jobs, &prev, &n_prev);
        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < n; i++) {
                json_object *j = object_at(jobs, i), *p;
                char a[VALUE_MAX];
                double interval;

                if (!j)
                        continue;
                p = job_by_id(prev, n_prev, field(j, "id"));
                interval = read_interval(j, p, seconds);
                table_add(&t, fmt_int(field(j, "id"), a));
                table_add(&t, str_field(j, "name"));
                job_class_cell(&t, j);
                table_add(&t, fmt_int(field(j, "pids"), a));
                table_add(&t, fmt_size(field(j, "memory_current"), a));
                rate_cell(&t, field(j, "memory_current"), field(p, "memory_current"), interval, true);
                rate_cell(&t, field(j, "io_read_bytes"), field(p, "io_read_bytes"), interval, false);
                rate_cell(&t, field(j, "io_written_bytes"), field(p, "io_written_bytes"), interval, false);
                table_add(&t, str_field(j, "state"));
                table_color(&t, str_field(j, "state") && streq(str_field(j, "state"), "frozen") ? COLOR_YELLOW : NULL);
                table_add(&t, str_field(j, "cgroup"));
        }
        return table_print(f, &t, "  ");
}

int ctl_print_top(FILE *f, json_object *resp, json_object *prev, double seconds, const char *now) {
        json_object *actions = field(resp, "actions");
        size_t n = array_length(actions);
        int r;

        fprintf(f, "pagewardend %s, backend %s, %s%s\n", dash(str_field(resp, "version")),
                dash(str_field(resp, "backend")), dash(now), prev ? "" : " (rates from the next refresh)");
        fputs("\nCLASSES (in force, and configured where it differs)\n", f);
        r = print_classes(f, field(resp, "classes"));
        if (r >= 0) {
                fputs("\nJOBS\n", f);
                r = print_jobs_top(f, field(resp, "jobs"), field(prev, "jobs"), seconds);
        }
        if (r >= 0) {
                fputs("\nPROTECTED\n", f);
                r = print_protected(f, field(resp, "protected"), array_length(field(resp, "jobs")) > 0);
        }
        if (r >= 0) {
                fputs("\nGOVERNOR\n", f);
                r = print_governor(f, field(resp, "governor"));
        }
        if (r < 0)
                return r;
        fputs("\nLAST ACTIONS\n", f);
        if (n > 5) {
                /* The last five: a copy of the array's tail, printed as the status table is. */
                json_object *tail = json_object_new_array();

                if (!tail)
                        return -ENOMEM;
                for (size_t i = n - 5; i < n; i++)
                        json_object_array_add(tail, json_object_get(json_object_array_get_idx(actions, i)));
                r = print_actions(f, tail);
                json_object_put(tail);
                return r;
        }
        return print_actions(f, actions);
}

size_t ctl_status_problems(FILE *f, json_object *resp) {
        json_object *classes = field(resp, "classes"), *prots = field(resp, "protected");
        size_t n = 0;

        for (size_t i = 0; i < array_length(prots); i++) {
                json_object *p = object_at(prots, i), *error = field(p, "error");

                if (!p || !error)
                        continue;
                n++;
                if (f)
                        fprintf(f, "pagewardenctl: protected application %s is not protected: %s\n",
                                dash(str_field(p, "name")), dash(json_object_get_string(error)));
        }
        for (size_t i = 0; i < array_length(classes); i++) {
                json_object *c = object_at(classes, i), *waiting = field(c, "io_waiting");

                if (!c || array_length(waiting) == 0 || is_false(field(c, "in_policy")))
                        continue;
                n++;
                if (f)
                        fprintf(f, "pagewardenctl: class %s: its io limits wait for %s%s\n", dash(str_field(c, "name")),
                                dash(json_object_get_string(json_object_array_get_idx(waiting, 0))),
                                array_length(waiting) > 1 ? " and others" : "");
        }
        return n;
}

int ctl_print_status(FILE *f, json_object *resp) {
        int r;

        fprintf(f, "pagewardend %s: cgroup root %s, backend %s\n", dash(str_field(resp, "version")),
                dash(str_field(resp, "cgroup_root")), dash(str_field(resp, "backend")));
        fputs("\nCLASSES\n", f);
        r = print_classes(f, field(resp, "classes"));
        if (r < 0)
                return r;
        fputs("\nJOBS\n", f);
        r = print_jobs(f, field(resp, "jobs"), "  ");
        if (r < 0)
                return r;
        fputs("\nPROTECTED\n", f);
        r = print_protected(f, field(resp, "protected"), array_length(field(resp, "jobs")) > 0);
        if (r < 0)
                return r;
        /* Only when observation named something: an older daemon, or a quiet night, adds nothing. */
        if (array_length(field(resp, "unplaced")) > 0) {
                fputs("\nUNPLACED WORK (streamed while protected applications lost memory; see suggest)\n", f);
                r = print_unplaced(f, field(resp, "unplaced"));
                if (r < 0)
                        return r;
        }
        fputs("\nGOVERNOR\n", f);
        r = print_governor(f, field(resp, "governor"));
        if (r < 0)
                return r;
        fputs("\nRECENT ACTIONS\n", f);
        return print_actions(f, field(resp, "actions"));
}

/* "job 3 (nightly)", "job 3" */
static void print_job_ref(FILE *f, json_object *job) {
        char a[VALUE_MAX];

        fprintf(f, "job %s", fmt_int(field(job, "id"), a));
        if (str_field(job, "name"))
                fprintf(f, " (%s)", str_field(job, "name"));
}

/* "1h02m", "3m05s", "12s"; "-" if unknown. */
static const char *fmt_runtime(json_object *v, char buf[static VALUE_MAX]) {
        uint64_t sec;

        if (!uint_value(v, &sec))
                return "-";
        units_format_runtime(sec, buf, VALUE_MAX);
        return buf;
}

/* Microseconds as seconds with one decimal. */
static const char *fmt_stall(json_object *v, char buf[static VALUE_MAX]) {
        uint64_t us;

        if (!uint_value(v, &us))
                return "-";
        snprintf(buf, VALUE_MAX, "%.1f s", (double) us / 1e6);
        return buf;
}

static bool is_oom(json_object *job) {
        return str_field(job, "how") && streq(str_field(job, "how"), "oom-killed");
}

/* In a report's prose a missing figure was not measured (no such controller in the job's cgroup, or the
 * cgroup was gone before it could be read): say so, where a table would say "-". */
static const char *measured(const char *s) {
        return streq(s, "-") ? "not measured" : s;
}

/* "1.2 GiB", "at most 1.2 GiB" when the cgroup's peak may be an earlier job's; "-" if not measured. */
static void peak_text(json_object *job, char buf[static VALUE_MAX]) {
        char a[VALUE_MAX];

        snprintf(buf, VALUE_MAX, "%s%s",
                 is_false(field(job, "memory_peak_exact")) && field(job, "memory_peak") ? "at most " : "",
                 fmt_size(field(job, "memory_peak"), a));
}

/* What the governor did while the job ran, and what it believed at its end. */
static void governor_rows(struct table *t, json_object *j) {
        json_object *beliefs = field(j, "governor"), *autos = field(beliefs, "auto");
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX];

        table_add(t, "governor:");
        if (json_object_get_int64(field(j, "governor_undone")) > 0)
                table_addf(t,
                           "tightened its class %s times (%s of those undone at once: they did not help), froze it "
                           "%s times while it ran",
                           fmt_int(field(j, "governor_tightened"), a), fmt_int(field(j, "governor_undone"), c),
                           fmt_int(field(j, "governor_froze"), b));
        else
                table_addf(t, "tightened its class %s times, froze it %s times while it ran",
                           fmt_int(field(j, "governor_tightened"), a), fmt_int(field(j, "governor_froze"), b));
        if (str_field(beliefs, "class_last_action")) {
                table_add(t, "  last action:");
                table_add(t, str_field(beliefs, "class_last_action"));
        }
        if (json_object_get_int64(field(j, "governor_held_off")) > 0) {
                table_add(t, "  not acted on:");
                table_addf(t, "%s signals the jobs could not cause; the last: %s",
                           fmt_int(field(j, "governor_held_off"), a), dash(str_field(beliefs, "last_held_off")));
        }
        for (size_t i = 0; i < array_length(autos); i++) {
                json_object *x = object_at(autos, i);

                if (!x)
                        continue;
                table_addf(t, "  auto %s:", dash(str_field(x, "name")));
                table_addf(t, "needs %s, gets %s (reserve %s); estimated from: %s", fmt_size(field(x, "needs"), a),
                           fmt_size(field(x, "gets"), b), fmt_size(field(beliefs, "reserve"), c),
                           dash(str_field(x, "source")));
        }
}

void ctl_print_report_line(FILE *f, json_object *job) {
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX], d[VALUE_MAX], e[VALUE_MAX], g[VALUE_MAX], h[VALUE_MAX];

        fputs("pagewardenctl: ", f);
        print_job_ref(f, job);
        peak_text(job, b);
        fprintf(f,
                " %s after %s: peak memory %s, read %s, wrote %s, stalled %s on memory and %s on I/O; the "
                "governor tightened its class %s times",
                is_oom(job) ? "was OOM-killed (a memory.max, its own or its class's)" : "ended",
                fmt_runtime(field(job, "runtime"), a), measured(b), measured(fmt_size(field(job, "io_read_bytes"), c)),
                measured(fmt_size(field(job, "io_written_bytes"), d)),
                measured(fmt_stall(field(job, "memory_stall_us"), g)),
                measured(fmt_stall(field(job, "io_stall_us"), h)), fmt_int(field(job, "governor_tightened"), e));
        if (json_object_get_int64(field(job, "governor_undone")) > 0)
                fprintf(f, " and undid %s of those (they did not help)", fmt_int(field(job, "governor_undone"), a));
        fputc('\n', f);
}

/* A rate per minute, "-" if unknown; scale 1e6 for microseconds shown as seconds. */
static const char *fmt_per_min(json_object *v, double scale, char buf[static VALUE_MAX]) {
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return "-";
        snprintf(buf, VALUE_MAX, scale > 1 ? "%.1f s" : "%.0f", json_object_get_double(v) / scale);
        return buf;
}

/* "1200 refaults (600/min; 300/min while no job ran), 40 major faults (...), stalled 30.0 s (...)" */
static void app_cost_cell(struct table *t, json_object *app) {
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX], d[VALUE_MAX], e[VALUE_MAX], g[VALUE_MAX], h[VALUE_MAX],
                k[VALUE_MAX], l[VALUE_MAX];

        table_addf(t,
                   "%s refaults (%s/min; %s/min while no job ran), %s major faults (%s/min; %s/min), "
                   "stalled %s (%s/min; %s/min)",
                   fmt_int(field(app, "refaults"), a), fmt_per_min(field(app, "refaults_per_min"), 1, b),
                   fmt_per_min(field(app, "idle_refaults_per_min"), 1, c), fmt_int(field(app, "majfaults"), d),
                   fmt_per_min(field(app, "majfaults_per_min"), 1, e),
                   fmt_per_min(field(app, "idle_majfaults_per_min"), 1, g), fmt_stall(field(app, "stall_us"), h),
                   fmt_per_min(field(app, "stall_us_per_min"), 1e6, k),
                   fmt_per_min(field(app, "idle_stall_us_per_min"), 1e6, l));
}

/* The end-of-job report of an ended job, in show. */
/* Where an ended job's I/O was counted, if not in its own cgroup: " (counted at its class, ...)", or "". */
#define IO_COUNTED_MAX 96
static const char *io_counted_text(json_object *j, char buf[static IO_COUNTED_MAX]) {
        uint64_t from, started;

        if (!str_field(j, "io_counted_at") || !streq(str_field(j, "io_counted_at"), "class"))
                return "";
        if (uint_value(field(j, "io_counted_from"), &from) && uint_value(field(j, "started"), &started) &&
            from > started)
                snprintf(buf, IO_COUNTED_MAX,
                         " (counted at its class, where it ran alone from %" PRIu64 " s after its start)",
                         from - started);
        else
                snprintf(buf, IO_COUNTED_MAX, " (counted at its class, where it ran alone)");
        return buf;
}

static void report_rows(struct table *t, json_object *j) {
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX], io[IO_COUNTED_MAX];

        table_add(t, "ended:");
        table_addf(t, "%s, %s after %s", fmt_time(field(j, "ended"), true, a),
                   is_oom(j) ? "OOM-killed (a memory.max, its own or its class's)"
                   : str_field(j, "how") && streq(str_field(j, "how"), "exited") ? "its processes exited"
                                                                                 : dash(str_field(j, "how")),
                   fmt_runtime(field(j, "runtime"), b));
        table_color(t, is_oom(j) ? COLOR_RED : NULL);
        table_add(t, "peak memory:");
        peak_text(j, a);
        if (field(j, "memory_file"))
                table_addf(t, "%s (page cache at the end %s)", measured(a), fmt_size(field(j, "memory_file"), b));
        else
                table_add(t, measured(a));
        table_add(t, "I/O:");
        if (field(j, "io_read_bytes") || field(j, "io_written_bytes"))
                table_addf(t, "read %s, wrote %s%s", measured(fmt_size(field(j, "io_read_bytes"), a)),
                           measured(fmt_size(field(j, "io_written_bytes"), b)), io_counted_text(j, io));
        else
                table_add(t, "not measured");
        table_add(t, "throttled:");
        if (field(j, "memory_high_events"))
                table_addf(t, "its own memory.high hit %s times, memory.max %s times; OOM kills: %s",
                           fmt_int(field(j, "memory_high_events"), a), fmt_int(field(j, "memory_max_events"), b),
                           fmt_int(field(j, "oom_kills"), c));
        else
                table_add(t, "not measured");
        if (field(j, "governor_tightened"))
                governor_rows(t, j);
        table_add(t, "stalled:");
        if (field(j, "memory_stall_us") || field(j, "io_stall_us"))
                table_addf(t, "%s on memory, %s on I/O", measured(fmt_stall(field(j, "memory_stall_us"), a)),
                           measured(fmt_stall(field(j, "io_stall_us"), b)));
        else
                table_add(t, "not measured");
        for (size_t i = 0; i < array_length(field(j, "applications")); i++) {
                json_object *app = object_at(field(j, "applications"), i);

                if (!app)
                        continue;
                table_addf(t, "cost to %s:", dash(str_field(app, "name")));
                app_cost_cell(t, app);
        }
        if (json_object_get_int64(field(j, "applications_omitted")) > 0) {
                table_add(t, "cost to others:");
                table_addf(t, "%s more protected applications, each less than those above",
                           fmt_int(field(j, "applications_omitted"), a));
        }
        if (str_field(j, "counted_from") && streq(str_field(j, "counted_from"), "adoption")) {
                table_add(t, "counted:");
                table_add(t, "from its adoption by a restarted daemon");
        }
        {
                uint64_t until, ended;

                /* A unit whose cgroup systemd removed before the daemon read its end: figures as last read. */
                if (uint_value(field(j, "counted_until"), &until) && uint_value(field(j, "ended"), &ended) &&
                    until < ended) {
                        table_add(t, "counted until:");
                        table_addf(t, "%s, %" PRIu64 " s before its end (systemd removed its cgroup first)",
                                   fmt_time(field(j, "counted_until"), true, a), ended - until);
                }
        }
}

/* list --all: the ended jobs, newest first, with how they ended and what they cost. */
static int print_ended(FILE *f, json_object *jobs) {
        static const char *const header[] = { "ID",      "NAME", "CLASS", "BY",   "USER",   "ENDED",
                                              "RUNTIME", "HOW",  "PEAK",  "READ", "WRITTEN" };
        _cleanup_(table_done) struct table t = { .cut = { 2 } }; /* NAME */

        table_header(&t, header, ELEMENTSOF(header));
        for (size_t i = 0; i < array_length(jobs); i++) {
                json_object *j = object_at(jobs, i);
                char a[VALUE_MAX];

                if (!j)
                        continue;
                table_add(&t, fmt_int(field(j, "id"), a));
                table_add(&t, str_field(j, "name"));
                table_add(&t, str_field(j, "class"));
                job_by_cell(&t, j);
                job_user_cell(&t, j);
                table_add(&t, fmt_time(field(j, "ended"), false, a));
                table_add(&t, fmt_runtime(field(j, "runtime"), a));
                table_add(&t, str_field(j, "how"));
                table_color(&t, is_oom(j) ? COLOR_RED : NULL);
                peak_text(j, a);
                table_add(&t, a);
                table_add(&t, fmt_size(field(j, "io_read_bytes"), a));
                table_add(&t, fmt_size(field(j, "io_written_bytes"), a));
        }
        return table_print(f, &t, "");
}

int ctl_print_list(FILE *f, json_object *resp) {
        int r = 0;

        if (array_length(field(resp, "jobs")) == 0)
                fputs("no jobs\n", f);
        else
                r = print_jobs(f, field(resp, "jobs"), "");
        if (r < 0 || !field(resp, "ended"))
                return r;
        if (array_length(field(resp, "ended")) == 0) {
                fputs("\nno ended jobs kept\n", f);
                return 0;
        }
        fputs("\nENDED\n", f);
        return print_ended(f, field(resp, "ended"));
}

int ctl_print_show(FILE *f, json_object *resp) {
        _cleanup_(table_done) struct table t = { .n_columns = 2 };
        json_object *j = field(resp, "job");
        char a[VALUE_MAX], b[VALUE_MAX];

        fprintf(f, "job %s", fmt_int(field(j, "id"), a));
        if (str_field(j, "name"))
                fprintf(f, " (%s)", str_field(j, "name"));
        fputc('\n', f);

        table_add(&t, "class:");
        job_class_cell(&t, j);
        table_add(&t, "cgroup:");
        table_add(&t, str_field(j, "cgroup"));
        if (str_field(j, "unit")) {
                table_add(&t, "unit:");
                table_add(&t, str_field(j, "unit"));
        }
        table_add(&t, "placed by:");
        table_add(&t, str_field(j, "placed_by"));
        if (str_field(j, "state")) {
                table_add(&t, "state:");
                table_add(&t, str_field(j, "state"));
                table_color(&t, streq(str_field(j, "state"), "frozen") ? COLOR_YELLOW : NULL);
        }
        table_add(&t, "user:");
        if (str_field(j, "user") && field(j, "uid"))
                table_addf(&t, "%s (uid %s)", str_field(j, "user"), fmt_int(field(j, "uid"), a));
        else
                job_user_cell(&t, j);
        table_add(&t, "started:");
        table_add(&t, fmt_time(field(j, "started"), true, a));
        if (str_field(j, "state") && streq(str_field(j, "state"), "ended")) {
                report_rows(&t, j);
                return table_print(f, &t, "  ");
        }
        table_add(&t, "processes:");
        table_add(&t, fmt_int(field(j, "pids"), a));
        table_add(&t, "memory:");
        if (field(j, "memory_current"))
                table_addf(&t, "%s (page cache %s)", fmt_size(field(j, "memory_current"), a),
                           fmt_size(field(j, "memory_file"), b));
        else if (field(j, "pids")) /* a systemd scope without limits of its own is no memory cgroup */
                table_add(&t, "not measured here (its cgroup has no memory controller; see its class)");
        else
                table_add(&t, "-");
        if (field(j, "memory_high") || field(j, "memory_max")) {
                table_add(&t, "job limits:");
                table_addf(&t, "memory.high %s, memory.max %s", fmt_size(field(j, "memory_high"), a),
                           fmt_size(field(j, "memory_max"), b));
        }
        return table_print(f, &t, "  ");
}

int ctl_print_moved(FILE *f, json_object *resp) {
        json_object *job = field(resp, "job"), *moved = field(resp, "moved");
        size_t n = array_length(moved);

        if (json_object_is_type(moved, json_type_array))
                fprintf(f, "moved %zu process%s into ", n, n == 1 ? "" : "es");
        else
                fputs("moved the processes into ", f);
        print_job_ref(f, job);
        fprintf(f, " of class %s at %s\n", dash(str_field(job, "class")), dash(str_field(job, "cgroup")));
        return 0;
}

int ctl_print_signalled(FILE *f, json_object *resp) {
        int64_t n = json_object_get_int64(field(resp, "signalled"));

        int64_t other = json_object_get_int64(field(resp, "not_signalled"));
        char a[VALUE_MAX];

        fprintf(f, "%s sent to %s process%s of ", dash(str_field(resp, "signal")), fmt_int(field(resp, "signalled"), a),
                n == 1 ? "" : "es");
        print_job_ref(f, field(resp, "job"));
        if (other > 0)
                fprintf(f, "; not to its %" PRId64 " process%s of other users", other, other == 1 ? "" : "es");
        fputc('\n', f);
        return 0;
}

int ctl_print_job_state(FILE *f, json_object *resp) {
        print_job_ref(f, field(resp, "job"));
        fprintf(f, ": %s\n", dash(str_field(field(resp, "job"), "state")));
        return 0;
}

int ctl_print_reloaded(FILE *f, json_object *resp) {
        char a[VALUE_MAX], b[VALUE_MAX];
        int64_t c = json_object_get_int64(field(resp, "classes")), p = json_object_get_int64(field(resp, "protected"));

        fprintf(f, "reloaded: %s job class%s, %s protected application%s\n", fmt_int(field(resp, "classes"), a),
                c == 1 ? "" : "es", fmt_int(field(resp, "protected"), b), p == 1 ? "" : "s");
        return 0;
}

int ctl_print_placed(FILE *f, json_object *resp, double msec) {
        json_object *job = field(resp, "job");

        fputs("pagewardenctl: ", f);
        print_job_ref(f, job);
        fprintf(f, " in %s at %s, placed in %.2f ms\n", dash(str_field(job, "class")), dash(str_field(job, "cgroup")),
                msec);
        return 0;
}

void ctl_print_failure(FILE *f, const struct ctl_response *r, const char *suffix) {
        const char *diagnostics = ctl_response_diagnostics(r);

        fprintf(f, "pagewardenctl: %s%s\n", ctl_response_error(r), strempty(suffix));
        if (diagnostics)
                fprintf(f, "%s%s", diagnostics, endswith(diagnostics, "\n") ? "" : "\n");
}
