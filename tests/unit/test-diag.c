/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "fail-alloc.h"

START_TEST(test_diag_caret_utf8) {
        struct source src = { .path = (char *) "f.yaml", .text = (char *) "a: 1\nname: \xc3\xa9t\xc3\xa9 x\n" };
        struct diag_list l = {};
        char *s;

        src.size = strlen(src.text);
        /* Column 12 is the character after "été ": one column per character, not per byte. */
        diag_add(&l, &src, 2, 11, "bad %s", "value");
        s = diag_to_string(&l);
        ck_assert_str_eq(s, "f.yaml:2:11: error: bad value\n    name: \xc3\xa9t\xc3\xa9 x\n              ^\n");
        free(s);
        diag_list_done(&l);
}
END_TEST

START_TEST(test_diag_whole_file_and_control) {
        struct source src = { .path = (char *) "g.yaml", .text = (char *) "x: \x1b[31m\n" };
        struct diag_list l = {};
        char *s;

        src.size = strlen(src.text);
        diag_add_path(&l, "/etc/x.yaml", "not a regular file");
        diag_add(&l, &src, 1, 4, "control");
        /* A line past the end of the file prints no source line. */
        diag_add(&l, &src, 9, 1, "late");
        s = diag_to_string(&l);
        /* The escape character is not copied to the terminal. */
        ck_assert_str_eq(s, "/etc/x.yaml: error: not a regular file\n"
                            "g.yaml:1:4: error: control\n    x: ?[31m\n       ^\n"
                            "g.yaml:9:1: error: late\n");
        free(s);
        diag_list_done(&l);
        ck_assert_uint_eq(l.n, 0);
}
END_TEST

/* Two diagnostics; -EBADMSG if a lost one is not accounted for. */
static int add_diags(void *data) {
        struct source src = { .path = (char *) "f.yaml", .text = (char *) "a: 1\nb: 2\n", .size = 10 };
        struct diag_list l = {};
        bool whole;
        int r;

        /* No ck_assert() here: Check allocates to record a passed assertion. */
        diag_add(&l, &src, 2, 4, "bad %s", "value");
        r = diag_add_path(&l, "/etc/x.yaml", "not a regular file");
        /* A lost diagnostic leaves the other whole, and the list says it is incomplete. */
        whole = l.n == (l.oom ? 1u : 2u) && r == (l.oom ? -ENOMEM : -EINVAL);
        diag_list_done(&l);
        return whole && !l.oom ? r : -EBADMSG;
}

START_TEST(test_diag_enomem) {
        ck_assert_uint_ge(fail_alloc_each(add_diags, NULL, -EINVAL), 3); /* 3 under ASan, whose strdup is its own */
}
END_TEST

Suite *diag_suite(void) {
        Suite *s = suite_create("diag");
        TCase *tc = tcase_create("format");

        tcase_add_test(tc, test_diag_caret_utf8);
        tcase_add_test(tc, test_diag_whole_file_and_control);
        tcase_add_test(tc, test_diag_enomem);
        suite_add_tcase(s, tc);
        return s;
}
