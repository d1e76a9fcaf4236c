/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ended jobs: bounded by number, age and per user, found by id or name, kept in a file across restarts
 * and written at most once a second from the event loop. */
#include <inttypes.h>
#include <stdlib.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "common.h"
#include "history.h"

static json_object *report(uint64_t id, const char *name, uid_t uid, int64_t ended) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "id", json_object_new_uint64(id));
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "uid", json_object_new_int64(uid));
        json_object_object_add(o, "ended", json_object_new_int64(ended));
        return o;
}

static int64_t id_of(json_object *o) {
        json_object *v;

        return o && json_object_object_get_ex(o, "id", &v) ? json_object_get_int64(v) : -1;
}

START_TEST(test_history_bounds_and_find) {
        int64_t now = (int64_t) time(NULL);
        struct history h;

        ck_assert_int_eq(history_init(&h, NULL, NULL, 3, 86400), 0);
        ck_assert_int_eq(history_add(&h, report(1, "nightly", 1000, now - 2 * 86400)), 0); /* too old */
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        /* Each of another user (a user keeps at most a quarter of 3, that is 1); id 4 of uid 1000, 6 of root. */
        for (uint64_t id = 2; id <= 6; id++)
                ck_assert_int_eq(history_add(&h, report(id, id % 2 ? "nightly" : "dump",
                                                        id == 6 ? 0 : (uid_t) (996 + id), now)),
                                 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 3); /* 4, 5, 6 */
        ck_assert_int_eq(id_of(json_object_array_get_idx(h.jobs, 0)), 4);
        ck_assert_ptr_null(history_find(&h, "2", 0));
        ck_assert_int_eq(id_of(history_find(&h, "5", 0)), 5);
        /* By name: the caller's newest of that name, else anyone's newest. */
        ck_assert_int_eq(id_of(history_find(&h, "dump", 1000)), 4);
        ck_assert_int_eq(id_of(history_find(&h, "dump", 0)), 6);
        ck_assert_int_eq(id_of(history_find(&h, "dump", 4242)), 6);
        ck_assert_ptr_null(history_find(&h, "nosuch", 0));
        /* Tighter bounds at a reload; 0 keeps none. */
        history_set_bounds(&h, 1, 86400);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 1);
        history_set_bounds(&h, 0, 86400);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        ck_assert_int_eq(history_add(&h, report(7, "x", 0, now)), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        history_done(&h);
}
END_TEST

START_TEST(test_history_file) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json"), *bad = path_join(dir, "history.json.bad");
        struct history h;

        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0); /* no file yet */
        ck_assert_int_eq(history_add(&h, report(1, "a", 0, now)), 0);
        ck_assert_int_eq(history_add(&h, report(2, "b", 0, now)), 0);
        history_done(&h);
        /* A restart: both are back. */
        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 2);
        ck_assert_int_eq(id_of(history_find(&h, "b", 0)), 2);
        history_done(&h);
        /* Bounds apply to what is read. */
        ck_assert_int_eq(history_init(&h, NULL, path, 1, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 1);
        history_done(&h);
        /* A damaged file is set aside, not fatal. */
        free(write_file(dir, "history.json", "{\"version\":1,\"jobs\":[{\"id\":"));
        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        ck_assert_int_eq(access(bad, F_OK), 0);
        history_done(&h);
        free(path);
        free(bad);
        tmpdir_cleanup(dir);
}
END_TEST

static size_t held_by(const struct history *h, uid_t uid) {
        size_t n = 0;

        for (size_t i = 0; i < json_object_array_length(h->jobs); i++) {
                json_object *v;

                n += json_object_object_get_ex(json_object_array_get_idx(h->jobs, i), "uid", &v) &&
                     json_object_get_int64(v) == (int64_t) uid;
        }
        return n;
}

