/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worker thread: what it finished while the loop no longer ran is freed with it (LeakSanitizer checks);
 * a file descriptor handed to it is closed there, and the loop hears of it; each task's own callback hears of
 * that task, in order. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "common.h"
#include "worker.h"

static void on_done(void *userdata, const struct worker_task *t) {
        (*(int *) userdata)++;
}

START_TEST(test_worker_free_with_results_unread) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct cgroup_engine *engine = NULL;
        struct worker *w = NULL;
        char *dir = tmpdir_new();
        int done = 0;

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, &w), 0);
        /* Writes that fail (no such cgroup) at once: their results wait in the pipe for a loop that never runs. */
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(worker_write(w, "no/such/cgroup", "memory.high", "1", 0, on_done, &done), 0);
        ck_assert_int_eq(worker_release(w, 1, "no/such/slot", on_done, &done), 0);
        nanosleep(&(struct timespec){ .tv_nsec = 300 * 1000 * 1000 }, NULL);
        w = worker_free(w);
        ck_assert_ptr_null(w);
        ck_assert_int_eq(done, 0); /* nobody is told after the loop stopped */
        cgroup_engine_free(engine);
        tmpdir_cleanup(dir);
}
END_TEST

struct closed {
        int n, r;
        enum worker_kind kind;
};

static void on_closed(void *userdata, const struct worker_task *t) {
        struct closed *c = userdata;

        c->n++;
        c->r = t->r;
        c->kind = t->kind;
}

START_TEST(test_worker_close) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct cgroup_engine *engine = NULL;
        struct worker *w = NULL;
        struct closed c = {};
        char *dir = tmpdir_new();
        int p[2];

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, &w), 0);
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(worker_close(w, p[0], on_closed, &c), 0);
        for (int i = 0; i < 100 && c.n == 0; i++)
                ck_assert_int_ge(sd_event_run(event, 20 * 1000), 0);
        ck_assert_int_eq(c.n, 1);
        ck_assert_int_eq(c.kind, WORKER_CLOSE);
        ck_assert_int_eq(c.r, 0);
        /* The read end is closed: a write finds no reader. */
        signal(SIGPIPE, SIG_IGN);
        ck_assert_int_eq(write(p[1], "x", 1), -1);
        ck_assert_int_eq(errno, EPIPE);
        close(p[1]);
        w = worker_free(w);
        cgroup_engine_free(engine);
        tmpdir_cleanup(dir);
}
END_TEST

/* Who heard of which task, in order. */
struct heard {
        char log[8][48];
        int n;
};

static void heard(struct heard *h, const char *who, const struct worker_task *t) {
        if (h->n < 8)
                snprintf(h->log[h->n++], sizeof(h->log[0]), "%s %s %s", who,
                         t->kind == WORKER_RELEASE ? "release" : t->file, t->r < 0 ? "failed" : "done");
}
static void on_first(void *userdata, const struct worker_task *t) {
        heard(userdata, "first", t);
}
static void on_second(void *userdata, const struct worker_task *t) {
        heard(userdata, "second", t);
}

START_TEST(test_worker_each_task_its_callback) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct cgroup_engine *engine = NULL;
        struct worker *w = NULL;
        struct heard a = {}, b = {};
        char *dir = tmpdir_new();

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, &w), 0);
        ck_assert_int_eq(worker_write(w, "no/such/cgroup", "memory.max", "1", 0, on_first, &a), 0);
        ck_assert_int_eq(worker_write(w, "no/such/cgroup", "memory.high", "1", 0, NULL, NULL), 0); /* nobody asks */
        ck_assert_int_eq(worker_release(w, 7, "no/such/slot", on_second, &b), 0);
        ck_assert_int_eq(worker_write(w, "no/such/cgroup", "memory.high", "2", 0, on_first, &a), 0);
        for (int i = 0; i < 100 && (a.n < 2 || b.n < 1); i++)
                ck_assert_int_ge(sd_event_run(event, 20 * 1000), 0);
        ck_assert_int_eq(a.n, 2);
        ck_assert_str_eq(a.log[0], "first memory.max failed"); /* no such cgroup */
        ck_assert_str_eq(a.log[1], "first memory.high failed");
        ck_assert_int_eq(b.n, 1);
        ck_assert_str_eq(b.log[0], "second release failed");
        w = worker_free(w);
        cgroup_engine_free(engine);
        tmpdir_cleanup(dir);
}
END_TEST

struct attached {
        int n, r;
        size_t moved;
};

static void on_attached(void *userdata, const struct worker_task *t) {
        struct attached *a = userdata;

        a->n++;
        a->r = t->r;
        a->moved = t->moved;
}

