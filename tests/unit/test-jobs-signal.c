/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs-signal.c: what pagewardenctl stop, kill and freeze do to a job's
 * processes, on real child processes listed in a fake cgroup's
 * cgroup.procs and described by a fake /proc: only the processes still in
 * the job's cgroup are signalled, only the caller's own unless root, and a
 * pid whose process is gone is passed over.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "common.h"
#include "jobs-signal.h"

#define JOB "pagewarden.slice/copy/slot-0"

struct fixture {
        char *cgroups, *proc;
        struct cgroup_engine *e;
        pid_t mine, other, moved, gone;
};

static pid_t child(void) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

/* A process of uid in cgroup (relative to the mount) in the fake /proc. */
static void fake_process(const char *proc, pid_t pid, uid_t uid, const char *cgroup) {
        _cleanup_free_ char *status = NULL, *stat = NULL, *cg = NULL, *name = NULL;

        ck_assert_int_ge(asprintf(&status, "Name:\tcp\nTgid:\t%d\nPPid:\t1\nUid:\t%u\t%u\t%u\t%u\n", pid, uid, uid, uid,
                                  uid),
                         0);
        ck_assert_int_ge(asprintf(&stat, "%d (cp) S 1 %d %d 0 -1 4194560 97 0 0 0\n", pid, pid, pid), 0);
        ck_assert_int_ge(asprintf(&cg, "0::/%s\n", cgroup), 0);
        ck_assert_int_ge(asprintf(&name, "%d/status", pid), 0);
        free(write_file(proc, name, status));
        free(name);
        ck_assert_int_ge(asprintf(&name, "%d/stat", pid), 0);
        free(write_file(proc, name, stat));
        free(name);
        ck_assert_int_ge(asprintf(&name, "%d/cgroup", pid), 0);
        free(write_file(proc, name, cg));
}

static void fixture_init(struct fixture *f) {
        _cleanup_free_ char *procs = NULL;
        int status;

        *f = (struct fixture){ .cgroups = tmpdir_new(), .proc = tmpdir_new() };
        f->mine = child();
        f->other = child();
        f->moved = child();
        f->gone = child();
        ck_assert_int_eq(kill(f->gone, SIGKILL), 0);
        ck_assert_int_eq(waitpid(f->gone, &status, 0), f->gone);
        fake_process(f->proc, f->mine, 1000, JOB);
        fake_process(f->proc, f->other, 1001, JOB);
        /* Listed when cgroup.procs was read, in another cgroup by the time it is checked. */
        fake_process(f->proc, f->moved, 1000, "user.slice/user-1000.slice/session-2.scope");
        ck_assert_int_ge(asprintf(&procs, "%d\n%d\n%d\n%d\n1\n", f->mine, f->other, f->moved, f->gone), 0);
        free(write_file(f->cgroups, JOB "/cgroup.procs", procs));
        free(write_file(f->cgroups, JOB "/cgroup.freeze", "0\n"));
        ck_assert_int_eq(cgroup_engine_new(f->cgroups, "pagewarden.slice", false, &f->e), 0);
}

static void fixture_done(struct fixture *f) {
        pid_t pids[] = { f->mine, f->other, f->moved };

        for (size_t i = 0; i < ELEMENTSOF(pids); i++)
                if (pids[i] > 0) { /* 0: reaped by the test (kill(0) would signal the whole group) */
                        (void) kill(pids[i], SIGKILL);
                        (void) waitpid(pids[i], NULL, 0);
                }
        cgroup_engine_free(f->e);
        tmpdir_cleanup(f->cgroups);
        tmpdir_cleanup(f->proc);
}

/* Whether pid ended by sig (reaping it); false while it runs. */
static bool ended_by(pid_t pid, int sig) {
        int status;

        for (int i = 0; i < 500; i++) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid)
                        return WIFSIGNALED(status) && WTERMSIG(status) == sig;
                usleep(2000);
        }
        return false;
}

static bool running(pid_t pid) {
        return waitpid(pid, NULL, WNOHANG) == 0;
}

START_TEST(test_signal_own_processes) {
        struct fixture f;
        unsigned n = 99, foreign = 99;

        fixture_init(&f);
        ck_assert_int_eq(jobctl_signal(f.e, f.proc, JOB, SIGUSR1, 1000, &n, &foreign), 0);
        ck_assert_uint_eq(n, 1);       /* its own process in the job */
        ck_assert_uint_eq(foreign, 1); /* uid 1001's: not signalled, counted */
        ck_assert(ended_by(f.mine, SIGUSR1));
        f.mine = 0;
        ck_assert(running(f.other));
        ck_assert(running(f.moved)); /* it left the job's cgroup */
        fixture_done(&f);
}
END_TEST

START_TEST(test_signal_root) {
        struct fixture f;
        unsigned n = 99;

        fixture_init(&f);
        /* Root signals every process still in the job; foreign may be NULL. */
        ck_assert_int_eq(jobctl_signal(f.e, f.proc, JOB, SIGUSR2, 0, &n, NULL), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert(ended_by(f.mine, SIGUSR2));
        ck_assert(ended_by(f.other, SIGUSR2));
        f.mine = f.other = 0;
        ck_assert(running(f.moved));
        fixture_done(&f);
}
END_TEST

START_TEST(test_foreign) {
        struct fixture f;
        uid_t uid = 0;

        fixture_init(&f);
        /* Freezing holds every process: a user may not freeze a job that holds another's. */
        ck_assert_int_eq(jobctl_foreign(f.e, f.proc, JOB, 1000, &uid), f.other);
        ck_assert_uint_eq(uid, 1001);
        ck_assert_int_eq(jobctl_foreign(f.e, f.proc, JOB, 0, &uid), 0);
        ck_assert_int_eq(jobctl_foreign(f.e, f.proc, "pagewarden.slice/copy/none", 1000, &uid), -ENOENT);
        fixture_done(&f);
}
END_TEST

START_TEST(test_frozen_and_names) {
        struct fixture f;
        char buf[32];

        fixture_init(&f);
        ck_assert(!jobctl_frozen(f.e, JOB));
        free(write_file(f.cgroups, JOB "/cgroup.freeze", "1\n"));
        ck_assert(jobctl_frozen(f.e, JOB));
        ck_assert(!jobctl_frozen(f.e, "pagewarden.slice/copy/none"));
        ck_assert_str_eq(jobctl_signal_name(SIGTERM, buf, sizeof(buf)), "SIGTERM");
        ck_assert_str_eq(jobctl_signal_name(200, buf, sizeof(buf)), "signal 200");
        fixture_done(&f);
}
END_TEST

Suite *jobs_signal_suite(void) {
        Suite *s = suite_create("jobs-signal");
        TCase *tc = tcase_create("jobs-signal");

        tcase_add_test(tc, test_signal_own_processes);
        tcase_add_test(tc, test_signal_root);
        tcase_add_test(tc, test_foreign);
        tcase_add_test(tc, test_frozen_and_names);
        suite_add_tcase(s, tc);
        return s;
}