/* One user's flood of short jobs drops that user's own oldest reports: root's and another user's stay. */
START_TEST(test_history_user_quota) {
        int64_t now = (int64_t) time(NULL);
        uint64_t id = 1;
        struct history h;

        ck_assert_int_eq(history_init(&h, NULL, NULL, 100, 86400), 0);
        for (int i = 0; i < 60; i++) /* root: more than a quarter, bounded by history_jobs alone */
                ck_assert_int_eq(history_add(&h, report(id++, "backup", 0, now)), 0);
        ck_assert_int_eq(history_add(&h, report(id++, "report", 2000, now)), 0);
        for (int i = 0; i < 200; i++)
                ck_assert_int_eq(history_add(&h, report(id++, "short", 1000, now)), 0);
        ck_assert_uint_eq(held_by(&h, 0), 60);
        ck_assert_uint_eq(held_by(&h, 2000), 1);
        ck_assert_uint_eq(held_by(&h, 1000), 100 / 4);
        ck_assert_int_eq(id_of(history_find(&h, "1", 0)), 1);
        ck_assert_int_eq(id_of(history_find(&h, "report", 2000)), 61);
        /* uid 1000's newest are the ones kept. */
        ck_assert_ptr_null(history_find(&h, "236", 1000));
        ck_assert_int_eq(id_of(history_find(&h, "237", 1000)), 237);
        ck_assert_int_eq(id_of(history_find(&h, "short", 1000)), 261);
        /* A reload to fewer: the quota shrinks with it, then the oldest of all go. */
        history_set_bounds(&h, 40, 86400);
        ck_assert_uint_eq(held_by(&h, 1000), 10);
        ck_assert_uint_eq(held_by(&h, 2000), 1);
        ck_assert_uint_eq(held_by(&h, 0), 29);
        /* At least 1, however small history_jobs. */
        history_set_bounds(&h, 2, 86400);
        ck_assert_int_eq(history_add(&h, report(id++, "short", 1000, now)), 0);
        ck_assert_uint_eq(held_by(&h, 1000), 1);
        ck_assert_int_eq(id_of(history_find(&h, "short", 1000)), 262);
        history_done(&h);
}
END_TEST

/* The ids of a history's reports, oldest first, as "1 2 3". */
static char *ids(const struct history *h) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < json_object_array_length(h->jobs); i++)
                fprintf(f, "%s%" PRId64, i ? " " : "", id_of(json_object_array_get_idx(h->jobs, i)));
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

/* The ids the file at path gives back (read by a history of its own, with these bounds). */
static char *ids_on_disk(const char *path, size_t max_jobs) {
        struct history h;
        char *text;

        ck_assert_int_eq(history_init(&h, NULL, path, max_jobs, 86400), 0);
        text = ids(&h);
        history_done(&h);
        return text;
}

/* How many reports the file at path holds (read by a history of its own). */
static size_t on_disk(const char *path) {
        _cleanup_free_ char *text = ids_on_disk(path, 1000);
        size_t n = text[0] ? 1 : 0;

        for (const char *p = text; *p; p++)
                n += *p == ' ';
        return n;
}

/* 50 job ends within a second: one write, a second after the first, with all 50. */
START_TEST(test_history_batched_save) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json");
        sd_event *e = NULL;
        struct history h;
        uint64_t start, end;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(history_init(&h, e, path, 100, 86400), 0);
        ck_assert_int_ge(sd_event_now(e, CLOCK_MONOTONIC, &start), 0);
        for (uint64_t id = 1; id <= 50; id++)
                ck_assert_int_eq(history_add(&h, report(id, "short", 0, now)), 0);
        ck_assert_uint_eq(h.n_saves, 0);
        ck_assert_int_ne(access(path, F_OK), 0);
        /* Served from memory meanwhile; each report's text made at its addition, kept until the write. */
        ck_assert_int_eq(id_of(history_find(&h, "50", 0)), 50);
        ck_assert_ptr_nonnull(json_object_get_userdata(history_find(&h, "1", 0)));
        for (int turns = 0; h.n_saves == 0 && turns < 3; turns++)
                ck_assert_int_ge(sd_event_run(e, 5 * 1000000), 0);
        ck_assert_int_ge(sd_event_now(e, CLOCK_MONOTONIC, &end), 0);
        ck_assert_uint_eq(h.n_saves, 1);
        ck_assert_uint_ge(end - start, HISTORY_SAVE_DELAY_USEC);
        ck_assert_uint_eq(on_disk(path), 50);
        /* Written: the kept texts are gone (no report holds two copies), and the file has json-c's own. */
        for (uint64_t id = 1; id <= 50; id++) {
                char key[16];

                snprintf(key, sizeof(key), "%" PRIu64, id);
                ck_assert_ptr_null(json_object_get_userdata(history_find(&h, key, 0)));
        }
        {
                _cleanup_free_ char *text = NULL;
                const char *last = json_object_to_json_string_ext(history_find(&h, "50", 0), JSON_C_TO_STRING_PLAIN);

                ck_assert_int_eq(read_full_file(path, 1 << 24, &text, NULL), 0);
                ck_assert_ptr_nonnull(strstr(text, last));
        }
        /* Nothing pending: the loop writes nothing more. */
        ck_assert_int_ge(sd_event_run(e, 0), 0);
        ck_assert_uint_eq(h.n_saves, 1);
        history_done(&h);
        e = sd_event_unref(e);
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

