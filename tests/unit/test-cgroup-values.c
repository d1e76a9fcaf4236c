/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup-values.h"
#include "common.h"

START_TEST(test_cgv_io_stat) {
        uint64_t r, w;

        ck_assert_int_eq(cgv_parse_io_stat("", &r, &w), 0);
        ck_assert_uint_eq(r + w, 0);
        ck_assert_int_eq(cgv_parse_io_stat("254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n"
                                           "8:16 rbytes=1 wbytes=2 rios=1 wios=1 dbytes=0 dios=0\n",
                                           &r, &w),
                         0);
        ck_assert_uint_eq(r, 4097);
        ck_assert_uint_eq(w, 8194);
        ck_assert_int_eq(cgv_parse_io_stat("254:0 rbytes=x wbytes=1\n", &r, &w), -EINVAL);
        ck_assert_int_eq(cgv_parse_io_stat("254:0 rbytes=18446744073709551615\n8:0 rbytes=1\n", &r, &w), -EINVAL);
}
END_TEST

START_TEST(test_cgv_limits) {
        char buf[32];
        uint64_t v;

        cgv_format_limit(UNITS_MAX, buf, sizeof(buf));
        ck_assert_str_eq(buf, "max");
        cgv_format_limit(268435456, buf, sizeof(buf));
        ck_assert_str_eq(buf, "268435456");
        ck_assert_int_eq(cgv_parse_limit("max\n", &v), 0);
        ck_assert_uint_eq(v, UNITS_MAX);
        ck_assert_int_eq(cgv_parse_limit("4096\n", &v), 0);
        ck_assert_uint_eq(v, 4096);
        ck_assert_int_eq(cgv_parse_limit("4096 x", &v), -EINVAL);
        ck_assert_int_eq(cgv_parse_limit("", &v), -EINVAL);
        ck_assert_int_eq(cgv_parse_limit("99999999999999999999", &v), -ERANGE);
}
END_TEST

