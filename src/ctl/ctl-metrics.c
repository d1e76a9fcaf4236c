/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "ctl-json.h"
#include "ctl-metrics.h"
#include "ctl-print.h"
#include "util.h"

/* ---- reading the response ---- */

/* A field below o by its keys joined by dots, such as "in_force.memory_high". */
static json_object *lookup(json_object *o, const char *path) {
        char key[64];

        while (o && *path) {
                size_t n = strcspn(path, ".");

                if (n >= sizeof(key))
                        return NULL;
                memcpy(key, path, n);
                key[n] = '\0';
                o = field(o, key);
                path += n + (path[n] == '.');
        }
        return o;
}

/*
 * The key of the i-th element of an array (its name, a device), unless an
 * earlier element has the same: one series each, as a duplicate series
 * would make the whole output invalid.
 */
static const char *unique_key(json_object *array, size_t i, const char *key) {
        const char *s = str_field(json_object_array_get_idx(array, i), key);

        for (size_t k = 0; s && k < i; k++)
                if (streq_ptr(str_field(json_object_array_get_idx(array, k), key), s))
                        return NULL;
        return s;
}

/* ---- values ---- */

#define VALUE_MAX 32

/* What a value is in the response, and how it is written. */
enum kind {
        NUMBER,   /* a count or a size: an integer from 0 */
        LIMIT,    /* a size, or "max" (no limit): +Inf */
        USEC,     /* microseconds, written as seconds */
        BOOL,     /* true or false: 1 or 0 */
        NO_ERROR, /* an "error" field: null (no error) is 1, a message 0 */
};

/* Microseconds as seconds, exactly and without trailing zeros: 850 is 0.00085, 2500000 is 2.5. */
static void format_usec(uint64_t usec, char buf[static VALUE_MAX]) {
        int n = snprintf(buf, VALUE_MAX, "%" PRIu64 ".%06" PRIu64, usec / 1000000, usec % 1000000);

        while (buf[n - 1] == '0')
                buf[--n] = '\0';
        if (buf[n - 1] == '.')
                buf[--n] = '\0';
}

/* v as a sample's value; false if it is not there or not of its kind (then there is no sample). */
static bool format_value(json_object *v, enum kind kind, char buf[static VALUE_MAX]) {
        uint64_t u;

        if (kind == LIMIT && json_object_is_type(v, json_type_string) && streq(json_object_get_string(v), "max")) {
                snprintf(buf, VALUE_MAX, "+Inf");
                return true;
        }
        if (kind == BOOL) {
                if (!json_object_is_type(v, json_type_boolean))
                        return false;
                snprintf(buf, VALUE_MAX, "%d", json_object_get_boolean(v) ? 1 : 0);
                return true;
        }
        if (!uint_value(v, &u))
                return false;
        if (kind == USEC)
                format_usec(u, buf);
        else
                snprintf(buf, VALUE_MAX, "%" PRIu64, u);
        return true;
}

/* ---- writing: families, samples, labels ---- */

/* A family (its name as its samples have it: a counter's with _total) and where its value is. */
struct metric {
        const char *name, *type, *help;
        const char *path; /* in each item (a class, a protected application) or the response */
        enum kind kind;
};

struct label {
        const char *name, *value; /* value NULL: left out */
};

struct writer {
        FILE *f;
        const char *family; /* whose HELP and TYPE were written last */
};

/* The length of the UTF-8 character at p, or 0 if the bytes there are not one (overlong, a surrogate, cut). */
static size_t utf8_length(const char *p) {
        const unsigned char *s = (const unsigned char *) p;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                lo = s[0] == 0xe0 ? 0xa0 : 0x80;
                hi = s[0] == 0xed ? 0x9f : 0xbf;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                lo = s[0] == 0xf0 ? 0x90 : 0x80;
                hi = s[0] == 0xf4 ? 0x8f : 0xbf;
        } else
                return 0;
        for (size_t i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
                if (s[i] < lo || s[i] > hi)
                        return 0;
        return n;
}