/* Pids written into a job's cgroup.procs on the thread (each write waits for an RCU grace period in the kernel),
 * in order, each task to its own callback with what it moved; a cgroup that is not there is its error, not "no
 * such process".  (A write that moves needs a kernel: here the engine's mount is a directory with no such cgroup;
 * the VM scenarios move.) */
START_TEST(test_worker_attach) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct cgroup_engine *engine = NULL;
        struct worker *w = NULL;
        struct attached first = {}, second = {};
        const pid_t pids[] = { 4242, 4243 };
        char *dir = tmpdir_new();

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, &w), 0);
        ck_assert_int_eq(worker_attach(w, "pagewarden.slice/no-such/slot-1", pids, 2, on_attached, &first), 0);
        ck_assert_int_eq(worker_attach(w, "pagewarden.slice/no-such/slot-2", pids, 1, on_attached, &second), 0);
        for (int i = 0; i < 100 && (first.n == 0 || second.n == 0); i++)
                ck_assert_int_ge(sd_event_run(event, 20 * 1000), 0);
        ck_assert_int_eq(first.n, 1);
        ck_assert_uint_eq(first.moved, 0);
        ck_assert_int_lt(first.r, 0);
        ck_assert_int_ne(first.r, -ESRCH);
        ck_assert_int_eq(second.n, 1);
        ck_assert_int_eq(second.r, first.r);
        w = worker_free(w);
        cgroup_engine_free(engine);
        tmpdir_cleanup(dir);
}
END_TEST

struct armed {
        int n, r, fd;
        uint64_t token;
};

static void on_armed(void *userdata, const struct worker_task *t) {
        struct armed *a = userdata;

        a->n++;
        a->r = t->r;
        a->fd = t->fd; /* the callback's */
        a->token = t->token;
}

static unsigned open_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        ck_assert_ptr_nonnull(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* A PSI trigger armed on the thread (the first on a cgroup waits for the kernel to start its thread): the callback
 * gets the trigger and its token, or the error and no descriptor; one nobody took is closed. */
START_TEST(test_worker_arm) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct cgroup_engine *engine = NULL;
        struct worker *w = NULL;
        struct armed a = { .fd = -1 }, gone = { .fd = -1 };
        char *dir = tmpdir_new(), *text = NULL, *file;
        unsigned before;

        free(write_file(dir, "apps/db/memory.pressure", ""));
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, &w), 0);
        ck_assert_int_eq(worker_arm(w, "apps/db", "memory", "some 150000 1000000", 7, on_armed, &a), 0);
        ck_assert_int_eq(worker_arm(w, "apps/gone", "io", "some 150000 1000000", 8, on_armed, &gone), 0);
        for (int i = 0; i < 100 && (a.n == 0 || gone.n == 0); i++)
                ck_assert_int_ge(sd_event_run(event, 20 * 1000), 0);
        ck_assert_int_eq(a.n, 1);
        ck_assert_int_eq(a.r, 0);
        ck_assert_int_ge(a.fd, 0);
        ck_assert_uint_eq(a.token, 7);
        ck_assert_int_ge(asprintf(&file, "%s/apps/db/memory.pressure", dir), 0);
        ck_assert_int_eq(read_full_file(file, 4096, &text, NULL), 0);
        ck_assert_str_eq(text, "some 150000 1000000"); /* and its NUL, as the kernel takes it */
        free(text);
        free(file);
        close(a.fd);
        ck_assert_int_eq(gone.n, 1);
        ck_assert_int_eq(gone.r, -ENOENT);
        ck_assert_int_eq(gone.fd, -1);
        ck_assert_uint_eq(gone.token, 8);

        /* Armed, but the loop never hears of it: the worker closes it when it stops. */
        before = open_fds();
        ck_assert_int_eq(worker_arm(w, "apps/db", "memory", "some 150000 1000000", 9, on_armed, &a), 0);
        nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
        ck_assert_uint_eq(open_fds(), before + 1);
        w = worker_free(w);
        ck_assert_uint_eq(a.n, 1);
        ck_assert_uint_eq(open_fds(), before - 2); /* the worker's pipe, and the trigger */
        cgroup_engine_free(engine);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *worker_suite(void) {
        Suite *s = suite_create("worker");
        TCase *tc = tcase_create("free");

        tcase_add_test(tc, test_worker_free_with_results_unread);
        tcase_add_test(tc, test_worker_close);
        tcase_add_test(tc, test_worker_attach);
        tcase_add_test(tc, test_worker_arm);
        tcase_add_test(tc, test_worker_each_task_its_callback);
        suite_add_tcase(s, tc);
        return s;
}
