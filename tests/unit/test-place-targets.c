/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The processes of a request, on real processes: checked, held by pidfd, their trees walked once. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "place-targets.h"

/* A child that forks a grandchild, says so, and waits. */
static pid_t spawn_tree(pid_t *ret_grandchild) {
        int p[2];
        pid_t child, grandchild;

        ck_assert_int_eq(pipe(p), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pid_t g = fork();

                if (g == 0) {
                        pause();
                        _exit(0);
                }
                (void) write(p[1], &g, sizeof(g));
                pause();
                _exit(0);
        }
        ck_assert_int_eq(read(p[0], &grandchild, sizeof(grandchild)), (ssize_t) sizeof(grandchild));
        close(p[0]);
        close(p[1]);
        *ret_grandchild = grandchild;
        return child;
}

START_TEST(test_targets_tree_once_and_pid_reuse) {
        const struct auth_caller me = { .uid = getuid(), .pid = getpid(), .self = -1 };
        struct place_targets t;
        pid_t child, grandchild, *pids;
        size_t n;
        char why[256];

        child = spawn_tree(&grandchild);
        place_targets_init(&t, "/proc", &me);
        ck_assert_int_eq(place_targets_add(&t, child, why, sizeof(why)), 0);
        ck_assert_int_eq(place_targets_add(&t, child, why, sizeof(why)), 0); /* named twice: once */
        ck_assert_int_eq(place_targets_add_descendants(&t, why, sizeof(why)), 0);
        ck_assert_int_eq(place_targets_add_descendants(&t, why, sizeof(why)), 0);
        ck_assert_uint_eq(t.n, 2);
        ck_assert_int_eq(place_targets_pids(&t, 0, NULL, &pids, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(pids[0], child);
        ck_assert_int_eq(pids[1], grandchild);
        free(pids);
        /* Those already in a cgroup are left out when asked. */
        ck_assert_int_eq(place_targets_pids(&t, 0, t.list[0].cgroup, &pids, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(pids);
        /* The child exits and is reaped: its pid may now name another process; the pidfd knows. */
        kill(grandchild, SIGKILL);
        kill(child, SIGKILL);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
        ck_assert(!place_targets_alive(&t, child));
        ck_assert_int_eq(place_targets_pids(&t, 0, NULL, &pids, &n), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_ne(pids[i], child);
        free(pids);
        place_targets_done(&t);
        /* Gone: refused with a sentence. */
        place_targets_init(&t, "/proc", &me);
        ck_assert_int_eq(place_targets_add(&t, child, why, sizeof(why)), -ESRCH);
        ck_assert_ptr_nonnull(strstr(why, "does not exist"));
        ck_assert_ptr_nonnull(strstr(why, "process "));
        place_targets_done(&t);
}
END_TEST

START_TEST(test_targets_refuses_before_walking) {
        const struct auth_caller me = { .uid = getuid(), .pid = getpid(), .self = getpid() };
        struct place_targets t;
        char why[256];

        place_targets_init(&t, "/proc", &me);
        ck_assert_int_eq(place_targets_add(&t, getpid(), why, sizeof(why)), -EPERM);
        ck_assert_ptr_nonnull(strstr(why, "is pagewardend itself"));
        ck_assert_uint_eq(t.n, 0);
        place_targets_done(&t);
}
END_TEST

Suite *place_targets_suite(void) {
        Suite *s = suite_create("targets");
        TCase *tc = tcase_create("processes");

        tcase_add_test(tc, test_targets_tree_once_and_pid_reuse);
        tcase_add_test(tc, test_targets_refuses_before_walking);
        suite_add_tcase(s, tc);
        return s;
}
