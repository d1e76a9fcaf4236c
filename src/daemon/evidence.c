/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-values.h"
#include "evidence.h"
#include "util.h"

static uint64_t keyed(const char *text, const char *key) {
        uint64_t v = 0;

        return text && cgv_parse_keyed(text, key, &v) >= 0 ? v : 0;
}

/* A counter's growth; one that went down belongs to a cgroup made again, counted from 0. */
static uint64_t grown(uint64_t end, uint64_t start) {
        return end >= start ? end - start : end;
}

void evidence_counters_parse(const char *memory_stat, const char *io_stat, struct evidence_counters *ret) {
        *ret = (struct evidence_counters){ .have_memory = memory_stat != NULL };
        if (memory_stat) {
                ret->file = keyed(memory_stat, "file");
                ret->pgsteal = keyed(memory_stat, "pgsteal");
                ret->refault_file = keyed(memory_stat, "workingset_refault_file");
        }
        ret->have_io = io_stat && cgv_parse_io_stat(io_stat, &ret->read, &ret->written) >= 0;
}

bool evidence_window(const struct evidence_counters *prev, const struct evidence_counters *cur, uint64_t page_size,
                     struct evidence_delta *ret) {
        *ret = (struct evidence_delta){};
        if (prev->have_memory && cur->have_memory) {
                /* What entered its cache: what the cache grew by, plus what reclaim took from it meanwhile
                 * (pgsteal counts anonymous pages too: swapped out, they had been charged as well).  A cache
                 * that only shrank took nothing in: the pages reclaimed were old ones. */
                uint64_t in = cur->file + grown(cur->pgsteal, prev->pgsteal) * page_size;

                ret->charged = in > prev->file ? in - prev->file : 0;
                ret->refaulted = grown(cur->refault_file, prev->refault_file) * page_size;
        }
        if (prev->have_io && cur->have_io) {
                ret->read = grown(cur->read, prev->read);
                ret->written = grown(cur->written, prev->written);
        }
        return evidence_weight(ret) >= EVIDENCE_STREAM_MIN;
}

uint64_t evidence_weight(const struct evidence_delta *d) {
        uint64_t io = d->read + d->written;

        return d->charged > io ? d->charged : io;
}

bool evidence_harmed(const struct governor_sample *prev, const struct governor_sample *cur, uint64_t page_size,
                     struct evidence_harm *ret) {
        ret->lost = grown(cur->pgsteal, prev->pgsteal) * page_size;
        ret->refaults = grown(cur->refaults, prev->refaults);
        ret->stall_usec = grown(cur->some_total, prev->some_total);
        return ret->lost >= EVIDENCE_LOST_MIN || ret->refaults >= EVIDENCE_REFAULTS_MIN ||
               ret->stall_usec >= EVIDENCE_STALL_MIN_USEC;
}

static int by_weight(const void *a, const void *b) {
        uint64_t wa = evidence_weight(&((const struct evidence_suspect *) a)->d);
        uint64_t wb = evidence_weight(&((const struct evidence_suspect *) b)->d);

        if (wa != wb)
                return wa > wb ? -1 : 1;
        return strcmp(((const struct evidence_suspect *) a)->cgroup, ((const struct evidence_suspect *) b)->cgroup);
}

size_t evidence_rank(struct evidence_suspect *s, size_t n) {
        qsort(s, n, sizeof(*s), by_weight);
        return n < EVIDENCE_WINDOW_SUSPECTS ? n : EVIDENCE_WINDOW_SUSPECTS;
}

void evidence_add_program(struct evidence_suspect *s, const struct evidence_program *p) {
        size_t smallest = 0;

        for (size_t i = 0; i < s->n_programs; i++) {
                struct evidence_program *q = &s->programs[i];

                if (streq(q->exe, p->exe) && streq(q->cmdline, p->cmdline) && q->uid == p->uid) {
                        if (p->bytes > q->bytes)
                                q->bytes = p->bytes;
                        return;
                }
                if (q->bytes < s->programs[smallest].bytes)
                        smallest = i;
        }
        if (s->n_programs < EVIDENCE_PROGRAMS)
                s->programs[s->n_programs++] = *p;
        else if (p->bytes > s->programs[smallest].bytes)
                s->programs[smallest] = *p;
}

