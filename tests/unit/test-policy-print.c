/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy-print.c: what is printed parses again to the same values (tests/golden has the full texts). */
#include "common.h"
#include "policy-print.h"

/* What policy_print writes parses again to the same policy. */
START_TEST(test_policy_print_roundtrip) {
        static const char text[] =
                "jobs:\n"
                "  a:\n"
                "    memory: {high: 1.5G, max: 33%, swap_max: 0}\n"
                "    io: [{device: /, write_bps: 80M/s, read_iops: 10}]\n"
                "    under_pressure: {freeze: true, freeze_max: 1500ms}\n"
                "    users: [root, \"1000\"]\n"
                "  b: {}\n"
                "protect:\n"
                "  p: {unit: x.service, memory: {min: 1G, low: auto, swap: deny}}\n"
                "  q: {cgroup: /a/b}\n";
        struct parse_result one, two;
        char *printed = NULL;
        size_t size = 0;
        FILE *f;

        parse_policy(text, &one);
        ck_assert_msg(one.r == 0, "%s", one.errors);
        f = open_memstream(&printed, &size);
        ck_assert_ptr_nonnull(f);
        policy_print(&one.policy, f);
        ck_assert_int_eq(fclose(f), 0);
        parse_policy(printed, &two);
        ck_assert_msg(two.r == 0, "%s\n%s", printed, two.errors);
        ck_assert_msg(policy_equal(&one.policy, &two.policy), "%s", printed);
        ck_assert(strstr(printed, "      high: 1610612736  # 1.5 GiB\n"));
        ck_assert(strstr(printed, "      freeze_max: 1500ms\n"));
        /* And a changed value is noticed. */
        two.policy.classes[0].memory_high--;
        ck_assert(!policy_equal(&one.policy, &two.policy));
        parse_result_done(&one);
        parse_result_done(&two);
        free(printed);
}
END_TEST

/* What settings_print writes parses again to the same settings. */
START_TEST(test_settings_print_roundtrip) {
        static const char text[] = "socket_group: root\npressure: {threshold: 12.5%, window: 1500ms}\n";
        struct settings_result one, two;
        char *printed = NULL;
        size_t size = 0;
        FILE *f;

        parse_settings("/etc/pw/pagewarden.yaml", text, &one);
        ck_assert_int_eq(one.r, 0);
        f = open_memstream(&printed, &size);
        settings_print(&one.s, f);
        ck_assert_int_eq(fclose(f), 0);
        parse_settings("/etc/pw/pagewarden.yaml", printed, &two);
        ck_assert_msg(two.r == 0, "%s\n%s", printed, two.errors);
        ck_assert_str_eq(two.s.policy_dir, one.s.policy_dir);
        ck_assert_str_eq(two.s.socket_group, "root");
        ck_assert_uint_eq(two.s.pressure.threshold, 1250);
        ck_assert_uint_eq(two.s.pressure.window_usec, 1500000);
        settings_result_done(&one);
        settings_result_done(&two);
        free(printed);
}
END_TEST

Suite *policy_print_suite(void) {
        Suite *s = suite_create("policy-print");
        TCase *tc = tcase_create("roundtrip");

        tcase_add_test(tc, test_policy_print_roundtrip);
        tcase_add_test(tc, test_settings_print_roundtrip);
        suite_add_tcase(s, tc);
        return s;
}
