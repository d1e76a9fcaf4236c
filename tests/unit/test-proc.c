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

/* Start times: field 22 of stat, after a command name with spaces and parentheses. */
START_TEST(test_proc_start_ticks) {
        char *dir = tmpdir_new();
        uint64_t t, now = proc_now_ticks();

        free(write_file(dir, "7/stat", "7 (a) (b c) S 1 7 7 0 -1 4194560 97 0 0 0 3 4 0 0 20 0 1 0 4242 1000 200\n"));
        free(write_file(dir, "8/stat", "8 (short) S 1 8\n"));
        ck_assert_int_eq(proc_start_ticks(dir, 7, &t), 0);
        ck_assert_uint_eq(t, 4242);
        ck_assert_int_eq(proc_start_ticks(dir, 8, &t), -EINVAL);
        ck_assert_int_eq(proc_start_ticks(dir, 9, &t), -ESRCH);
        /* Our own started before now, in the same clock. */
        ck_assert_int_eq(proc_start_ticks("/proc", getpid(), &t), 0);
        ck_assert_uint_le(t, now);
        ck_assert_uint_gt(now, 0);
        tmpdir_cleanup(dir);
}
END_TEST

/*
 * After a write of a pid: the pidfd's process lives, so the write was about
 * it; or it ended, and the question is who holds its pid now.  The pid
 * "reused" here is this process's own (started long before), for the dead
 * child's pidfd: what a reuse between the check and the write looks like.
 */
START_TEST(test_proc_written_other) {
        struct proc_ids ids = {};
        uint64_t now = proc_now_ticks(), me_started;
        int dead = dead_pidfd(), alive = proc_pidfd_open(getpid());
        pid_t later;

        ck_assert_int_ge(alive, 0);
        /* Alive: whatever holds pid, the write was about it. */
        ck_assert_int_eq(proc_written_other("/proc", alive, getpid(), now, &ids), 0);
        /* Ended, and an older process holds the pid: it may be what was written. */
        ck_assert_int_eq(proc_written_other("/proc", dead, getpid(), now, &ids), 1);
        ck_assert_int_eq(ids.ppid, getppid());
        ck_assert_ptr_nonnull(ids.cgroup);
        proc_ids_done(&ids);
        /* ... but not if it started after the write. */
        ck_assert_int_eq(proc_start_ticks("/proc", getpid(), &me_started), 0);
        ck_assert_int_eq(proc_written_other("/proc", dead, getpid(), me_started - 1, &ids), 0);
        /* Ended, and nobody holds the pid. */
        later = fork();
        ck_assert_int_ge(later, 0);
        if (later == 0)
                _exit(0);
        waitpid(later, NULL, 0);
        ck_assert_int_eq(proc_written_other("/proc", dead, later, now, &ids), 0);
        close(dead);
        close(alive);
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
        tcase_add_test(tc, test_proc_start_ticks);
        tcase_add_test(tc, test_proc_written_other);
        suite_add_tcase(s, tc);
        return s;
}
