/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop's timing of its dispatches: what is slow, what is the longest, what is logged. */
#include <time.h>

#include "common.h"
#include "loop.h"

START_TEST(test_loop_stats) {
        struct loop_stats s = {};

        ck_assert(!loop_stats_add(&s, 300, 1000));
        ck_assert_uint_eq(s.longest_usec, 300);
        ck_assert_uint_eq(s.longest_at_usec, 1000);
        ck_assert(!loop_stats_add(&s, 100, 2000)); /* shorter: the longest stays */
        ck_assert_uint_eq(s.longest_usec, 300);
        ck_assert_uint_eq(s.longest_at_usec, 1000);
        ck_assert_uint_eq(s.slow, 0);
        ck_assert(!loop_stats_add(&s, LOOP_SLOW_USEC, 3000)); /* not longer than the bound: not slow */
        ck_assert_uint_eq(s.slow, 0);
        ck_assert(!loop_stats_add(&s, LOOP_SLOW_USEC + 1, 4000));
        ck_assert_uint_eq(s.slow, 1);
        ck_assert(loop_stats_add(&s, LOOP_LOG_USEC + 1, 5000));  /* a new longest worth a line */
        ck_assert(!loop_stats_add(&s, LOOP_LOG_USEC + 1, 6000)); /* as long again: said already */
        ck_assert(loop_stats_add(&s, 2 * LOOP_LOG_USEC, 7000));
        ck_assert_uint_eq(s.dispatches, 7);
        ck_assert_uint_eq(s.slow, 4);
        ck_assert_uint_eq(s.longest_usec, 2 * LOOP_LOG_USEC);
        ck_assert_uint_eq(s.longest_at_usec, 7000);
}
END_TEST

static int busy_then_exit(sd_event_source *src, uint64_t usec, void *userdata) {
        nanosleep(&(struct timespec){ .tv_nsec = 30 * 1000 * 1000 }, NULL);
        return sd_event_exit(sd_event_source_get_event(src), 7);
}

static int quick(sd_event_source *src, void *userdata) {
        (*(int *) userdata)++;
        return 0;
}

START_TEST(test_loop_run) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct loop_stats s = {};
        int n = 0;

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_ge(sd_event_add_defer(event, NULL, quick, &n), 0);
        ck_assert_int_ge(sd_event_add_time_relative(event, NULL, CLOCK_MONOTONIC, 10 * 1000, 0, busy_then_exit, NULL),
                         0);
        /* The loop's exit code, as sd_event_loop's; the 30 ms handler is a slow dispatch and the longest (on a
         * loaded machine a preempted quick one may be slow too: at least one, at most every dispatch). */
        ck_assert_int_eq(loop_run(event, &s), 7);
        ck_assert_int_ge(n, 1);
        ck_assert_uint_ge(s.dispatches, 2);
        ck_assert_uint_ge(s.slow, 1);
        ck_assert_uint_le(s.slow, s.dispatches);
        ck_assert_uint_ge(s.longest_usec, 30 * 1000);
        ck_assert_uint_gt(s.longest_at_usec, 0);
        ck_assert_int_eq(sd_event_get_state(event), SD_EVENT_FINISHED);
}
END_TEST

Suite *loop_suite(void) {
        Suite *s = suite_create("loop");
        TCase *tc = tcase_create("timing");

        tcase_add_test(tc, test_loop_stats);
        tcase_add_test(tc, test_loop_run);
        suite_add_tcase(s, tc);
        return s;
}
