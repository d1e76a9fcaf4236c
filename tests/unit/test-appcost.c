/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a job cost the protected applications, against their rates while no job ran. */
#include <time.h>

#include "appcost.h"
#include "common.h"

struct fake_apps {
        uint64_t refaults, majfaults, stall;
        bool gone;
};

static size_t fake_sample(void *userdata, struct app_sample *out, size_t max) {
        struct fake_apps *f = userdata;

        if (f->gone || max == 0)
                return 0;
        out[0] = (struct app_sample){
                .name = "db", .refaults = f->refaults, .majfaults = f->majfaults, .stall_usec = f->stall
        };
        return 1;
}

static double num(json_object *o, const char *key) {
        json_object *v;

        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
        return json_object_is_type(v, json_type_null) ? -1 : json_object_get_double(v);
}

START_TEST(test_appcost) {
        struct fake_apps f = { .refaults = 100, .majfaults = 10, .stall = 1000 };
        struct app_sample *start;
        struct appcost a;
        json_object *r, *db;
        size_t n;

        appcost_init(&a, fake_sample, &f);
        /* Idle for 1.2 s: 6 refaults, no major fault, 0.12 s of stalls (300/min, 0, 6 s/min). */
        nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000000 }, NULL);
        nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
        f.refaults += 6;
        f.stall += 120000;
        appcost_set_running(&a, true);
        appcost_snapshot(&a, &start, &n);
        ck_assert_uint_eq(n, 1);
        /* During a 2-minute job: 1200 refaults, 40 major faults, 30 s stalled. */
        f.refaults += 1200;
        f.majfaults += 40;
        f.stall += 30000000;
        r = appcost_report(&a, start, n, 120000000);
        ck_assert_uint_eq(json_object_array_length(r), 1);
        db = json_object_array_get_idx(r, 0);
        ck_assert_double_eq(num(db, "refaults"), 1200);
        ck_assert_double_eq(num(db, "majfaults"), 40);
        ck_assert_double_eq(num(db, "stall_us"), 30000000);
        ck_assert_double_eq_tol(num(db, "refaults_per_min"), 600, 0.01);
        ck_assert_double_eq_tol(num(db, "stall_us_per_min"), 15000000, 0.1);
        /* While idle: 6 in about 1.2 s, whatever the scheduler added (at most 2 s). */
        ck_assert_double_ge(num(db, "idle_refaults_per_min"), 6 * 60 / 2.0);
        ck_assert_double_le(num(db, "idle_refaults_per_min"), 6 * 60 / 1.2);
        ck_assert_double_eq(num(db, "idle_majfaults_per_min"), 0);
        json_object_put(r);

        /* An application whose cgroup was made again counts from 0, never below. */
        f.refaults = 3;
        r = appcost_report(&a, start, n, 120000000);
        ck_assert_double_eq(num(json_object_array_get_idx(r, 0), "refaults"), 0);
        json_object_put(r);
        /* One that is gone is left out. */
        f.gone = true;
        r = appcost_report(&a, start, n, 120000000);
        ck_assert_uint_eq(json_object_array_length(r), 0);
        json_object_put(r);
        free(start);
        appcost_done(&a);
}
END_TEST

START_TEST(test_appcost_no_idle_yet) {
        struct fake_apps f = {};
        struct app_sample *start;
        struct appcost a;
        json_object *r;
        size_t n;

        appcost_init(&a, fake_sample, &f);
        appcost_set_running(&a, true); /* a job at once: no idle time to compare with */
        appcost_snapshot(&a, &start, &n);
        r = appcost_report(&a, start, n, 60000000);
        ck_assert_double_eq(num(json_object_array_get_idx(r, 0), "idle_refaults_per_min"), -1);
        json_object_put(r);
        free(start);
        appcost_done(&a);
}
END_TEST

Suite *appcost_suite(void) {
        Suite *s = suite_create("appcost");
        TCase *tc = tcase_create("appcost");

        tcase_add_test(tc, test_appcost);
        tcase_add_test(tc, test_appcost_no_idle_yet);
        suite_add_tcase(s, tc);
        return s;
}