/* Escaped as the format wants it: \\, \" and \n; other control characters and bytes that are not UTF-8 as '?'. */
static void write_label_value(FILE *f, const char *s) {
        while (*s) {
                size_t n = utf8_length(s);

                if (*s == '\\' || *s == '"')
                        fprintf(f, "\\%c", *s);
                else if (*s == '\n')
                        fputs("\\n", f);
                else if (n == 0 || (unsigned char) *s < 0x20 || *s == 0x7f)
                        fputc('?', f);
                else
                        fwrite(s, 1, n, f);
                s += n ?: 1;
        }
}

/* A HELP text: \\ and \n escaped. */
static void write_help(FILE *f, const char *s) {
        for (; *s; s++)
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
}

/* One sample of m (suffix: _bucket, _sum, _count of a histogram), after m's HELP and TYPE if it is the first. */
static void emit(struct writer *w, const struct metric *m, const char *suffix, const struct label *labels, size_t n,
                 const char *value) {
        bool first = true;

        if (!streq_ptr(w->family, m->name)) {
                fprintf(w->f, "# HELP %s ", m->name);
                write_help(w->f, m->help);
                fprintf(w->f, "\n# TYPE %s %s\n", m->name, m->type);
                w->family = m->name;
        }
        fprintf(w->f, "%s%s", m->name, suffix);
        for (size_t i = 0; i < n; i++) {
                if (!labels[i].value)
                        continue;
                fprintf(w->f, "%s%s=\"", first ? "{" : ",", labels[i].name);
                write_label_value(w->f, labels[i].value);
                fputc('"', w->f);
                first = false;
        }
        fprintf(w->f, "%s %s\n", first ? "" : "}", value);
}

/* The value of m in item; false if there is none. */
static bool item_value(json_object *item, const struct metric *m, char buf[static VALUE_MAX]) {
        json_object *v = NULL;

        if (m->kind != NO_ERROR)
                return format_value(lookup(item, m->path), m->kind, buf);
        /* Absent (an older daemon) is unknown; null is no error. */
        if (!json_object_is_type(item, json_type_object) || !json_object_object_get_ex(item, m->path, &v))
                return false;
        snprintf(buf, VALUE_MAX, "%d", v == NULL);
        return true;
}

/* Each metric of table, family by family: of each element of items labelled label=its name, or with label
 * NULL of items itself, without a label. */
static void write_table(struct writer *w, json_object *items, const char *label, const struct metric *table, size_t n) {
        for (size_t t = 0; t < n; t++)
                for (size_t i = 0; i < (label ? array_length(items) : 1); i++) {
                        struct label l = { label, label ? unique_key(items, i, "name") : NULL };
                        char v[VALUE_MAX];

                        if ((label && !l.value) ||
                            !item_value(label ? json_object_array_get_idx(items, i) : items, &table[t], v))
                                continue;
                        emit(w, &table[t], "", &l, label ? 1 : 0, v);
                }
}

/* ---- the metrics ---- */

static const struct metric up = { "pagewarden_up", "gauge",
                                  "1 if pagewardend answered (the other metrics are its), 0 if it did not." };