START_TEST(test_cgv_io_max) {
        static const char text[] = "8:0 rbps=2097152 wbps=max riops=max wiops=120\n254:16 wbps=1048576\n";
        struct cgv_io_line *lines, l = { 8, 16, UNITS_MAX, 1048576, 7, UNITS_MAX };
        size_t n;
        char buf[128];

        ck_assert_int_eq(cgv_parse_io_max(text, &lines, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(lines[0].major, 8);
        ck_assert_uint_eq(lines[0].rbps, 2097152);
        ck_assert_uint_eq(lines[0].wbps, UNITS_MAX);
        ck_assert_uint_eq(lines[0].wiops, 120);
        ck_assert_uint_eq(lines[1].minor, 16);
        ck_assert_uint_eq(lines[1].rbps, UNITS_MAX);
        ck_assert_uint_eq(lines[1].wbps, 1048576);
        free(lines);
        ck_assert_int_eq(cgv_parse_io_max("", &lines, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(lines);
        ck_assert_int_eq(cgv_parse_io_max("8:0 zbps=1\n", &lines, &n), -EINVAL);
        ck_assert_int_eq(cgv_parse_io_max("sda rbps=1\n", &lines, &n), -EINVAL);
        cgv_format_io_line(&l, buf, sizeof(buf));
        ck_assert_str_eq(buf, "8:16 rbps=max wbps=1048576 riops=7 wiops=max");
}
END_TEST

/* A disk dropped from the policy gets every key back to max. */
START_TEST(test_cgv_io_plan) {
        struct pw_io_limit want[] = {
                { .major = 8, .minor = 0, .read_bps = 1, .write_bps = 2, .read_iops = UNITS_MAX, .write_iops = 3 }
        };
        struct cgv_io_line have[] = { { 8, 0, 5, 5, 5, 5 }, { 8, 16, 9, 9, 9, 9 } }, *plan;
        size_t n;

        ck_assert_int_eq(cgv_io_plan(want, 1, have, 2, &plan, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(plan[0].minor, 0);
        ck_assert_uint_eq(plan[0].rbps, 1);
        ck_assert_uint_eq(plan[0].wiops, 3);
        ck_assert_uint_eq(plan[1].minor, 16);
        ck_assert_uint_eq(plan[1].rbps, UNITS_MAX);
        ck_assert_uint_eq(plan[1].wiops, UNITS_MAX);
        free(plan);
        ck_assert_int_eq(cgv_io_plan(NULL, 0, NULL, 0, &plan, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(plan);
}
END_TEST

/* An entry whose device is not there writes nothing (no "0:0" line), and a
 * disk it had been resolved to before gets its keys back to max. */
START_TEST(test_cgv_io_plan_absent) {
        struct pw_io_limit want[] = {
                { .absent = true, .read_bps = 1, .write_bps = 2, .read_iops = UNITS_MAX, .write_iops = 3 },
                { .major = 8,
                  .minor = 32,
                  .read_bps = 7,
                  .write_bps = UNITS_MAX,
                  .read_iops = UNITS_MAX,
                  .write_iops = UNITS_MAX },
        };
        struct cgv_io_line have[] = { { 8, 16, 1, 2, UNITS_MAX, 3 } }, *plan;
        size_t n;

        ck_assert_int_eq(cgv_io_plan(want, 2, have, 1, &plan, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(plan[0].minor, 32);
        ck_assert_uint_eq(plan[0].rbps, 7);
        ck_assert_uint_eq(plan[1].minor, 16);
        ck_assert_uint_eq(plan[1].rbps, UNITS_MAX);
        ck_assert_uint_eq(plan[1].wiops, UNITS_MAX);
        free(plan);
}
END_TEST

START_TEST(test_cgv_keyed) {
        static const char stat[] = "anon 4096\nfile 1048576\nfile_dirty 0\nworkingset_refault_file 12\n";
        bool populated, frozen;
        uint64_t v;

        ck_assert_int_eq(cgv_parse_keyed(stat, "file", &v), 0);
        ck_assert_uint_eq(v, 1048576);
        ck_assert_int_eq(cgv_parse_keyed(stat, "workingset_refault_file", &v), 0);
        ck_assert_uint_eq(v, 12);
        ck_assert_int_eq(cgv_parse_keyed(stat, "fil", &v), -ENOENT);
        ck_assert_int_eq(cgv_parse_keyed("nr_dying_descendants 3", "nr_dying_descendants", &v), 0);
        ck_assert_uint_eq(v, 3);
        ck_assert_int_eq(cgv_parse_events("populated 1\nfrozen 0\n", &populated, &frozen), 0);
        ck_assert(populated);
        ck_assert(!frozen);
        ck_assert_int_eq(cgv_parse_events("populated 0\n", &populated, &frozen), 0);
        ck_assert(!populated);
        ck_assert_int_eq(cgv_parse_events("frozen 1\n", &populated, &frozen), -ENOENT);
}
END_TEST

static const struct cgv_protect_need *find_need(const struct cgv_protect_need *n, size_t count, const char *path) {
        for (size_t i = 0; i < count; i++)
                if (streq(n[i].path, path))
                        return &n[i];
        return NULL;
}

/* Ancestors carry the sum of their protected children; parents come first. */
START_TEST(test_cgv_protect_plan) {
        const struct cgv_protect_request req[] = {
                { "/apps/db/main", 4 << 20, 8 << 20 },
                { "/apps/web", 1 << 20, 0 },
                { "/system.slice/x.service", 2 << 20, 2 << 20 },
                { "/apps", 3 << 20, 0 }, /* asks for less than its children need */
        };
        struct cgv_protect_need *needs;
        const struct cgv_protect_need *n;
        size_t count;

        ck_assert_int_eq(cgv_protect_plan(req, ELEMENTSOF(req), &needs, &count), 0);
        ck_assert_uint_eq(count, 6);
        n = find_need(needs, count, "/apps/db/main");
        ck_assert(n && n->requested && n->min == 4 << 20 && n->low == 8 << 20);
        n = find_need(needs, count, "/apps/db");
        ck_assert(n && !n->requested && n->min == 4 << 20 && n->low == 8 << 20);
        n = find_need(needs, count, "/apps");
        ck_assert(n && n->requested);
        ck_assert_uint_eq(n->min, 5 << 20);
        ck_assert_uint_eq(n->low, 8 << 20);
        n = find_need(needs, count, "/system.slice");
        ck_assert(n && n->min == 2 << 20);
        ck_assert_ptr_null(find_need(needs, count, "/"));
        ck_assert_ptr_null(find_need(needs, count, ""));
        for (size_t i = 0; i < count; i++)
                for (size_t j = 0; j < count; j++)
                        if (startswith(needs[j].path, needs[i].path) && needs[j].path[strlen(needs[i].path)] == '/')
                                ck_assert_uint_lt(i, j);
        cgv_protect_needs_free(needs, count);
}
END_TEST

/* Protecting the same path twice keeps the larger value; sums saturate. */
START_TEST(test_cgv_protect_plan_edges) {
        const struct cgv_protect_request req[] = {
                { "/a/b", 1, 1 },
                { "/a/b", 7, 3 },
                { "/a/c", UNITS_MAX - 1, 0 },
        };
        struct cgv_protect_need *needs;
        size_t count;

        ck_assert_int_eq(cgv_protect_plan(req, ELEMENTSOF(req), &needs, &count), 0);
        ck_assert_uint_eq(count, 3);
        ck_assert_uint_eq(find_need(needs, count, "/a/b")->min, 7);
        ck_assert_uint_eq(find_need(needs, count, "/a/b")->low, 3);
        ck_assert_uint_eq(find_need(needs, count, "/a")->min, UNITS_MAX);
        cgv_protect_needs_free(needs, count);
        ck_assert_int_eq(cgv_protect_plan(NULL, 0, &needs, &count), 0);
        ck_assert_uint_eq(count, 0);
        cgv_protect_needs_free(needs, count);
}
END_TEST

START_TEST(test_cgv_psi) {
        struct cgv_psi p;

        ck_assert_int_eq(cgv_parse_psi("some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
                                       "full avg10=0.75 avg60=0.10 avg300=0.00 total=654\n",
                                       &p),
                         0);
        ck_assert(p.some_avg10 > 1.49 && p.some_avg10 < 1.51);
        ck_assert(p.full_avg60 > 0.09 && p.full_avg60 < 0.11);
        ck_assert_uint_eq(p.some_total, 123456);
        ck_assert_uint_eq(p.full_total, 654);
        ck_assert_int_eq(cgv_parse_psi("nonsense\n", &p), -EINVAL);
}
END_TEST

Suite *cgroup_values_suite(void) {
        Suite *s = suite_create("cgroup-values");
        TCase *tc = tcase_create("pure");

        tcase_add_test(tc, test_cgv_limits);
        tcase_add_test(tc, test_cgv_io_max);
        tcase_add_test(tc, test_cgv_io_plan);
        tcase_add_test(tc, test_cgv_io_plan_absent);
        tcase_add_test(tc, test_cgv_keyed);
        tcase_add_test(tc, test_cgv_protect_plan);
        tcase_add_test(tc, test_cgv_io_stat);
        tcase_add_test(tc, test_cgv_protect_plan_edges);
        tcase_add_test(tc, test_cgv_psi);
        suite_add_tcase(s, tc);
        return s;
}
