/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/printbuf.h>

#include "history.h"
#include "log.h"
#include "util.h"

/* A report is 0.5-3 KB; history_jobs is at most 10,000, and the file holds up to twice that before it is
 * compacted: this refuses only what no bounded history is. */
#define HISTORY_FILE_MAX (64 * 1024 * 1024)
/* The first line of the file: what follows is one report a line. */
#define HISTORY_HEADER "{\"pagewarden_history\":2}"
/* Below this many lines the file is not compacted (a short history rewritten whole costs nothing). */
#define HISTORY_COMPACT_MIN 64

static int64_t int_field(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int64(v)
                                                                                              : -1;
}

/* Deletes count reports from index i; the newest n_new are the ones not in the file yet. */
static void drop(struct history *h, size_t i, size_t count) {
        size_t n = json_object_array_length(h->jobs), written = n - h->n_new;

        if (i + count > written)
                h->n_new -= i + count - (i > written ? i : written);
        json_object_array_del_idx(h->jobs, i, count);
}

/* Drops the oldest reports beyond max_jobs, and those that ended more than max_age_sec ago. */
static void trim(struct history *h) {
        int64_t oldest = (int64_t) time(NULL) - (int64_t) h->max_age_sec;
        size_t n = json_object_array_length(h->jobs), k = 0;

        while (k < n && (n - k > h->max_jobs || int_field(json_object_array_get_idx(h->jobs, k), "ended") < oldest))
                k++;
        if (k > 0)
                drop(h, 0, k);
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
                        drop(h, i, 1);
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
        _cleanup_free_ bool *dropped = NULL;

        if (n == 0)
                return;
        owners = calloc(n, sizeof(*owners));
        dropped = calloc(n, sizeof(*dropped));
        if (!owners || !dropped)
                return; /* history_jobs still bounds them all */
        for (size_t i = 0; i < n; i++)
                owners[i] = (struct owner){ int_field(json_object_array_get_idx(h->jobs, i), "uid"), i };
        qsort(owners, n, sizeof(*owners), owner_cmp);
        for (size_t i = 0; i < n; i++) {
                run = i > 0 && owners[i].uid == owners[i - 1].uid ? run + 1 : 1;
                if (owners[i].uid != 0 && run > quota)
                        dropped[owners[i].idx] = true;
        }
        for (size_t i = n; i-- > 0;)
                if (dropped[i])
                        drop(h, i, 1);
}

/*
 * A report's text, made when it is added and kept until the next write of
 * the file: 2,000 jobs ending together had their reports serialized in the
 * one dispatch that wrote them (150-170 ms under emulation), and now each at
 * its own end.  Kept as the report's serializer (json-c's, for a text it
 * has), so that whatever serializes the report meanwhile takes it as is;
 * dropped after the write, written or not, so that no report keeps two
 * copies for long.
 */
static int kept_text(json_object *o, struct printbuf *pb, int level, int flags) {
        const char *text = json_object_get_userdata(o);

        return printbuf_memappend(pb, text, (int) strlen(text)) < 0 ? -1 : 0;
}

static void keep_text(json_object *o) {
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        char *copy = text ? strdup(text) : NULL;

        if (copy)
                json_object_set_serializer(o, kept_text, copy, json_object_free_userdata);
}

/* The newest n reports serialize as json-c does again (their kept text freed). */
static void forget_texts(struct history *h, size_t n) {
        size_t len = json_object_array_length(h->jobs);

        for (size_t i = len - (n < len ? n : len); i < len; i++)
                json_object_set_serializer(json_object_array_get_idx(h->jobs, i), NULL, NULL, NULL);
}

/* One report a line: all of them after the header line, or the newest n_new. */
static char *lines(struct history *h, bool all) {
        size_t n = json_object_array_length(h->jobs), first = all ? 0 : n - h->n_new, size = 0;
        char *text = NULL;
        bool fail = false;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        if (all)
                fputs(HISTORY_HEADER "\n", f);
        for (size_t i = first; i < n && !fail; i++) {
                const char *line =
                        json_object_to_json_string_ext(json_object_array_get_idx(h->jobs, i), JSON_C_TO_STRING_PLAIN);

                fail = !line;
                if (line)
                        fprintf(f, "%s\n", line);
        }
        if (fclose(f) != 0 || fail) {
                free(text);
                return NULL;
        }
        return text;
}

