/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "units.h"
#include <string.h>

#define GiB (UINT64_C(1) << 30)

static const struct {
        const char *in;
        int r;
        uint64_t v;
} size_cases[] = {
        { "0", 0, 0 },
        { "4096", 0, 4096 },
        { "1K", 0, 1024 },
        { "256M", 0, UINT64_C(256) << 20 },
        { "2G", 0, UINT64_C(2) << 30 },
        { "3T", 0, UINT64_C(3) << 40 },
        { "1.5G", 0, UINT64_C(3) << 29 },
        { "0.5K", 0, 512 },
        { "max", 0, UNITS_MAX },
        { "25%", 0, TEST_RAM / 4 },
        { "12.5%", 0, TEST_RAM / 8 },
        { "100%", 0, TEST_RAM },
        { "0%", 0, 0 },
        { "16777215T", 0, UINT64_C(16777215) << 40 },
        { "16777216T", -ERANGE, 0 },            /* 2^64: overflow */
        { "18446744073709551615", -ERANGE, 0 }, /* would read as max */
        { "18446744073709551616", -ERANGE, 0 }, /* does not fit */
        { "99999999999999999999999", -ERANGE, 0 },
        { "100.01%", -ERANGE, 0 },
        { "101%", -ERANGE, 0 },
        { "1.005%", -EINVAL, 0 },
        { "-1", -EINVAL, 0 },
        { "-1G", -EINVAL, 0 },
        { "+1G", -EINVAL, 0 },
        { " 1G", -EINVAL, 0 },
        { "1G ", -EINVAL, 0 },
        { "1g", -EINVAL, 0 },
        { "1GB", -EINVAL, 0 }, /* powers of 1000 to some: refused */
        { "1KB", -EINVAL, 0 },
        { "1KiB", 0, 1024 }, /* as status prints sizes */
        { "256MiB", 0, UINT64_C(256) << 20 },
        { "256 MiB", 0, UINT64_C(256) << 20 },
        { "1.5GiB", 0, UINT64_C(3) << 29 },
        { "1.5 GiB", 0, UINT64_C(3) << 29 },
        { "2 TiB", 0, UINT64_C(2) << 40 },
        { "512 B", 0, 512 },
        { "512B", 0, 512 },
        { "1 G", 0, GiB },
        { "1.5 B", -EINVAL, 0 },  /* bytes are whole */
        { "1  GiB", -EINVAL, 0 }, /* one space, no more */
        { "1 ", -EINVAL, 0 },
        { "1Gi", -EINVAL, 0 },
        { "1GIB", -EINVAL, 0 },
        { "1 gib", -EINVAL, 0 },
        { "1PiB", -EINVAL, 0 },
        { "1iB", -EINVAL, 0 },
        { "1 %", -EINVAL, 0 },
        { "1.5", -EINVAL, 0 },
        { "1.", -EINVAL, 0 },
        { ".5G", -EINVAL, 0 },
        { "", -EINVAL, 0 },
        { "G", -EINVAL, 0 },
        { "0x10", -EINVAL, 0 },
        { "1e9", -EINVAL, 0 },
        { "MAX", -EINVAL, 0 },
        { "%", -EINVAL, 0 },
};

START_TEST(test_size_table) {
        uint64_t v = 12345;
        const char *e = NULL;
        int r = units_parse_size(size_cases[_i].in, TEST_RAM, &v, &e);

        ck_assert_msg(r == size_cases[_i].r, "'%s': got %d (%s), want %d", size_cases[_i].in, r, e ?: "",
                      size_cases[_i].r);
        if (r == 0)
                ck_assert_uint_eq(v, size_cases[_i].v);
        else
                ck_assert_ptr_nonnull(e);
}
END_TEST

