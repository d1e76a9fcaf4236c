/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "log.h"
#include "util.h"

/* A file of 1,000 reports is about 600 KB; this refuses what no bounded history is. */
#define HISTORY_FILE_MAX (8 * 1024 * 1024)

static int64_t int_field(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
                                                                                              : -1;
}

/* Drops the oldest reports beyond max_jobs, and those that ended more than max_age_sec ago. */
static void trim(struct history *h) {
        int64_t oldest = (int64_t) time(NULL) - (int64_t) h->max_age_sec;
        size_t n = json_object_array_length(h->jobs), drop = 0;

        while (drop < n &&
               (n - drop > h->max_jobs || int_field(json_object_array_get_idx(h->jobs, drop), "ended") < oldest))
                drop++;
        if (drop > 0)
                json_object_array_del_idx(h->jobs, 0, drop);
}

/* What one uid other than 0 may hold: a quarter of the whole, so that a flood of one user's jobs leaves the
 * others' reports alone. */
static size_t user_max(size_t max_jobs) {
        return max_jobs / 4 > 0 ? max_jobs / 4 : 1;
}

/* A report of uid was added: its oldest reports beyond its quota go (uid 0: none). */
static void trim_user(struct history *h, int64_t uid) {
        size_t held = 0, quota = user_max(h->max_jobs);

        if (uid == 0)
                return;
        for (size_t i = 0; i < json_object_array_length(h->jobs); i++)
                held += int_field(json_object_array_get_idx(h->jobs, i), "uid") == uid;
        for (size_t i = 0; held > quota && i < json_object_array_length(h->jobs);)
                if (int_field(json_object_array_get_idx(h->jobs, i), "uid") == uid) {
                        json_object_array_del_idx(h->jobs, i, 1);
                        held--;
                } else
                        i++;
}

struct owner {
        int64_t uid;
        size_t idx;
};

/* By uid, then newest first. */
static int owner_cmp(const void *a, const void *b) {
        const struct owner *x = a, *y = b;

        if (x->uid != y->uid)
                return x->uid < y->uid ? -1 : 1;
        return x->idx < y->idx ? 1 : x->idx > y->idx ? -1 : 0;
}

/* Every uid's quota at once (a file read, a reload): each uid other than 0 keeps its newest reports. */
static void trim_users(struct history *h) {
        size_t n = json_object_array_length(h->jobs), quota = user_max(h->max_jobs), run = 0;
        _cleanup_free_ struct owner *owners = NULL;
        _cleanup_free_ bool *drop = NULL;

        if (n == 0)
                return;
        owners = calloc(n, sizeof(*owners));
        drop = calloc(n, sizeof(*drop));
        if (!owners || !drop)
                return; /* history_jobs still bounds them all */
        for (size_t i = 0; i < n; i++)
                owners[i] = (struct owner){ int_field(json_object_array_get_idx(h->jobs, i), "uid"), i };
        qsort(owners, n, sizeof(*owners), owner_cmp);
        for (size_t i = 0; i < n; i++) {
                run = i > 0 && owners[i].uid == owners[i - 1].uid ? run + 1 : 1;
                if (owners[i].uid != 0 && run > quota)
                        drop[owners[i].idx] = true;
        }
        for (size_t i = n; i-- > 0;)
                if (drop[i])
                        json_object_array_del_idx(h->jobs, i, 1);
}

static int save(struct history *h) {
        json_object *file;
        const char *text;
        int r;

        if (!h->path)
                return 0;
        h->n_saves++;
        file = json_object_new_object();
        if (!file)
                return -ENOMEM;
        json_object_object_add(file, "version", json_object_new_int(1));
        json_object_object_add(file, "jobs", json_object_get(h->jobs));
        text = json_object_to_json_string_ext(file, JSON_C_TO_STRING_PLAIN);
        r = text ? write_file_atomic(h->path, text) : -ENOMEM;
        json_object_put(file);
        if (r < 0 && !h->save_warned) {
                h->save_warned = true;
                log_warning_errno(r, "Job history: cannot write %s (%m): ended jobs are kept in memory only", h->path);
        }
        return r;
}

/* Writes a pending change now. */
static int flush(struct history *h) {
        if (!h->dirty)
                return 0;
        h->dirty = false;
        if (h->save_timer)
                (void) sd_event_source_set_enabled(h->save_timer, SD_EVENT_OFF);
        return save(h);
}

static int on_save_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) flush(userdata);
        return 0;
}