static const struct metric daemon_metrics[] = {
        { "pagewarden_daemon_start_time_seconds", "gauge", "When pagewardend started, in seconds since the epoch.",
          "daemon.started", NUMBER },
        { "pagewarden_daemon_resident_memory_bytes", "gauge", "The resident memory of pagewardend.",
          "daemon.memory_rss", NUMBER },
        { "pagewarden_daemon_cpu_seconds_total", "counter",
          "The CPU time pagewardend used, user and system, in all its threads.", "daemon.cpu_us", USEC },
        { "pagewarden_jobs_ended_total", "counter", "Jobs that ended since pagewardend started.", "daemon.jobs_ended",
          NUMBER },
        { "pagewarden_jobs_oom_killed_total", "counter",
          "Jobs that were OOM-killed (at their own or their class's memory.max) since pagewardend started.",
          "daemon.jobs_oom_killed", NUMBER },
        { "pagewarden_loop_longest_dispatch_seconds", "gauge",
          "The longest time one dispatch of pagewardend's event loop took since it started (requests, triggers and "
          "timers waited meanwhile).",
          "daemon.loop.longest_us", USEC },
        { "pagewarden_loop_slow_dispatches_total", "counter",
          "Dispatches of pagewardend's event loop that took longer than 20 ms since it started.", "daemon.loop.slow",
          NUMBER },
        { "pagewarden_governor_active", "gauge",
          "1 while the governor watches (jobs run and something is protected), else 0.", "governor.active", BOOL },
        { "pagewarden_governor_under_pressure", "gauge",
          "1 while the governor sees pressure on a protected application or the machine, else 0.",
          "governor.under_pressure", BOOL },
        { "pagewarden_governor_actions_total", "counter",
          "Actions the governor took since pagewardend started (limits lowered or raised, freezes, thaws, auto "
          "protection).",
          "governor.actions", NUMBER },
        { "pagewarden_governor_held_off_total", "counter",
          "Pressure signals the governor did not act on since pagewardend started, because the jobs could not have "
          "caused them (the application at its own memory.high or memory.max, the jobs idle, its I/O on other "
          "devices).",
          "governor.held_off", NUMBER },
        { "pagewarden_governor_longest_write_seconds", "gauge",
          "The longest memory.high write of the governor (the reclaim it makes) since pagewardend started.",
          "governor.reaction_latency.longest_write_us", USEC },
        { "pagewarden_observation_windows_total", "counter",
          "Observation windows since pagewardend started (one every period while something is protected).",
          "observation.windows", NUMBER },
        { "pagewarden_observation_harmful_windows_total", "counter",
          "Observation windows in which a protected application lost memory, refaulted or stalled.",
          "observation.harmful", NUMBER },
        { "pagewarden_observation_cpu_seconds_total", "counter", "The CPU time observation took on the event loop.",
          "observation.cpu_us", USEC },
};

/* Unplaced work that streamed while protected applications lost memory, over the episodes kept. */
static const struct metric unplaced_metrics[] = {
        { "pagewarden_unplaced_charged_bytes", "gauge",
          "Page cache charged to unplaced work while protected applications lost memory, over the episodes kept "
          "(pagewardenctl suggest says what and how to place it).",
          "charged_bytes", NUMBER },
        { "pagewarden_unplaced_episodes", "gauge",
          "Episodes kept in which the unplaced work streamed while a protected application lost memory.", "episodes",
          NUMBER },
        { "pagewarden_unplaced_last_seen_seconds", "gauge",
          "The end of the last observation window in which it did, in seconds since the epoch.", "last", NUMBER },
};

static const struct metric class_metrics[] = {
        { "pagewarden_class_jobs", "gauge", "Jobs running in the job class.", "jobs", NUMBER },
        { "pagewarden_class_memory_current_bytes", "gauge",
          "The memory used in the class's cgroup (memory.current; a unit placed by rule has its own).",
          "in_force.memory_current", NUMBER },
        { "pagewarden_class_memory_high_bytes", "gauge",
          "The class's memory.high in force (the governor lowers it under pressure); +Inf: max.",
          "in_force.memory_high", LIMIT },
        { "pagewarden_class_memory_high_configured_bytes", "gauge", "The class's memory.high in the policy; +Inf: max.",
          "configured.memory_high", LIMIT },
        { "pagewarden_class_memory_max_bytes", "gauge", "The class's memory.max in force; +Inf: max.",
          "in_force.memory_max", LIMIT },
        { "pagewarden_class_memory_max_configured_bytes", "gauge", "The class's memory.max in the policy; +Inf: max.",
          "configured.memory_max", LIMIT },
        { "pagewarden_class_memory_swap_max_bytes", "gauge", "The class's memory.swap.max in force; +Inf: max.",
          "in_force.memory_swap_max", LIMIT },
        { "pagewarden_class_memory_swap_max_configured_bytes", "gauge",
          "The class's memory.swap.max in the policy; +Inf: max.", "configured.memory_swap_max", LIMIT },
        { "pagewarden_class_frozen", "gauge", "1 if the class is frozen (by the governor), else 0.", "in_force.frozen",
          BOOL },
        { "pagewarden_class_governor_tightenings_total", "counter",
          "Times the governor tightened the class's limits (memory.high, io.max) since pagewardend started.",
          "governor.tightened", NUMBER },
        { "pagewarden_class_governor_relaxations_total", "counter",
          "Times the governor raised the class's limits back toward the policy's since pagewardend started.",
          "governor.relaxed", NUMBER },
        { "pagewarden_class_governor_freezes_total", "counter",
          "Times the governor froze the class since pagewardend started.", "governor.frozen_times", NUMBER },
        { "pagewarden_class_governor_undone_total", "counter",
          "Tightenings of the class the governor gave back at once since pagewardend started, because the protected "
          "applications' stall and the rate at which they lost pages did not fall.",
          "governor.undone", NUMBER },
};