/* ---- episodes (JSON) ---- */

static int64_t get_int(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
                                                                                              : 0;
}

/* Adds n to an integer field (made if missing; a null, from a window without the counter, stays null unless
 * this one has it). */
static void add_int(json_object *o, const char *key, uint64_t n, bool have) {
        json_object *v;

        if (!have) {
                if (!json_object_object_get_ex(o, key, NULL))
                        json_object_object_add(o, key, NULL);
                return;
        }
        if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int))
                n += (uint64_t) json_object_get_int64(v);
        json_object_object_add(o, key, json_object_new_int64((int64_t) (n > INT64_MAX ? INT64_MAX : n)));
}

static const char *get_string(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

/* The element of array whose key is value, or NULL. */
static json_object *find_by(json_object *array, const char *key, const char *value) {
        for (size_t i = 0; i < json_object_array_length(array); i++) {
                json_object *o = json_object_array_get_idx(array, i);

                if (streq_ptr(get_string(o, key), value))
                        return o;
        }
        return NULL;
}

static json_object *array_of(json_object *o, const char *key) {
        json_object *a;

        if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
                a = json_object_new_array();
                json_object_object_add(o, key, a);
        }
        return a;
}

static void add_apps(json_object *episode, const struct evidence_harm *apps, size_t n) {
        json_object *list = array_of(episode, "applications");

        for (size_t i = 0; i < n; i++) {
                json_object *a = find_by(list, "name", apps[i].name);

                if (!a) {
                        a = json_object_new_object();
                        json_object_object_add(a, "name", json_object_new_string(apps[i].name));
                        json_object_array_add(list, a);
                }
                add_int(a, "lost_bytes", apps[i].lost, true);
                add_int(a, "refaults", apps[i].refaults, true);
                add_int(a, "stall_us", apps[i].stall_usec, true);
        }
}

static int by_bytes(const void *a, const void *b) {
        uint64_t x = ((const struct evidence_program *) a)->bytes, y = ((const struct evidence_program *) b)->bytes;

        return x == y ? 0 : x > y ? -1 : 1;
}

static void add_programs(json_object *suspect, const struct evidence_suspect *s) {
        json_object *list = array_of(suspect, "programs");
        struct evidence_suspect merged = { .n_programs = 0 };

        /* Merge what the episode has with this window's, then keep the largest. */
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *o = json_object_array_get_idx(list, i);
                struct evidence_program p = { .uid = get_int(o, "uid"), .bytes = (uint64_t) get_int(o, "bytes") };

                snprintf(p.exe, sizeof(p.exe), "%s", strempty(get_string(o, "exe")));
                snprintf(p.cmdline, sizeof(p.cmdline), "%s", strempty(get_string(o, "cmdline")));
                evidence_add_program(&merged, &p);
        }
        for (size_t i = 0; i < s->n_programs; i++)
                evidence_add_program(&merged, &s->programs[i]);
        qsort(merged.programs, merged.n_programs, sizeof(merged.programs[0]), by_bytes); /* the largest first */
        list = json_object_new_array();
        for (size_t i = 0; i < merged.n_programs; i++) {
                const struct evidence_program *p = &merged.programs[i];
                json_object *o = json_object_new_object();

                json_object_object_add(o, "exe", json_object_new_string(p->exe));
                json_object_object_add(o, "cmdline", json_object_new_string(p->cmdline));
                json_object_object_add(o, "uid", json_object_new_int64(p->uid));
                json_object_object_add(o, "bytes", json_object_new_int64((int64_t) p->bytes));
                json_object_array_add(list, o);
        }
        json_object_object_add(suspect, "programs", list);
}

static uint64_t stored_weight(json_object *s) {
        uint64_t io = (uint64_t) get_int(s, "read_bytes") + (uint64_t) get_int(s, "written_bytes");
        uint64_t charged = (uint64_t) get_int(s, "charged_bytes");

        return charged > io ? charged : io;
}

