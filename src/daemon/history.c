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

static int save(struct history *h) {
        json_object *file;
        const char *text;
        int r;

        if (!h->path)
                return 0;
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
                trim(h);
                return;
        }
        json_object_put(file);
        if (asprintf(&bad, "%s.bad", h->path) >= 0 && rename(h->path, bad) == 0)
                log_warning("Job history: %s is damaged: set aside as %s, starting a new one", h->path, bad);
        else
                log_warning("Job history: %s is damaged: starting a new one", h->path);
}

int history_init(struct history *h, const char *path, size_t max_jobs, uint64_t max_age_sec) {
        *h = (struct history){ .max_jobs = max_jobs, .max_age_sec = max_age_sec };
        h->jobs = json_object_new_array();
        if (!h->jobs || (path && !(h->path = strdup(path)))) {
                history_done(h);
                return -ENOMEM;
        }
        if (h->path)
                load(h);
        return 0;
}

void history_done(struct history *h) {
        json_object_put(h->jobs);
        free(h->path);
        *h = (struct history){};
}

void history_set_bounds(struct history *h, size_t max_jobs, uint64_t max_age_sec) {
        size_t n = json_object_array_length(h->jobs);

        h->max_jobs = max_jobs;
        h->max_age_sec = max_age_sec;
        trim(h);
        if (json_object_array_length(h->jobs) != n)
                (void) save(h);
}

int history_add(struct history *h, json_object *report) {
        if (!report)
                return -ENOMEM;
        if (h->max_jobs == 0) {
                json_object_put(report);
                return 0;
        }
        if (json_object_array_add(h->jobs, report) < 0) {
                json_object_put(report);
                return -ENOMEM;
        }
        trim(h);
        return save(h);
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