/* io.max: path is the list of devices, unit the ending of their keys (read_bps, write_iops, ...). */
static const struct {
        struct metric m;
        const char *unit;
} io_metrics[] = {
        { { "pagewarden_class_io_max_bytes_per_second", "gauge",
            "The class's io.max rbps or wbps on the device in force (the governor lowers them under pressure); "
            "+Inf: max.",
            "in_force.io", LIMIT },
          "bps" },
        { { "pagewarden_class_io_max_configured_bytes_per_second", "gauge",
            "The class's io.max rbps or wbps on the device in the policy; +Inf: max.", "configured.io", LIMIT },
          "bps" },
        { { "pagewarden_class_io_max_iops", "gauge",
            "The class's io.max riops or wiops on the device in force; +Inf: max.", "in_force.io", LIMIT },
          "iops" },
        { { "pagewarden_class_io_max_configured_iops", "gauge",
            "The class's io.max riops or wiops on the device in the policy; +Inf: max.", "configured.io", LIMIT },
          "iops" },
};

static const struct metric protected_metrics[] = {
        { "pagewarden_protected_in_force", "gauge",
          "1 if what the policy asks for the protected application is in force, 0 if not (status says why).", "error",
          NO_ERROR },
        { "pagewarden_protected_memory_current_bytes", "gauge", "The memory the application uses (memory.current).",
          "memory_current", NUMBER },
        { "pagewarden_protected_swap_current_bytes", "gauge", "The swap the application uses (memory.swap.current).",
          "swap_current", NUMBER },
        { "pagewarden_protected_memory_min_bytes", "gauge", "The application's memory.min in force.",
          "memory_min.in_force", NUMBER },
        { "pagewarden_protected_memory_min_configured_bytes", "gauge",
          "The application's memory.min in the policy (none for auto: its usage while jobs run).",
          "memory_min.configured", NUMBER },
        { "pagewarden_protected_memory_min_effective_bytes", "gauge",
          "The smallest memory.min on the application's path to the root: at most, what the kernel gives it.",
          "memory_min.effective", NUMBER },
        { "pagewarden_protected_memory_low_bytes", "gauge", "The application's memory.low in force.",
          "memory_low.in_force", NUMBER },
        { "pagewarden_protected_memory_low_configured_bytes", "gauge",
          "The application's memory.low in the policy (none for auto: its usage while jobs run).",
          "memory_low.configured", NUMBER },
        { "pagewarden_protected_memory_low_effective_bytes", "gauge",
          "The smallest memory.low on the application's path to the root: at most, what the kernel gives it.",
          "memory_low.effective", NUMBER },
        { "pagewarden_protected_pressure_memory_waiting_seconds_total", "counter",
          "Time some of the application's tasks stalled on memory (memory.pressure some total).", "psi.some_total_us",
          USEC },
        { "pagewarden_protected_pressure_memory_stalled_seconds_total", "counter",
          "Time all of the application's tasks stalled on memory at once (memory.pressure full total).",
          "psi.full_total_us", USEC },
        { "pagewarden_protected_refaults_total", "counter",
          "Evicted pages the application needed again (memory.stat workingset_refault_anon and _file).", "refaults",
          NUMBER },
        { "pagewarden_protected_major_faults_total", "counter",
          "Major page faults of the application (memory.stat pgmajfault).", "majfaults", NUMBER },
};