static int by_stored_weight(const void *a, const void *b) {
        uint64_t wa = stored_weight(*(json_object *const *) a), wb = stored_weight(*(json_object *const *) b);

        return wa == wb ? 0 : wa > wb ? -1 : 1;
}

static void add_suspect(json_object *list, const struct evidence_suspect *s, uint64_t start, uint64_t end) {
        json_object *o = find_by(list, "cgroup", s->cgroup);
        uint64_t first = s->first ?: start;

        if (!o) {
                o = json_object_new_object();
                json_object_object_add(o, "cgroup", json_object_new_string(s->cgroup));
                json_object_object_add(o, "unit", s->unit[0] ? json_object_new_string(s->unit) : NULL);
                json_object_object_add(o, "uid", s->uid >= 0 ? json_object_new_int64(s->uid) : NULL);
                json_object_array_add(list, o);
        }
        if (!json_object_object_get_ex(o, "first", NULL) || (int64_t) first < get_int(o, "first"))
                json_object_object_add(o, "first", json_object_new_int64((int64_t) first));
        add_int(o, "charged_bytes", s->d.charged, true);
        add_int(o, "refaulted_bytes", s->d.refaulted, true);
        add_int(o, "read_bytes", s->d.read, s->have_io);
        add_int(o, "written_bytes", s->d.written, s->have_io);
        json_object_object_add(o, "last", json_object_new_int64((int64_t) end));
        add_int(o, "windows", 1, true);
        add_programs(o, s);
}

int evidence_episode_add(json_object **episode, uint64_t id, uint64_t start, uint64_t end,
                         const struct evidence_harm *apps, size_t n_apps, const struct evidence_suspect *s, size_t n) {
        json_object *e = *episode, *list;

        if (!e) {
                e = json_object_new_object();
                if (!e)
                        return -ENOMEM;
                json_object_object_add(e, "id", json_object_new_int64((int64_t) id));
                json_object_object_add(e, "uid", json_object_new_int64(0));
                json_object_object_add(e, "started", json_object_new_int64((int64_t) start));
                *episode = e;
        }
        json_object_object_add(e, "ended", json_object_new_int64((int64_t) end));
        add_int(e, "windows", 1, true);
        add_apps(e, apps, n_apps);
        list = array_of(e, "suspects");
        for (size_t i = 0; i < n; i++)
                add_suspect(list, &s[i], start, end);
        json_object_array_sort(list, by_stored_weight);
        while (json_object_array_length(list) > EVIDENCE_EPISODE_SUSPECTS)
                json_object_array_del_idx(list, EVIDENCE_EPISODE_SUSPECTS, 1);
        return 0;
}

/* ---- which cgroups are looked at ---- */

enum evidence_kind evidence_classify(const char *path, bool has_children, char *unit, size_t len) {
        const char *name = strrchr(path, '/');

        name = name ? name + 1 : path;
        unit[0] = '\0';
        if (streq(name, "init.scope"))
                return EVIDENCE_SKIP;
        if (endswith(name, ".slice") || (startswith(name, "user@") && endswith(name, ".service")))
                return EVIDENCE_DESCEND;
        if (endswith(name, ".service") || endswith(name, ".scope") || endswith(name, ".socket") ||
            endswith(name, ".mount") || endswith(name, ".swap")) {
                /* A rule names system services; a user's units, scopes (a login session's, a container's)
                 * and systemd-run's run-u123.service are named by their programs. */
                if (endswith(name, ".service") && !startswith(name, "run-") && !strstr(path, "/user@"))
                        snprintf(unit, len, "%s", name);
                return EVIDENCE_CANDIDATE;
        }
        return has_children ? EVIDENCE_DESCEND : EVIDENCE_CANDIDATE;
}

int64_t evidence_path_uid(const char *path) {
        const char *p = strstr(path, "/user-");
        char *end;
        unsigned long uid;

        if (!p)
                return -1;
        errno = 0;
        uid = strtoul(p + strlen("/user-"), &end, 10);
        if (errno || end == p + strlen("/user-") || !startswith(end, ".slice") || uid > INT32_MAX)
                return -1;
        return (int64_t) uid;
}

/* ---- over episodes ---- */

