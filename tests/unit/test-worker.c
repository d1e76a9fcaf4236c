/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worker thread: what it finished while the loop no longer ran is freed with it (LeakSanitizer checks);
 * a file descriptor handed to it is closed there, and the loop hears of it. */
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
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", NULL, false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, on_done, &done, &w), 0);
        /* Writes that fail (no such cgroup) at once: their results wait in the pipe for a loop that never runs. */
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(worker_write(w, "no/such/cgroup", "memory.high", "1", 0), 0);
        ck_assert_int_eq(worker_release(w, 1, "no/such/slot"), 0);
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
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", NULL, false, &engine), 0);
        ck_assert_int_eq(worker_new(event, engine, on_closed, &c, &w), 0);
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(worker_close(w, p[0]), 0);
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

Suite *worker_suite(void) {
        Suite *s = suite_create("worker");
        TCase *tc = tcase_create("free");

        tcase_add_test(tc, test_worker_free_with_results_unread);
        tcase_add_test(tc, test_worker_close);
        suite_add_tcase(s, tc);
        return s;
}