static void write_info(struct writer *w, json_object *resp) {
        static const struct metric m = { "pagewarden_info", "gauge",
                                         "The daemon's version, backend and cgroup root; the value is 1." };
        const struct label l[] = {
                { "version", str_field(resp, "version") },
                { "backend", str_field(resp, "backend") },
                { "cgroup_root", str_field(resp, "cgroup_root") },
        };

        emit(w, &m, "", l, ELEMENTSOF(l), "1");
}

/* What the policy asks for that is not in force, as status counts it (and exits 4 for). */
static void write_problems(struct writer *w, json_object *resp) {
        static const struct metric m = {
                "pagewarden_policy_not_in_force", "gauge",
                "What the policy asks for that is not in force (protected applications not protected, classes whose "
                "io limits wait for their device); pagewardenctl status exits 4 when it is not 0."
        };
        char v[VALUE_MAX];

        snprintf(v, sizeof(v), "%zu", ctl_status_problems(NULL, resp));
        emit(w, &m, "", NULL, 0, v);
}

/* The io.max limits of one class, of io_metrics[t], per device and direction. */
static void write_class_io(struct writer *w, size_t t, const char *class, json_object *io) {
        static const char *const directions[] = { "read", "write" };

        for (size_t d = 0; d < array_length(io); d++) {
                const char *device = unique_key(io, d, "device");

                for (size_t k = 0; device && k < ELEMENTSOF(directions); k++) {
                        const struct label l[] = { { "class", class },
                                                   { "device", device },
                                                   { "direction", directions[k] } };
                        char key[16], v[VALUE_MAX];

                        snprintf(key, sizeof(key), "%s_%s", directions[k], io_metrics[t].unit);
                        if (format_value(field(json_object_array_get_idx(io, d), key), LIMIT, v))
                                emit(w, &io_metrics[t].m, "", l, ELEMENTSOF(l), v);
                }
        }
}

static void write_io(struct writer *w, json_object *classes) {
        for (size_t t = 0; t < ELEMENTSOF(io_metrics); t++)
                for (size_t i = 0; i < array_length(classes); i++) {
                        const char *class = unique_key(classes, i, "name");

                        if (class)
                                write_class_io(w, t, class,
                                               lookup(json_object_array_get_idx(classes, i), io_metrics[t].m.path));
                }
}

static void write_protected_info(struct writer *w, json_object *prots) {
        static const struct metric m = { "pagewarden_protected_info", "gauge",
                                         "A protected application's unit or cgroup; the value is 1." };

        for (size_t i = 0; i < array_length(prots); i++) {
                json_object *p = json_object_array_get_idx(prots, i);
                const struct label l[] = {
                        { "name", unique_key(prots, i, "name") },
                        { "unit", str_field(p, "unit") },
                        { "cgroup", str_field(p, "cgroup") },
                };

                if (l[0].value)
                        emit(w, &m, "", l, ELEMENTSOF(l), "1");
        }
}

/* The buckets if they are whole and consistent: bounds rising, counts cumulative, none above count. */
static bool buckets_valid(json_object *buckets, uint64_t count) {
        uint64_t le, n, prev_le = 0, prev_n = 0;

        for (size_t i = 0; i < array_length(buckets); i++) {
                json_object *b = json_object_array_get_idx(buckets, i);

                if (!uint_value(field(b, "le_us"), &le) || !uint_value(field(b, "count"), &n) ||
                    (i > 0 && le <= prev_le) || n < prev_n || n > count)
                        return false;
                prev_le = le;
                prev_n = n;
        }
        return array_length(buckets) > 0;
}