/* What names a suspect across episodes. */
static void suspect_key(json_object *s, char *buf, size_t len) {
        const char *unit = get_string(s, "unit");
        json_object *programs, *first;

        if (unit) {
                snprintf(buf, len, "%s", unit);
                return;
        }
        if (json_object_object_get_ex(s, "programs", &programs) && json_object_array_length(programs) > 0) {
                first = json_object_array_get_idx(programs, 0);
                snprintf(buf, len, "%s", strempty(get_string(first, "exe")));
                return;
        }
        snprintf(buf, len, "%s", strempty(get_string(s, "cgroup")));
}

static void copy_key(json_object *to, json_object *from, const char *key) {
        json_object *v = NULL;

        (void) json_object_object_get_ex(from, key, &v);
        json_object_object_add(to, key, json_object_get(v));
}

static void merge_apps(json_object *to, json_object *episode) {
        json_object *apps;

        if (!json_object_object_get_ex(episode, "applications", &apps))
                return;
        for (size_t i = 0; i < json_object_array_length(apps); i++) {
                json_object *a = json_object_array_get_idx(apps, i);
                struct evidence_harm h = { .lost = (uint64_t) get_int(a, "lost_bytes"),
                                           .refaults = (uint64_t) get_int(a, "refaults"),
                                           .stall_usec = (uint64_t) get_int(a, "stall_us") };

                snprintf(h.name, sizeof(h.name), "%s", strempty(get_string(a, "name")));
                add_apps(to, &h, 1);
        }
}

static void merge_suspect(json_object *list, json_object *s, json_object *episode) {
        char key[512];
        json_object *o, *v;
        struct evidence_suspect progs = { .n_programs = 0 };

        suspect_key(s, key, sizeof(key));
        o = find_by(list, "name", key);
        if (!o) {
                o = json_object_new_object();
                json_object_object_add(o, "name", json_object_new_string(key));
                copy_key(o, s, "unit");
                copy_key(o, s, "uid");
                copy_key(o, s, "first");
                json_object_object_add(o, "episodes", json_object_new_int64(0));
                json_object_array_add(list, o);
        }
        copy_key(o, s, "cgroup");
        copy_key(o, s, "last");
        add_int(o, "charged_bytes", (uint64_t) get_int(s, "charged_bytes"), true);
        add_int(o, "refaulted_bytes", (uint64_t) get_int(s, "refaulted_bytes"), true);
        v = NULL;
        add_int(o, "read_bytes", (uint64_t) get_int(s, "read_bytes"),
                json_object_object_get_ex(s, "read_bytes", &v) && v);
        v = NULL;
        add_int(o, "written_bytes", (uint64_t) get_int(s, "written_bytes"),
                json_object_object_get_ex(s, "written_bytes", &v) && v);
        add_int(o, "windows", (uint64_t) get_int(s, "windows"), true);
        add_int(o, "episodes", 1, true);
        /* The programs: merged as within an episode. */
        if (json_object_object_get_ex(s, "programs", &v))
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *p = json_object_array_get_idx(v, i);
                        struct evidence_program q = { .uid = get_int(p, "uid"),
                                                      .bytes = (uint64_t) get_int(p, "bytes") };

                        snprintf(q.exe, sizeof(q.exe), "%s", strempty(get_string(p, "exe")));
                        snprintf(q.cmdline, sizeof(q.cmdline), "%s", strempty(get_string(p, "cmdline")));
                        evidence_add_program(&progs, &q);
                }
        add_programs(o, &progs);
        merge_apps(o, episode);
}

json_object *evidence_summary(json_object *episodes, size_t max) {
        json_object *list = json_object_new_array();

        if (!list)
                return NULL;
        for (size_t i = 0; i < json_object_array_length(episodes); i++) {
                json_object *e = json_object_array_get_idx(episodes, i), *suspects;

                if (!json_object_object_get_ex(e, "suspects", &suspects))
                        continue;
                for (size_t k = 0; k < json_object_array_length(suspects); k++)
                        merge_suspect(list, json_object_array_get_idx(suspects, k), e);
        }
        json_object_array_sort(list, by_stored_weight);
        while (json_object_array_length(list) > max)
                json_object_array_del_idx(list, max, 1);
        return list;
}
