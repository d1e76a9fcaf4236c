/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs.c on a fake cgroup tree: a unit's job survives the moment its cgroup
 * is empty between two of its commands (ExecStart= done, ExecStartPost= not
 * yet forked), and ends when the cgroup stays empty or is removed.
 */
#include <unistd.h>

#include "actions.h"
#include "cgroup.h"
#include "common.h"
#include "jobs.h"
#include "util.h"

struct seen {
        unsigned started, ended;
};

static void on_changed(void *userdata, const char *class, bool ended) {
        struct seen *s = userdata;

        ck_assert_str_eq(class, "backup");
        if (ended)
                s->ended++;
        else
                s->started++;
}

static const struct backend_ops fake_ops = { .name = "fake" }; /* systemd's: it removes what it made */

/* Runs the loop for about ms milliseconds. */
static void run_for(sd_event *e, unsigned ms) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + (uint64_t) ms * 1000;

        while (now_usec(CLOCK_MONOTONIC) < end)
                ck_assert_int_ge(sd_event_run(e, 20 * 1000), 0);
}

START_TEST(test_jobs_unit_between_commands) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct pw_job_class class = { .name = (char *) "backup" };
        struct backend b = { .ops = &fake_ops };
        struct action_log log = {};
        struct seen seen = {};
        struct jobs js;
        struct job *j = NULL;
        char *dir = tmpdir_new();
        char *events = write_file(dir, "system.slice/backup.service/cgroup.events", "populated 1\nfrozen 0\n");

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", NULL, false, &b.engine), 0);
        jobs_init(&js, event, &b, &log, on_changed, &seen);
        ck_assert_int_eq(jobs_add_unit(&js, &class, "backup.service", "system.slice/backup.service",
                                       "rule units backup.service (jobs.yaml:4)", &j),
                         0);
        ck_assert_ptr_nonnull(j);
        run_for(event, 50);
        ck_assert_uint_eq(seen.started, 1);

        /* Empty for 200 ms, then ExecStartPost= runs in it: the same job goes on. */
        free(write_file(dir, "system.slice/backup.service/cgroup.events", "populated 0\nfrozen 0\n"));
        run_for(event, 200);
        free(write_file(dir, "system.slice/backup.service/cgroup.events", "populated 1\nfrozen 0\n"));
        run_for(event, 1300);
        ck_assert_uint_eq(seen.ended, 0);
        ck_assert_ptr_eq(jobs_find_unit(&js, "backup.service"), j);

        /* Empty for good: it ends about a second later, not at once. */
        free(write_file(dir, "system.slice/backup.service/cgroup.events", "populated 0\nfrozen 0\n"));
        run_for(event, 300);
        ck_assert_uint_eq(seen.ended, 0);
        run_for(event, 1200);
        ck_assert_uint_eq(seen.ended, 1);
        ck_assert_ptr_null(jobs_find_unit(&js, "backup.service"));
        ck_assert_uint_eq(js.n, 0);

        /* Removed by systemd (the unit stopped): that is its end at once. */
        free(write_file(dir, "system.slice/other.service/cgroup.events", "populated 1\nfrozen 0\n"));
        ck_assert_int_eq(jobs_add_unit(&js, &class, "other.service", "system.slice/other.service", "", &j), 0);
        run_for(event, 50);
        ck_assert_uint_eq(seen.started, 2);
        free(events);
        events = path_join(dir, "system.slice/other.service/cgroup.events");
        ck_assert_int_eq(unlink(events), 0);
        run_for(event, 100);
        ck_assert_uint_eq(seen.ended, 2);

        jobs_done(&js);
        action_log_done(&log);
        cgroup_engine_free(b.engine);
        free(events);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *jobs_suite(void) {
        Suite *s = suite_create("jobs");
        TCase *tc = tcase_create("units");

        tcase_set_timeout(tc, 20);
        tcase_add_test(tc, test_jobs_unit_between_commands);
        suite_add_tcase(s, tc);
        return s;
}
