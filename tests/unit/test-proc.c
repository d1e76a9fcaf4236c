/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <unistd.h>

#include "common.h"
#include "proc.h"

/* A fake /proc: 100 -> 101 (threads 101, 102) -> 103; 104 unrelated. */
START_TEST(test_proc_tree) {
        char *dir = tmpdir_new();
        struct proc_ids ids;
        pid_t *pids;
        size_t n;

        free(write_file(dir, "100/status", "Name:\tx\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "100/task/100/children", "101 "));
        free(write_file(dir, "101/task/101/children", ""));
        free(write_file(dir, "101/task/102/children", "103 "));
        free(write_file(dir, "103/task/103/children", ""));
        ck_assert_int_eq(proc_ids(dir, 100, &ids), 0);
        ck_assert_int_eq(ids.ppid, 1);
        ck_assert_uint_eq(ids.uid[3], 1000);
        ck_assert_int_eq(proc_ids(dir, 104, &ids), -ESRCH);
        ck_assert_int_eq(proc_tree(dir, 100, &pids, &n, 16), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(pids[0], 100);
        ck_assert_int_eq(pids[1], 101);
        ck_assert_int_eq(pids[2], 103);
        free(pids);
        ck_assert_int_eq(proc_tree(dir, 100, &pids, &n, 2), -E2BIG);
        ck_assert_int_eq(proc_tree(dir, 104, &pids, &n, 16), -ESRCH);
        /* The real /proc: this process is the top of its (childless) tree. */
        ck_assert_int_eq(proc_tree("/proc", getpid(), &pids, &n, 16), 0);
        ck_assert_int_eq(pids[0], getpid());
        free(pids);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *proc_suite(void) {
        Suite *s = suite_create("proc");
        TCase *tc = tcase_create("tree");

        tcase_add_test(tc, test_proc_tree);
        suite_add_tcase(s, tc);
        return s;
}