/* The new reports at the file's end, on disk when this returns. */
static int append(struct history *h) {
        _cleanup_free_ char *text = lines(h, false);
        _cleanup_close_ int fd = -1;
        int r;

        if (!text)
                return -ENOMEM;
        fd = open(h->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        r = fd_write_all(fd, text, strlen(text));
        if (r < 0)
                return r;
        return fdatasync(fd) < 0 ? -errno : 0;
}

/* The file's directory is there (made if it alone is missing): a history that cannot be written is not
 * serialized whole for nothing at every write. */
static int dir_ready(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        char *slash = dir ? strrchr(dir, '/') : NULL;

        if (!dir)
                return -ENOMEM;
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        return mkdir(dir, 0755) >= 0 || errno == EEXIST ? 0 : -errno;
}

/*
 * Writes what changed: the new reports appended, one a line; the whole file again (atomically) when it holds
 * twice as many reports as are kept (those trimmed since are still in it), when it is not ours to append to
 * (a first write, an old or damaged file, new bounds), or when an append failed.
 */
static int save_now(struct history *h) {
        size_t n = json_object_array_length(h->jobs);
        int r;

        if (!h->path)
                return 0;
        h->n_saves++;
        if (!h->rewrite && h->n_new == 0)
                return 0;
        if (!h->rewrite && h->lines_on_disk + h->n_new <= 2 * (n > HISTORY_COMPACT_MIN ? n : HISTORY_COMPACT_MIN)) {
                r = append(h);
                if (r >= 0) {
                        h->lines_on_disk += h->n_new;
                        h->n_new = 0;
                        return 0;
                }
                log_debug("Job history: cannot append to %s (%s): writing it whole", h->path, strerror(-r));
        }
        r = dir_ready(h->path);
        if (r >= 0) {
                _cleanup_free_ char *text = lines(h, true);

                r = text ? write_file_atomic(h->path, text) : -ENOMEM;
        }
        if (r >= 0) {
                h->lines_on_disk = n;
                h->n_new = 0;
                h->rewrite = false;
                h->n_rewrites++;
                return 0;
        }
        h->rewrite = true; /* the file is not known to end where an append would go */
        if (!h->save_warned) {
                h->save_warned = true;
                log_warning_errno(r, "Job history: cannot write %s (%m): ended jobs are kept in memory only", h->path);
        }
        return r;
}

static int save(struct history *h) {
        size_t n_new = h->n_new;
        int r = save_now(h);

        forget_texts(h, n_new);
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

/* A report as read back: kept if it has an id and an end, and trimmed as history_add would. */
static void load_one(struct history *h, json_object *o) {
        if (!json_object_is_type(o, json_type_object) || int_field(o, "id") <= 0 || int_field(o, "ended") < 0)
                return;
        if (json_object_array_add(h->jobs, json_object_get(o)) < 0) {
                json_object_put(o);
                return;
        }
        trim_user(h, int_field(o, "uid"));
        trim(h);
}

/* The file of the daemons before JSON lines: {"version":1,"jobs":[...]}, on one line; true if text is one. */
static bool load_version1(struct history *h, const char *text) {
        json_object *file = json_tokener_parse(text), *jobs;
        bool ok = file && json_object_object_get_ex(file, "jobs", &jobs) && json_object_is_type(jobs, json_type_array);

        for (size_t i = 0; ok && i < json_object_array_length(jobs); i++)
                load_one(h, json_object_array_get_idx(jobs, i));
        json_object_put(file);
        return ok;
}

static void load(struct history *h) {
        _cleanup_free_ char *text = NULL, *bad = NULL;
        char *save = NULL, *line;
        size_t damaged = 0;
        int r = read_full_file(h->path, HISTORY_FILE_MAX, &text, NULL);

        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_warning_errno(r, "Job history: cannot read %s (%m): starting a new one", h->path);
                h->rewrite = true;
                return;
        }
        h->rewrite = true; /* until a line of ours says otherwise: an old file is written anew */
        line = strtok_r(text, "\n", &save);
        if (line && streq(line, HISTORY_HEADER)) {
                while ((line = strtok_r(NULL, "\n", &save))) {
                        json_object *o = json_tokener_parse(line);

                        damaged += !o || !json_object_is_type(o, json_type_object);
                        if (o)
                                load_one(h, o);
                        json_object_put(o);
                        h->lines_on_disk++;
                }
                /* A torn last line (the machine stopped during an append) costs that report, not the file. */
                if (damaged > 0)
                        log_warning("Job history: %zu damaged line(s) in %s skipped", damaged, h->path);
                h->rewrite = damaged > 0;
                return;
        }
        if (line && load_version1(h, line))
                return;
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
        if (json_object_array_length(h->jobs) != n) {
                h->rewrite = true; /* the file would give back what the new bounds dropped */
                (void) save_soon(h);
        }
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
        h->n_new++;
        if (h->path && h->event)
                keep_text(report); /* written by the timer, a dispatch of its own */
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
