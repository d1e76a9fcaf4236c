/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worker thread: what it finished while the loop no longer ran is freed with it (LeakSanitizer checks). */
#include <time.h>

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

Suite *worker_suite(void) {
        Suite *s = suite_create("worker");
        TCase *tc = tcase_create("free");

        tcase_add_test(tc, test_worker_free_with_results_unread);
        suite_add_tcase(s, tc);
        return s;
}
