/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ended jobs: bounded by number and age, found by id or name, kept in a file across restarts. */
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

        ck_assert_int_eq(history_init(&h, NULL, 3, 86400), 0);
        ck_assert_int_eq(history_add(&h, report(1, "nightly", 1000, now - 2 * 86400)), 0); /* too old */
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        for (uint64_t id = 2; id <= 6; id++)
                ck_assert_int_eq(history_add(&h, report(id, id % 2 ? "nightly" : "dump", id == 6 ? 0 : 1000, now)), 0);
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

        ck_assert_int_eq(history_init(&h, path, 10, 86400), 0); /* no file yet */
        ck_assert_int_eq(history_add(&h, report(1, "a", 0, now)), 0);
        ck_assert_int_eq(history_add(&h, report(2, "b", 0, now)), 0);
        history_done(&h);
        /* A restart: both are back. */
        ck_assert_int_eq(history_init(&h, path, 10, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 2);
        ck_assert_int_eq(id_of(history_find(&h, "b", 0)), 2);
        history_done(&h);
        /* Bounds apply to what is read. */
        ck_assert_int_eq(history_init(&h, path, 1, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 1);
        history_done(&h);
        /* A damaged file is set aside, not fatal. */
        free(write_file(dir, "history.json", "{\"version\":1,\"jobs\":[{\"id\":"));
        ck_assert_int_eq(history_init(&h, path, 10, 86400), 0);
        ck_assert_uint_eq(json_object_array_length(h.jobs), 0);
        ck_assert_int_eq(access(bad, F_OK), 0);
        history_done(&h);
        free(path);
        free(bad);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *history_suite(void) {
        Suite *s = suite_create("history");
        TCase *tc = tcase_create("history");

        tcase_add_test(tc, test_history_bounds_and_find);
        tcase_add_test(tc, test_history_file);
        suite_add_tcase(s, tc);
        return s;
}