START_TEST(test_size_messages) {
        uint64_t v;
        const char *e;

        ck_assert_int_eq(units_parse_size("-5M", TEST_RAM, &v, &e), -EINVAL);
        ck_assert_str_eq(e, "negative values are not allowed");
        ck_assert_int_eq(units_parse_size("101%", TEST_RAM, &v, &e), -ERANGE);
        ck_assert_str_eq(e, "percentage is over 100%");
        ck_assert_int_eq(units_parse_size("20000000T", TEST_RAM, &v, &e), -ERANGE);
        ck_assert_str_eq(e, "size is too large");
        /* Without a RAM size, a percentage cannot be resolved. */
        ck_assert_int_eq(units_parse_size("50%", 0, &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_size("4MB", TEST_RAM, &v, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e, "ambiguous"));
}
END_TEST

START_TEST(test_bandwidth) {
        uint64_t v;
        const char *e;

        ck_assert_int_eq(units_parse_bandwidth("80M", &v, &e), 0);
        ck_assert_uint_eq(v, UINT64_C(80) << 20);
        ck_assert_int_eq(units_parse_bandwidth("80M/s", &v, &e), 0);
        ck_assert_uint_eq(v, UINT64_C(80) << 20);
        ck_assert_int_eq(units_parse_bandwidth("80 MiB/s", &v, &e), 0);
        ck_assert_uint_eq(v, UINT64_C(80) << 20);
        ck_assert_int_eq(units_parse_bandwidth("80MiB", &v, &e), 0);
        ck_assert_uint_eq(v, UINT64_C(80) << 20);
        ck_assert_int_eq(units_parse_bandwidth("80 /s", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("80MB/s", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("1048576", &v, &e), 0);
        ck_assert_uint_eq(v, UINT64_C(1048576));
        ck_assert_int_eq(units_parse_bandwidth("max", &v, &e), 0);
        ck_assert_uint_eq(v, UNITS_MAX);
        ck_assert_int_eq(units_parse_bandwidth("0", &v, &e), -ERANGE);
        ck_assert_int_eq(units_parse_bandwidth("10%", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("-1M", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("1M/h", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("/s", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_bandwidth("99999999T", &v, &e), -ERANGE);
}
END_TEST

START_TEST(test_iops_uint) {
        uint64_t v;
        const char *e;

        ck_assert_int_eq(units_parse_iops("2000", &v, &e), 0);
        ck_assert_uint_eq(v, 2000);
        ck_assert_int_eq(units_parse_iops("max", &v, &e), 0);
        ck_assert_uint_eq(v, UNITS_MAX);
        ck_assert_int_eq(units_parse_iops("0", &v, &e), -ERANGE);
        ck_assert_int_eq(units_parse_iops("2K", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_uint("10000", 1, 10000, &v, &e), 0);
        ck_assert_int_eq(units_parse_uint("10001", 1, 10000, &v, &e), -ERANGE);
        ck_assert_int_eq(units_parse_uint("1.0", 1, 10000, &v, &e), -EINVAL);
}
END_TEST

START_TEST(test_format_runtime) {
        char buf[32];

        units_format_runtime(0, buf, sizeof(buf));
        ck_assert_str_eq(buf, "0s");
        units_format_runtime(59, buf, sizeof(buf));
        ck_assert_str_eq(buf, "59s");
        units_format_runtime(185, buf, sizeof(buf));
        ck_assert_str_eq(buf, "3m05s");
        units_format_runtime(3725, buf, sizeof(buf));
        ck_assert_str_eq(buf, "1h02m");
        units_format_runtime(100 * 3600, buf, sizeof(buf));
        ck_assert_str_eq(buf, "100h00m");
}
END_TEST

START_TEST(test_duration) {
        uint64_t v;
        const char *e;

        ck_assert_int_eq(units_parse_duration("500ms", &v, &e), 0);
        ck_assert_uint_eq(v, 500000);
        ck_assert_int_eq(units_parse_duration("10s", &v, &e), 0);
        ck_assert_uint_eq(v, 10000000);
        ck_assert_int_eq(units_parse_duration("5m", &v, &e), 0);
        ck_assert_uint_eq(v, 300000000);
        ck_assert_int_eq(units_parse_duration("1.5s", &v, &e), 0);
        ck_assert_uint_eq(v, 1500000);
        ck_assert_int_eq(units_parse_duration("10", &v, &e), -EINVAL);
        ck_assert_str_eq(e, "a duration needs a unit: ms, s or m (500ms, 10s, 5m)");
        ck_assert_int_eq(units_parse_duration("10h", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_duration("-1s", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_duration("999999999999999m", &v, &e), -ERANGE);
}
END_TEST

START_TEST(test_percent) {
        uint32_t v;
        const char *e;

        ck_assert_int_eq(units_parse_percent("10%", &v, &e), 0);
        ck_assert_uint_eq(v, 1000);
        ck_assert_int_eq(units_parse_percent("0.25%", &v, &e), 0);
        ck_assert_uint_eq(v, 25);
        ck_assert_int_eq(units_parse_percent("100%", &v, &e), 0);
        ck_assert_int_eq(units_parse_percent("100.5%", &v, &e), -ERANGE);
        ck_assert_int_eq(units_parse_percent("10", &v, &e), -EINVAL);
        ck_assert_int_eq(units_parse_percent("0.001%", &v, &e), -EINVAL);
}
END_TEST

/* What the formatters write parses back to the same value. */
START_TEST(test_format_roundtrip) {
        static const uint64_t sizes[] = { 0, 1, 4096, UINT64_C(1) << 40, UNITS_MAX - 1, UNITS_MAX };
        static const uint64_t durations[] = { 0, 1000, 500000, 1000000, 1500000, 60000000, 90000000 };
        static const uint32_t percents[] = { 0, 1, 10, 99, 150, 1000, 10000 };
        char buf[64];
        uint64_t v;
        uint32_t p;
        const char *e;

        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                units_format_size(sizes[i], buf, sizeof(buf));
                if (sizes[i] == UNITS_MAX - 1)
                        continue; /* refused on input: it would read as max */
                ck_assert_int_eq(units_parse_size(buf, TEST_RAM, &v, &e), 0);
                ck_assert_uint_eq(v, sizes[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(durations); i++) {
                units_format_duration(durations[i], buf, sizeof(buf));
                ck_assert_int_eq(units_parse_duration(buf, &v, &e), 0);
                ck_assert_uint_eq(v, durations[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(percents); i++) {
                units_format_percent(percents[i], buf, sizeof(buf));
                ck_assert_int_eq(units_parse_percent(buf, &p, &e), 0);
                ck_assert_uint_eq(p, percents[i]);
        }
        units_format_human(UINT64_C(256) << 20, buf, sizeof(buf));
        ck_assert_str_eq(buf, "256 MiB");
        units_format_human(UINT64_C(3) << 29, buf, sizeof(buf));
        ck_assert_str_eq(buf, "1.5 GiB");
}
END_TEST

Suite *units_suite(void) {
        Suite *s = suite_create("units");
        TCase *tc = tcase_create("parse");

        tcase_add_loop_test(tc, test_size_table, 0, ELEMENTSOF(size_cases));
        tcase_add_test(tc, test_size_messages);
        tcase_add_test(tc, test_bandwidth);
        tcase_add_test(tc, test_iops_uint);
        tcase_add_test(tc, test_duration);
        tcase_add_test(tc, test_format_runtime);
        tcase_add_test(tc, test_percent);
        tcase_add_test(tc, test_format_roundtrip);
        suite_add_tcase(s, tc);
        return s;
}
