/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a job cost the protected applications, against their rates while no job ran. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
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
        struct app_snapshot *start;
        struct appcost a;
        json_object *r, *db;
        size_t omitted;

        appcost_init(&a, fake_sample, &f, 0);
        /* Idle for 1.2 s: 6 refaults, no major fault, 0.12 s of stalls (300/min, 0, 6 s/min). */
        nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000000 }, NULL);
        nanosleep(&(struct timespec){ .tv_sec = 1 }, NULL);
        f.refaults += 6;
        f.stall += 120000;
        appcost_set_running(&a, true);
        start = appcost_snapshot(&a);
        ck_assert_ptr_nonnull(start);
        ck_assert_uint_eq(start->n, 1);
        /* A job keeps its snapshot for its life: one application's size, not room for PW_MAX_PROTECTS (it was
         * 24 KiB per job, 47 of the 63 MB the scale bench's 2,000 jobs took). */
        ck_assert_uint_lt(malloc_usable_size(start), sizeof(*start) + 4 * sizeof(start->c[0]));
        /* During a 2-minute job: 1200 refaults, 40 major faults, 30 s stalled. */
        f.refaults += 1200;
        f.majfaults += 40;
        f.stall += 30000000;
        r = appcost_report(&a, start, 120000000, &omitted);
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
        r = appcost_report(&a, start, 120000000, &omitted);
        ck_assert_double_eq(num(json_object_array_get_idx(r, 0), "refaults"), 0);
        json_object_put(r);
        /* One that is gone is left out. */
        f.gone = true;
        r = appcost_report(&a, start, 120000000, &omitted);
        ck_assert_uint_eq(json_object_array_length(r), 0);
        json_object_put(r);
        app_snapshot_unref(start);
        appcost_done(&a);
}
END_TEST

START_TEST(test_appcost_no_idle_yet) {
        struct fake_apps f = {};
        struct app_snapshot *start;
        struct appcost a;
        json_object *r;
        size_t omitted;

        appcost_init(&a, fake_sample, &f, 0);
        appcost_set_running(&a, true); /* a job at once: no idle time to compare with */
        start = appcost_snapshot(&a);
        r = appcost_report(&a, start, 60000000, &omitted);
        ck_assert_double_eq(num(json_object_array_get_idx(r, 0), "idle_refaults_per_min"), -1);
        json_object_put(r);
        app_snapshot_unref(start);
        appcost_done(&a);
}
END_TEST

/* Twelve protected applications, app0..app11, with the counters of these arrays. */
static uint64_t many_stall[12], many_ref[12];
static size_t many_sample(void *userdata, struct app_sample *out, size_t max) {
        size_t n = max < 12 ? max : 12;

        for (size_t i = 0; i < n; i++) {
                out[i] = (struct app_sample){ .stall_usec = many_stall[i], .refaults = many_ref[i] };
                snprintf(out[i].name, sizeof(out[i].name), "app%zu", i);
        }
        return n;
}

static void expect_names(json_object *r, const char *const *want, size_t n) {
        ck_assert_uint_eq(json_object_array_length(r), n);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(json_object_get_string(
                                         json_object_object_get(json_object_array_get_idx(r, i), "name")),
                                 want[i]);
}

START_TEST(test_appcost_most_costly) {
        static const char *const by_stall[] = { "app4", "app5", "app6", "app7", "app8", "app9", "app10", "app11" };
        static const char *const by_refaults[] = { "app0", "app1", "app2", "app3", "app4", "app5", "app6", "app9" };
        struct app_snapshot *start;
        struct appcost a;
        json_object *r;
        size_t omitted = 99;

        memset(many_stall, 0, sizeof(many_stall));
        memset(many_ref, 0, sizeof(many_ref));
        appcost_init(&a, many_sample, NULL, 0);
        appcost_set_running(&a, true);
        start = appcost_snapshot(&a);
        ck_assert_uint_eq(start->n, 12);
        /* The job cost app K K ms of stall: the 8 most costly, in the policy's order, 4 left out. */
        for (size_t i = 0; i < 12; i++)
                many_stall[i] = i * 1000;
        r = appcost_report(&a, start, 60000000, &omitted);
        ck_assert_uint_eq(omitted, 4);
        expect_names(r, by_stall, APPCOST_REPORT_MAX);
        json_object_put(r);
        /* No stall: refaults decide (app3, app9), then the policy's order. */
        memset(many_stall, 0, sizeof(many_stall));
        many_ref[3] = many_ref[9] = 50;
        r = appcost_report(&a, start, 60000000, &omitted);
        ck_assert_uint_eq(omitted, 4);
        expect_names(r, by_refaults, APPCOST_REPORT_MAX);
        json_object_put(r);
        app_snapshot_unref(start);
        /* Up to the limit, every application, none omitted. */
        start = appcost_snapshot(&a);
        start->n = 8;
        r = appcost_report(&a, start, 60000000, &omitted);
        ck_assert_uint_eq(omitted, 0);
        ck_assert_uint_eq(json_object_array_length(r), 8);
        json_object_put(r);
        app_snapshot_unref(start);
        appcost_done(&a);
}
END_TEST

/* Jobs that start within share_usec of each other share one snapshot: the applications are read once. */
static unsigned reads;
static size_t counting_sample(void *userdata, struct app_sample *out, size_t max) {
        reads++;
        return fake_sample(userdata, out, max);
}

START_TEST(test_appcost_shared) {
        struct fake_apps f = { .refaults = 100 };
        struct app_snapshot *s[100], *later;
        const struct app_roster *roster;
        struct appcost a;
        json_object *r;
        size_t omitted;

        appcost_init(&a, counting_sample, &f, 10 * 1000000); /* 10 s: this test's steps are well within */
        appcost_set_running(&a, true);
        reads = 0;
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                s[i] = appcost_snapshot(&a);
        ck_assert_uint_eq(reads, 0); /* the idle baseline's, taken at init, serves them all */
        for (size_t i = 1; i < ELEMENTSOF(s); i++)
                ck_assert_ptr_eq(s[i], s[0]);
        ck_assert_uint_eq(s[0]->refs, ELEMENTSOF(s) + 1); /* and appcost's own reference */
        /* Their ends share one as well. */
        f.refaults += 50;
        r = appcost_report(&a, s[0], 60000000, &omitted);
        ck_assert_double_eq(num(json_object_array_get_idx(r, 0), "refaults"), 0); /* the same moment */
        json_object_put(r);
        roster = s[0]->roster;
        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                app_snapshot_unref(s[i]);
        /* Without sharing, a new one each time, and the old ones freed with their last reference (ASan). */
        appcost_set_share(&a, 0);
        later = appcost_snapshot(&a);
        ck_assert_uint_eq(reads, 1);
        ck_assert_uint_eq(later->c[0].refaults, 150);
        ck_assert_ptr_eq(later->roster, roster); /* the same application: its name is not copied again */
        r = appcost_report(&a, later, 60000000, &omitted);
        ck_assert_uint_eq(reads, 2);
        json_object_put(r);
        app_snapshot_unref(later);
        appcost_done(&a);
}
END_TEST

Suite *appcost_suite(void) {
        Suite *s = suite_create("appcost");
        TCase *tc = tcase_create("appcost");

        tcase_add_test(tc, test_appcost);
        tcase_add_test(tc, test_appcost_no_idle_yet);
        tcase_add_test(tc, test_appcost_most_costly);
        tcase_add_test(tc, test_appcost_shared);
        suite_add_tcase(s, tc);
        return s;
}