/* The reaction latency as a histogram, from a daemon that keeps its buckets (not only its last samples). */
static void write_latency(struct writer *w, json_object *lat) {
        static const struct metric m = {
                "pagewarden_governor_reaction_latency_seconds", "histogram",
                "The governor's reaction latency: from a PSI trigger's wake-up to the write of the first limit."
        };
        json_object *buckets = field(lat, "buckets");
        uint64_t count, sum, le = 0, n = 0;
        char a[VALUE_MAX], b[VALUE_MAX];

        if (!uint_value(field(lat, "count"), &count) || !uint_value(field(lat, "sum_us"), &sum) ||
            !buckets_valid(buckets, count))
                return;
        for (size_t i = 0; i < array_length(buckets); i++) {
                json_object *bk = json_object_array_get_idx(buckets, i);

                (void) uint_value(field(bk, "le_us"), &le);
                (void) uint_value(field(bk, "count"), &n);
                format_usec(le, a);
                snprintf(b, sizeof(b), "%" PRIu64, n);
                emit(w, &m, "_bucket", &(const struct label){ "le", a }, 1, b);
        }
        snprintf(b, sizeof(b), "%" PRIu64, count);
        emit(w, &m, "_bucket", &(const struct label){ "le", "+Inf" }, 1, b);
        format_usec(sum, a);
        emit(w, &m, "_sum", NULL, 0, a);
        emit(w, &m, "_count", NULL, 0, b);
}

int ctl_metrics_print(FILE *f, json_object *resp) {
        struct writer w = { .f = f };

        emit(&w, &up, "", NULL, 0, resp ? "1" : "0");
        if (resp) {
                write_info(&w, resp);
                write_problems(&w, resp);
                write_table(&w, resp, NULL, daemon_metrics, ELEMENTSOF(daemon_metrics));
                write_latency(&w, lookup(resp, "governor.reaction_latency"));
                write_table(&w, field(resp, "classes"), "class", class_metrics, ELEMENTSOF(class_metrics));
                write_io(&w, field(resp, "classes"));
                write_protected_info(&w, field(resp, "protected"));
                write_table(&w, field(resp, "protected"), "name", protected_metrics, ELEMENTSOF(protected_metrics));
                write_table(&w, field(resp, "unplaced"), "suspect", unplaced_metrics, ELEMENTSOF(unplaced_metrics));
        }
        return ferror(f) ? -EIO : 0;
}

/* ---- the file node_exporter reads ---- */

/* The directory path, every component opened without following a symbolic link: the textfile directory's
 * parent may belong to node_exporter's account, which must not send root's write elsewhere.  -ELOOP for a
 * link. */
static int open_dir_nofollow(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -1;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (next < 0)
                        return errno == ENOTDIR ? -ELOOP : -errno; /* O_NOFOLLOW on a link to a directory */
                close(fd);
                fd = next;
        }
        return TAKE_FD(fd);
}

int ctl_metrics_write_file(const char *path, const char *text) {
        _cleanup_free_ char *dir = strdup(path), *tmp = NULL;
        _cleanup_close_ int dfd = -1, fd = -1;
        const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t len = strlen(text);
        int r = 0;

        if (!dir)
                return -ENOMEM;
        if (!name[0])
                return -EISDIR;
        dir[name - path] = '\0';
        dfd = open_dir_nofollow(dir[0] ? dir : ".");
        if (dfd < 0)
                return dfd;
        /* NAME.XXXXXX beside it: the textfile collector reads *.prom only, never a file being written. */
        for (unsigned tries = 0; fd < 0 && tries < 100; tries++) {
                uint32_t rnd = tries;

                (void) getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK);
                free(tmp);
                if (asprintf(&tmp, "%s.%06x", name, (unsigned) (rnd & 0xffffff)) < 0) {
                        tmp = NULL; /* undefined after a failure */
                        return -ENOMEM;
                }
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0 && errno != EEXIST)
                        return -errno;
        }
        if (fd < 0)
                return -EEXIST;
        /* Made 0600 under any umask first: node_exporter runs as another user. */
        if (fchmod(fd, 0644) < 0)
                r = -errno;
        if (r == 0)
                r = fd_write_all(fd, text, len);
        /* No fsync: readers need only the rename's atomicity, and the file is made again every 15 s. */
        if (close(TAKE_FD(fd)) < 0 && r == 0)
                r = -errno;
        /* A link named like the file is replaced, never followed. */
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, tmp, 0);
        return r;
}
