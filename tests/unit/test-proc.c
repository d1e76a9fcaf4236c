/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "proc.h"

/* A fake /proc: 100 -> 101 (threads 101, 102) -> 103; 104 unrelated. */
static char *fake_proc(void) {
        char *dir = tmpdir_new();

        free(write_file(dir, "100/status", "Name:\tx\nTgid:\t100\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "100/stat", "100 (a) b) S 1 100 100 0 -1 4194560 97 0 0 0\n"));
        free(write_file(dir, "100/cgroup", "12:memory:/x\n0::/user.slice/user-1000.slice/session-2.scope\n"));
        free(write_file(dir, "100/task/100/children", "101 "));
        free(write_file(dir, "101/task/101/children", ""));
        free(write_file(dir, "101/task/102/children", "103 "));
        free(write_file(dir, "103/task/103/children", ""));
        free(write_file(dir, "102/status", "Name:\tx\nTgid:\t101\nPPid:\t1\nUid:\t0\t0\t0\t0\n"));
        free(write_file(dir, "102/stat", "102 (x) S 1 101 101 0 -1 4194560 97 0 0 0\n"));
        free(write_file(dir, "102/cgroup", "0::/\n"));
        free(write_file(dir, "2/status", "Name:\tkthreadd\nTgid:\t2\nPPid:\t0\nUid:\t0\t0\t0\t0\n"));
        free(write_file(dir, "2/stat", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0\n"));
        free(write_file(dir, "2/cgroup", "0::/\n"));
        free(write_file(dir, "100/statm", "5000 1200 300 100 0 900 0\n"));
        free(write_file(dir, "102/statm", "garbage\n"));
        return dir;
}

START_TEST(test_proc_ids) {
        char *dir = fake_proc();
        struct proc_ids ids;

        ck_assert_int_eq(proc_ids(dir, 100, &ids), 0);
        ck_assert_int_eq(ids.ppid, 1);
        ck_assert_int_eq(ids.tgid, 100);
        ck_assert_uint_eq(ids.uid[3], 1000);
        ck_assert(!ids.kernel_thread); /* the name's ')' does not confuse the flags */
        ck_assert_str_eq(ids.cgroup, "user.slice/user-1000.slice/session-2.scope");
        proc_ids_done(&ids);
        /* A thread of 101; the root cgroup is "". */
        ck_assert_int_eq(proc_ids(dir, 102, &ids), 0);
        ck_assert_int_eq(ids.tgid, 101);
        ck_assert_str_eq(ids.cgroup, "");
        proc_ids_done(&ids);
        ck_assert_int_eq(proc_ids(dir, 2, &ids), 0);
        ck_assert(ids.kernel_thread);
        proc_ids_done(&ids);
        ck_assert_int_eq(proc_ids(dir, 104, &ids), -ESRCH);
        tmpdir_cleanup(dir);
}
END_TEST

START_TEST(test_proc_children) {
        char *dir = fake_proc();
        pid_t *pids;
        size_t n;

        ck_assert_int_eq(proc_children(dir, 100, &pids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(pids[0], 101);
        free(pids);
        /* Every thread's children: 102's child 103 is 101's. */
        ck_assert_int_eq(proc_children(dir, 101, &pids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(pids[0], 103);
        free(pids);
        ck_assert_int_eq(proc_children(dir, 104, &pids, &n), -ESRCH);
        tmpdir_cleanup(dir);
}
END_TEST

START_TEST(test_proc_pidfd) {
        pid_t child = fork();
        int fd;

        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        fd = proc_pidfd_open(child);
        ck_assert_int_ge(fd, 0);
        ck_assert(proc_pidfd_alive(fd));
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        /* Reaped: the pid may be reused, the pidfd knows its process is gone. */
        ck_assert(!proc_pidfd_alive(fd));
        close(fd);
        ck_assert_int_eq(proc_pidfd_open(child), -ESRCH);
}
END_TEST

/* Resident pages, as bytes. */
START_TEST(test_proc_rss) {
        char *dir = fake_proc();
        uint64_t rss = 0;

        ck_assert_int_eq(proc_rss(dir, 100, &rss), 0);
        ck_assert_uint_eq(rss, UINT64_C(1200) * (uint64_t) sysconf(_SC_PAGESIZE));
        ck_assert_int_eq(proc_rss(dir, 102, &rss), -EINVAL);
        ck_assert_int_eq(proc_rss(dir, 104, &rss), -ESRCH);
        tmpdir_cleanup(dir);
        /* Our own: at least a page. */
        ck_assert_int_eq(proc_rss("/proc", getpid(), &rss), 0);
        ck_assert_uint_gt(rss, 0);
}
END_TEST

Suite *proc_suite(void) {
        Suite *s = suite_create("proc");
        TCase *tc = tcase_create("proc");

        tcase_add_test(tc, test_proc_ids);
        tcase_add_test(tc, test_proc_children);
        tcase_add_test(tc, test_proc_pidfd);
        tcase_add_test(tc, test_proc_rss);
        suite_add_tcase(s, tc);
        return s;
}