/* A stop with a write pending: history_done writes it. */
START_TEST(test_history_done_flushes) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json");
        sd_event *e = NULL;
        struct history h;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(history_init(&h, e, path, 100, 86400), 0);
        ck_assert_int_eq(history_add(&h, report(1, "a", 0, now)), 0);
        ck_assert_int_eq(history_add(&h, report(2, "b", 1000, now)), 0);
        ck_assert_uint_eq(h.n_saves, 0);
        ck_assert_int_ne(access(path, F_OK), 0);
        history_done(&h);
        ck_assert_uint_eq(on_disk(path), 2);
        e = sd_event_unref(e);
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

static size_t lines_of(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        ck_assert_int_eq(read_full_file(path, 1 << 24, &text, NULL), 0);
        for (const char *p = text; *p; p++)
                n += *p == '\n';
        return n;
}

/* A job's end appends its report to the file: the file is written whole only when it holds twice what is
 * kept, and at any moment it gives back what the daemon holds. */
START_TEST(test_history_appends) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json");
        _cleanup_free_ char *text = NULL;
        struct history h;

        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0); /* no loop: each change written at once */
        for (uint64_t id = 1; id <= 3; id++)
                ck_assert_int_eq(history_add(&h, report(id, "a", 0, now)), 0);
        ck_assert_uint_eq(h.n_rewrites, 1); /* the first write makes the file, the others append */
        ck_assert_int_eq(read_full_file(path, 1 << 20, &text, NULL), 0);
        ck_assert_msg(startswith(text, "{\"pagewarden_history\":2}\n{\"id\":1,"), "%s", text);
        ck_assert_uint_eq(lines_of(path), 4);
        /* 200 more: the file keeps the trimmed ones until it holds twice as many lines as the compaction's
         * floor (64: a short history is rewritten at no cost), then it is written whole. */
        for (uint64_t id = 4; id <= 203; id++) {
                ck_assert_int_eq(history_add(&h, report(id, "a", 0, now)), 0);
                ck_assert_uint_le(lines_of(path), 1 + 2 * 64);
        }
        ck_assert_uint_ge(h.n_rewrites, 2);
        ck_assert_uint_le(h.n_rewrites, 1 + 200 / (2 * 64 - 10) + 1);
        free(text);
        text = ids(&h);
        ck_assert_str_eq(text, "194 195 196 197 198 199 200 201 202 203");
        free(text);
        text = ids_on_disk(path, 10);
        ck_assert_str_eq(text, "194 195 196 197 198 199 200 201 202 203");
        history_done(&h);
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

/* Reports trimmed before they were ever written (one user's flood within a second), new bounds, restarts:
 * what the file gives back is what the daemon held, every time. */