static int arm_save(struct history *h) {
        int r;

        if (h->save_timer) {
                r = sd_event_source_set_time_relative(h->save_timer, HISTORY_SAVE_DELAY_USEC);
                return r < 0 ? r : sd_event_source_set_enabled(h->save_timer, SD_EVENT_ONESHOT);
        }
        r = sd_event_add_time_relative(h->event, &h->save_timer, CLOCK_MONOTONIC, HISTORY_SAVE_DELAY_USEC, 0,
                                       on_save_timer, h);
        if (r >= 0)
                (void) sd_event_source_set_description(h->save_timer, "history-save");
        return r;
}

/* A change: written by the timer that the first change since the last write arms (without a loop, or if the
 * timer cannot be armed, at once). */
static int save_soon(struct history *h) {
        if (!h->path || h->dirty)
                return 0;
        h->dirty = true;
        if (h->event && arm_save(h) >= 0)
                return 0;
        return flush(h);
}

static void load(struct history *h) {
        _cleanup_free_ char *text = NULL, *bad = NULL;
        json_object *file, *jobs;
        int r = read_full_file(h->path, HISTORY_FILE_MAX, &text, NULL);

        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_warning_errno(r, "Job history: cannot read %s (%m): starting a new one", h->path);
                return;
        }
        file = json_tokener_parse(text);
        if (file && json_object_object_get_ex(file, "jobs", &jobs) && json_object_is_type(jobs, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                        json_object *o = json_object_array_get_idx(jobs, i);

                        if (json_object_is_type(o, json_type_object) && int_field(o, "id") > 0 &&
                            int_field(o, "ended") >= 0)
                                json_object_array_add(h->jobs, json_object_get(o));
                }
                json_object_put(file);
                trim_users(h);
                trim(h);
                return;
        }
        json_object_put(file);
        if (asprintf(&bad, "%s.bad", h->path) >= 0 && rename(h->path, bad) == 0)
                log_warning("Job history: %s is damaged: set aside as %s, starting a new one", h->path, bad);
        else
                log_warning("Job history: %s is damaged: starting a new one", h->path);
}

int history_init(struct history *h, sd_event *event, const char *path, size_t max_jobs, uint64_t max_age_sec) {
        *h = (struct history){ .max_jobs = max_jobs, .max_age_sec = max_age_sec };
        h->jobs = json_object_new_array();
        if (!h->jobs || (path && !(h->path = strdup(path)))) {
                history_done(h);
                return -ENOMEM;
        }
        h->event = event ? sd_event_ref(event) : NULL;
        if (h->path)
                load(h);
        return 0;
}

void history_done(struct history *h) {
        (void) flush(h);
        sd_event_source_disable_unref(h->save_timer);
        sd_event_unref(h->event);
        json_object_put(h->jobs);
        free(h->path);
        *h = (struct history){};
}

void history_set_bounds(struct history *h, size_t max_jobs, uint64_t max_age_sec) {
        size_t n = json_object_array_length(h->jobs);

        h->max_jobs = max_jobs;
        h->max_age_sec = max_age_sec;
        trim_users(h);
        trim(h);
        if (json_object_array_length(h->jobs) != n)
                (void) save_soon(h);
}

int history_add(struct history *h, json_object *report) {
        int64_t uid;

        if (!report)
                return -ENOMEM;
        if (h->max_jobs == 0) {
                json_object_put(report);
                return 0;
        }
        uid = int_field(report, "uid");
        if (json_object_array_add(h->jobs, report) < 0) {
                json_object_put(report);
                return -ENOMEM;
        }
        trim_user(h, uid);
        trim(h);
        return save_soon(h);
}

json_object *history_find(const struct history *h, const char *id_or_name, uid_t uid) {
        json_object *any = NULL;
        char *end;
        unsigned long long id = strtoull(id_or_name, &end, 10);
        bool by_id = *id_or_name && *end == '\0';

        /* Newest first: a name reused night after night means the last run. */
        for (size_t i = json_object_array_length(h->jobs); i-- > 0;) {
                json_object *o = json_object_array_get_idx(h->jobs, i), *name;

                if (by_id) {
                        if (int_field(o, "id") == (int64_t) id)
                                return o;
                        continue;
                }
                if (!json_object_object_get_ex(o, "name", &name) || !json_object_is_type(name, json_type_string) ||
                    !streq(json_object_get_string(name), id_or_name))
                        continue;
                if (int_field(o, "uid") == (int64_t) uid)
                        return o;
                if (!any)
                        any = o;
        }
        return any;
}
