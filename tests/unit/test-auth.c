/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "auth.h"
#include "common.h"

START_TEST(test_auth) {
        char *users[] = { (char *) "alice", (char *) "1001" };
        struct pw_job_class c = { .name = (char *) "backup", .users = users, .n_users = 2 };
        struct proc_ids mine = { .uid = { 1000, 1000, 1000, 1000 } }, setuid = { .uid = { 1000, 0, 0, 0 } };

        ck_assert(auth_class_allows(&c, 0, "root"));
        ck_assert(auth_class_allows(&c, 1000, "alice"));
        ck_assert(auth_class_allows(&c, 1001, NULL));
        ck_assert(!auth_class_allows(&c, 1002, "bob"));
        ck_assert(!auth_class_allows(&c, 1000, NULL)); /* alice unknown to NSS: only ids match */
        ck_assert(auth_owns_process(&mine, 1000));
        ck_assert(!auth_owns_process(&mine, 1001));
        ck_assert(!auth_owns_process(&setuid, 1000)); /* a setuid program the user started is not theirs */
        ck_assert(auth_owns_process(&setuid, 0));
}
END_TEST

Suite *auth_suite(void) {
        Suite *s = suite_create("auth");
        TCase *tc = tcase_create("rules");

        tcase_add_test(tc, test_auth);
        suite_add_tcase(s, tc);
        return s;
}