START_TEST(test_history_file_follows_memory) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json");
        sd_event *e = NULL;
        uint64_t id = 0;
        unsigned seed = 7;

        ck_assert_int_ge(sd_event_new(&e), 0);
        for (int round = 0; round < 30; round++) {
                size_t max_jobs = round < 20 ? 12 : 8;
                _cleanup_free_ char *held = NULL, *back = NULL;
                struct history h;
                int adds = 1 + (int) (rand_r(&seed) % 9);

                ck_assert_int_eq(history_init(&h, e, path, max_jobs, 86400), 0); /* batched: written at done */
                for (int i = 0; i < adds; i++) {
                        uid_t uid = (uid_t[]){ 0, 1000, 1000, 1000, 1001 }[rand_r(&seed) % 5];

                        ck_assert_int_eq(history_add(&h, report(++id, "j", uid, now)), 0);
                }
                held = ids(&h);
                history_done(&h);
                back = ids_on_disk(path, max_jobs);
                ck_assert_msg(streq(held, back), "round %d: held %s, the file gives %s", round, held, back);
        }
        e = sd_event_unref(e);
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

/* The former format is read, and written anew at the next change; a torn last line (the machine stopped
 * during an append) costs that report only. */
START_TEST(test_history_old_and_torn_files) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "history.json");
        _cleanup_free_ char *text = NULL, *old = NULL, *torn = NULL;
        struct history h;

        ck_assert_int_ge(asprintf(&old,
                                  "{\"version\":1,\"jobs\":[{\"id\":1,\"uid\":0,\"ended\":%" PRId64
                                  "},{\"id\":2,\"uid\":0,\"ended\":%" PRId64 "}]}",
                                  now, now),
                         0);
        free(write_file(dir, "history.json", old));
        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0);
        text = ids(&h);
        ck_assert_str_eq(text, "1 2");
        ck_assert_int_eq(history_add(&h, report(3, "c", 0, now)), 0);
        ck_assert_uint_eq(h.n_rewrites, 1);
        history_done(&h);
        ck_assert_uint_eq(lines_of(path), 4);
        free(text);
        text = ids_on_disk(path, 10);
        ck_assert_str_eq(text, "1 2 3");

        ck_assert_int_ge(asprintf(&torn,
                                  "{\"pagewarden_history\":2}\n{\"id\":1,\"uid\":0,\"ended\":%" PRId64
                                  "}\n{\"id\":2,\"uid\":0,\"end",
                                  now),
                         0);
        free(write_file(dir, "history.json", torn));
        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0);
        free(text);
        text = ids(&h);
        ck_assert_str_eq(text, "1");
        ck_assert_int_eq(history_add(&h, report(4, "d", 0, now)), 0);
        ck_assert_uint_eq(h.n_rewrites, 1); /* not appended after a torn line */
        history_done(&h);
        free(text);
        text = ids_on_disk(path, 10);
        ck_assert_str_eq(text, "1 4");
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

/* A file whose directory cannot be made (its parent is missing): each write fails at once, said once, and the
 * reports are kept in memory. */
START_TEST(test_history_unwritable) {
        int64_t now = (int64_t) time(NULL);
        char *dir = tmpdir_new(), *path = path_join(dir, "no/such/history.json");
        struct history h;

        ck_assert_int_eq(history_init(&h, NULL, path, 10, 86400), 0);
        ck_assert_int_eq(history_add(&h, report(1, "a", 0, now)), -ENOENT);
        ck_assert_int_eq(history_add(&h, report(2, "b", 0, now)), -ENOENT);
        ck_assert_uint_eq(h.n_saves, 2);
        ck_assert_uint_eq(h.n_rewrites, 0);
        ck_assert(h.save_warned);
        ck_assert_int_eq(id_of(history_find(&h, "2", 0)), 2);
        history_done(&h);
        free(path);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *history_suite(void) {
        Suite *s = suite_create("history");
        TCase *tc = tcase_create("history");

        tcase_add_test(tc, test_history_bounds_and_find);
        tcase_add_test(tc, test_history_file);
        tcase_add_test(tc, test_history_user_quota);
        tcase_add_test(tc, test_history_batched_save);
        tcase_add_test(tc, test_history_done_flushes);
        tcase_add_test(tc, test_history_appends);
        tcase_add_test(tc, test_history_file_follows_memory);
        tcase_add_test(tc, test_history_old_and_torn_files);
        tcase_add_test(tc, test_history_unwritable);
        tcase_set_timeout(tc, 30); /* a timer of 1 s, under sanitizers too */
        suite_add_tcase(s, tc);
        return s;
}
