/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job registry (jobs.c, jobs-place.c, jobs-report.c) on a fake cgroup
 * tree: a unit's job survives the moment its cgroup is empty between two of
 * its commands (ExecStart= done, ExecStartPost= not yet forked), and ends
 * when the cgroup stays empty or is removed; a placement by a backend that
 * takes its time (systemd) does not hold the caller, and one that does not
 * (cgroupfs) still answers on the next turn.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "action-log.h"
#include "cgroup.h"
#include "common.h"
#include "jobs.h"
#include "proc.h"
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
        const char *report;
        char *dir = tmpdir_new();
        char *events = write_file(dir, "system.slice/backup.service/cgroup.events", "populated 1\nfrozen 0\n");

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &b.engine), 0);
        jobs_init(&js, event, &b, &log, on_changed, &seen, NULL);
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
        /* Its cgroup has no memory, io or pressure files here (a unit without those controllers): its report
         * says what was not measured rather than 0 B. */
        report = NULL;
        for (unsigned i = 0; i < log.n && i < ACTION_LOG_SIZE; i++)
                if (strstr(log.ring[i].message, "Job 1 (backup) of class backup: exited after"))
                        report = log.ring[i].message;
        ck_assert_ptr_nonnull(report);
        ck_assert_ptr_nonnull(strstr(report, "s; not measured: peak memory, I/O, memory.high events, stalls"));
        ck_assert_ptr_null(strstr(report, " 0 B"));
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

        /* Empty, then removed by systemd before the gap passed: the report has the counters read when it was
         * first seen empty (systemd logs the same unit's "read 2.5G, written 2.5G"; it used to say nothing). */
        free(write_file(dir, "system.slice/third.service/cgroup.events", "populated 1\nfrozen 0\n"));
        free(write_file(dir, "system.slice/third.service/io.stat", "8:0 rbytes=1000 wbytes=2000 rios=1 wios=1\n"));
        ck_assert_int_eq(jobs_add_unit(&js, &class, "third.service", "system.slice/third.service", "", &j), 0);
        run_for(event, 50);
        free(write_file(dir, "system.slice/third.service/io.stat", "8:0 rbytes=1000 wbytes=3147728 rios=1 wios=9\n"));
        free(write_file(dir, "system.slice/third.service/cgroup.events", "populated 0\nfrozen 0\n"));
        run_for(event, 100);
        ck_assert_uint_eq(seen.ended, 2); /* between two commands, perhaps */
        free(events);
        events = path_join(dir, "system.slice/third.service/cgroup.events");
        ck_assert_int_eq(unlink(events), 0);
        run_for(event, 100);
        ck_assert_uint_eq(seen.ended, 3);
        report = NULL;
        for (unsigned i = 0; i < log.n && i < ACTION_LOG_SIZE; i++)
                if (strstr(log.ring[i].message, "Job 3 (third) of class backup: ended after"))
                        report = log.ring[i].message;
        ck_assert_msg(report && strstr(report, "read 0 B, wrote 3 MiB; not measured: peak memory") &&
                              strstr(report, "(as read 0 s before its end: systemd removed its cgroup first)"),
                      "%s", strempty(report));

        /* Removed before the daemon saw it empty (systemd is quicker, often): its figures as last read, every
         * JOBS_UNIT_SAMPLE_USEC (5 s) while it ran. */
        free(write_file(dir, "system.slice/fourth.service/cgroup.events", "populated 1\nfrozen 0\n"));
        free(write_file(dir, "system.slice/fourth.service/io.stat", "8:0 rbytes=0 wbytes=0\n"));
        ck_assert_int_eq(jobs_add_unit(&js, &class, "fourth.service", "system.slice/fourth.service", "", &j), 0);
        free(write_file(dir, "system.slice/fourth.service/io.stat", "8:0 rbytes=0 wbytes=5242880\n"));
        run_for(event, 5300);
        free(write_file(dir, "system.slice/fourth.service/io.stat", "8:0 rbytes=0 wbytes=10485760\n"));
        free(events);
        events = path_join(dir, "system.slice/fourth.service/cgroup.events");
        ck_assert_int_eq(unlink(events), 0);
        run_for(event, 100);
        ck_assert_uint_eq(seen.ended, 4);
        report = NULL;
        for (unsigned i = 0; i < log.n && i < ACTION_LOG_SIZE; i++)
                if (strstr(log.ring[i].message, "Job 4 (fourth) of class backup: ended after"))
                        report = log.ring[i].message;
        ck_assert_msg(report && strstr(report, "wrote 5 MiB"), "%s", strempty(report));

        jobs_done(&js);
        action_log_done(&log);
        cgroup_engine_free(b.engine);
        free(events);
        tmpdir_cleanup(dir);
}
END_TEST

/* A backend whose placements end when the test says (systemd answering late). */
struct slow {
        struct backend b;
        backend_placed_fn done;
        void *done_userdata;
        unsigned started, cancelled;
        struct pw_job_limits limits; /* of the last placement */
};

static int slow_place_async(struct backend *b, const char *class, const struct pw_job_limits *limits,
                            const struct cgroup_job_label *label, pid_t pid, backend_placed_fn done, void *userdata,
                            struct backend_placing **ret) {
        struct slow *s = (struct slow *) b;

        s->started++;
        s->limits = *limits;
        s->done = done;
        s->done_userdata = userdata;
        *ret = (struct backend_placing *) s; /* any handle */
        return 0;
}

static void slow_place_cancel(struct backend *b, struct backend_placing *p) {
        ((struct slow *) b)->cancelled++;
}

static const struct backend_ops slow_ops = { .name = "slow",
                                             .job_place_async = slow_place_async,
                                             .job_place_cancel = slow_place_cancel };

struct answer {
        unsigned calls;
        int r;
        uint64_t id;
};

static void on_placed(void *userdata, int r, struct job *j) {
        struct answer *a = userdata;

        a->calls++;
        a->r = r;
        a->id = j ? j->id : 0;
}

START_TEST(test_jobs_place_async) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct pw_job_class class = { .name = (char *) "backup", .per_job = { 1, 2, 3 } };
        struct pw_job_limits own = { 10, 20, 30 };
        struct slow s = { .b.ops = &slow_ops };
        struct action_log log = {};
        struct seen seen = {};
        struct answer first = {}, second = {}, third = {};
        struct jobs js;
        char *dir = tmpdir_new();

        free(write_file(dir, "pagewarden/backup/1/cgroup.events", "populated 1\nfrozen 0\n"));
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden", false, &s.b.engine), 0);
        jobs_init(&js, event, &s.b, &log, on_changed, &seen, NULL);

        /* Asked: nothing yet, the caller is not held, the process is known to be under way. */
        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4242, -1, on_placed, &first), 0);
        ck_assert_uint_eq(s.started, 1);
        ck_assert_uint_eq(s.limits.memory_max, 2); /* the class's per-job limits */
        run_for(event, 20);
        ck_assert_uint_eq(first.calls, 0);
        ck_assert_uint_eq(js.n, 0);
        ck_assert(jobs_placing(&js, 4242));
        ck_assert(!jobs_placing(&js, 4243));

        /* The backend is done: the job is there, the caller hears it once. */
        s.done(s.done_userdata, 0, "pagewarden/backup/1");
        ck_assert_uint_eq(first.calls, 1);
        ck_assert_int_eq(first.r, 0);
        ck_assert_uint_eq(js.n, 1);
        ck_assert_ptr_nonnull(jobs_find_id(&js, first.id));
        ck_assert(!jobs_placing(&js, 4242));
        ck_assert_uint_eq(seen.started, 1);

        /* A failure: no job, the error to the caller; the next placement has an id of its own. */
        ck_assert_int_eq(jobs_place_async(&js, &class, &own, "dump", 0, "run", 4243, -1, on_placed, &second), 0);
        ck_assert_uint_eq(s.limits.memory_high, 10); /* its own (run --property) */
        ck_assert_uint_eq(s.limits.memory_swap_max, 30);
        s.done(s.done_userdata, -EIO, NULL);
        ck_assert_uint_eq(second.calls, 1);
        ck_assert_int_eq(second.r, -EIO);
        ck_assert_uint_eq(js.n, 1);

        /* A caller that went away is not called; the daemon stopping cancels what is under way. */
        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4244, -1, on_placed, &third), 0);
        jobs_place_forget(&js, &third);
        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4245, -1, on_placed, &second), 0);
        jobs_done(&js);
        ck_assert_uint_eq(s.cancelled, 2);
        ck_assert_uint_eq(third.calls, 0);
        ck_assert_uint_eq(second.calls, 2);
        ck_assert_int_eq(second.r, -ECANCELED);

        action_log_done(&log);
        cgroup_engine_free(s.b.engine);
        tmpdir_cleanup(dir);
}
END_TEST

/* The report's line for job id (NULL: none). */
static const char *report_of(const struct action_log *log, uint64_t id) {
        char head[64];
        const char *found = NULL;

        snprintf(head, sizeof(head), "Job %" PRIu64 " (dump) of class backup: ", id);
        for (unsigned i = 0; i < log->n && i < ACTION_LOG_SIZE; i++)
                if (startswith(log->ring[i].message, head))
                        found = log->ring[i].message;
        return found;
}

/*
 * Jobs in systemd scopes have no io controller: their I/O is counted at their class's cgroup while one of them is
 * alone there.  Two at once: neither is counted (the one that ends while sharing says "not measured"); the one left
 * counts again from the other's end, and says from when; one alone from its start counts all, whether its scope is
 * read empty or gone.
 */
START_TEST(test_jobs_class_io) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct pw_job_class class = { .name = (char *) "backup" };
        struct slow s = { .b.ops = &slow_ops };
        struct action_log log = {};
        struct seen seen = {};
        struct answer a = {}, b = {}, c = {};
        struct jobs js;
        char *dir = tmpdir_new();
        const char *report;
        _cleanup_free_ char *events_a = NULL, *events_b = NULL;

#define SLICE "pagewarden.slice/pagewarden-backup.slice"
        free(write_file(dir, SLICE "/io.stat", "8:0 rbytes=1000 wbytes=1000 rios=1 wios=1\n"));
        events_a = write_file(dir, SLICE "/pagewarden-backup-1.scope/cgroup.events", "populated 1\nfrozen 0\n");
        events_b = write_file(dir, SLICE "/pagewarden-backup-2.scope/cgroup.events", "populated 1\nfrozen 0\n");
        free(write_file(dir, SLICE "/pagewarden-backup-3.scope/cgroup.events", "populated 1\nfrozen 0\n"));
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &s.b.engine), 0);
        jobs_init(&js, event, &s.b, &log, on_changed, &seen, NULL);

        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4242, -1, on_placed, &a), 0);
        s.done(s.done_userdata, 0, SLICE "/pagewarden-backup-1.scope");
        free(write_file(dir, SLICE "/io.stat", "8:0 rbytes=1049576 wbytes=1000 rios=1 wios=1\n"));
        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4243, -1, on_placed, &b), 0);
        s.done(s.done_userdata, 0, SLICE "/pagewarden-backup-2.scope");
        ck_assert_uint_eq(js.n, 2);
        ck_assert_uint_eq(jobs_in_class(&js, "backup"), 2);
        ck_assert_uint_eq(jobs_in_class(&js, "batch"), 0);
        run_for(event, 1100);

        /* The second ends while the first runs: its I/O is not known. */
        ck_assert_int_eq(unlink(events_b), 0);
        run_for(event, 50);
        report = report_of(&log, b.id);
        ck_assert_uint_eq(jobs_in_class(&js, "backup"), 1);
        ck_assert_msg(report && strstr(report,
                                       "not measured: peak memory, I/O (counted at its class, shared with "
                                       "another job), memory.high events, stalls"),
                      "%s", strempty(report));

        /* The first, alone from then on, counts from then: not the 1 MiB read while it was alone before. */
        free(write_file(dir, SLICE "/io.stat", "8:0 rbytes=1049576 wbytes=2098152 rios=1 wios=1\n"));
        ck_assert_int_eq(unlink(events_a), 0);
        run_for(event, 50);
        report = report_of(&log, a.id);
        ck_assert_msg(report && strstr(report, ": ended after ") &&
                              strstr(report,
                                     "read 0 B, wrote 2 MiB (counted at its class, where it ran alone from 1 "
                                     "s after its start); not measured: peak memory, memory.high events"),
                      "%s", strempty(report));

        /* Alone from its start, read empty (its scope still there): all of it. */
        ck_assert_int_eq(jobs_place_async(&js, &class, NULL, "dump", 0, "run", 4244, -1, on_placed, &c), 0);
        s.done(s.done_userdata, 0, SLICE "/pagewarden-backup-3.scope");
        free(write_file(dir, SLICE "/io.stat", "8:0 rbytes=4195304 wbytes=2098152 rios=1 wios=1\n"));
        free(write_file(dir, SLICE "/pagewarden-backup-3.scope/cgroup.events", "populated 0\nfrozen 0\n"));
        run_for(event, 50);
        report = report_of(&log, c.id);
        ck_assert_msg(report && strstr(report, ": exited after ") &&
                              strstr(report, "read 3 MiB, wrote 0 B (counted at its class, where it ran alone);"),
                      "%s", strempty(report));
        ck_assert_uint_eq(js.n, 0);
        ck_assert_uint_eq(jobs_in_class(&js, "backup"), 0);
        ck_assert_uint_eq(js.n_counts, 0);
#undef SLICE

        jobs_done(&js);
        action_log_done(&log);
        cgroup_engine_free(s.b.engine);
        tmpdir_cleanup(dir);
}
END_TEST

static char moved_back[64];

static int record_move_back(struct jobs *js, const char *cgroup, pid_t pid) {
        snprintf(moved_back, sizeof(moved_back), "%d -> %s", (int) pid, cgroup);
        return 0;
}

/*
 * Finding 5 of the security review: pids are written as numbers.  The
 * process checked ended before the write and another took its pid (a fake
 * /proc says who): the write moved that one into the job, so it goes back
 * to its parent's cgroup; one born of the job stays; a pidfd whose process
 * lives needs nothing.
 */
START_TEST(test_jobs_recheck) {
        struct backend b = { .ops = &fake_ops };
        struct action_log log = {};
        struct jobs js;
        char *dir = tmpdir_new();
        int dead = dead_pidfd(), alive = proc_pidfd_open(getpid());

        /* 777 (uid 1000, parent 776 in a jail) sits in the job: the write took it. */
        free(write_file(dir, "777/status", "Name:\tx\nTgid:\t777\nPPid:\t776\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "777/stat", "777 (x) S 776 777 777 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 50 1 1\n"));
        free(write_file(dir, "777/cgroup", "0::/pagewarden.slice/backup/slot-1\n"));
        free(write_file(dir, "776/status", "Name:\tx\nTgid:\t776\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "776/stat", "776 (x) S 1 776 776 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 40 1 1\n"));
        free(write_file(dir, "776/cgroup", "0::/jail\n"));
        /* 778 was born of the job (its parent 779 is in it). */
        free(write_file(dir, "778/status", "Name:\tx\nTgid:\t778\nPPid:\t779\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "778/stat", "778 (x) S 779 778 778 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 50 1 1\n"));
        free(write_file(dir, "778/cgroup", "0::/pagewarden.slice/backup/slot-1\n"));
        free(write_file(dir, "779/status", "Name:\tx\nTgid:\t779\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"));
        free(write_file(dir, "779/stat", "779 (x) S 1 779 779 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 40 1 1\n"));
        free(write_file(dir, "779/cgroup", "0::/pagewarden.slice/backup/slot-1\n"));

        jobs_init(&js, NULL, &b, &log, NULL, NULL, NULL);
        js.procdir = dir;
        js.move_back = record_move_back;
        ck_assert(!jobs_recheck(&js, "pagewarden.slice/backup/slot-1", 777, alive, 100));
        ck_assert(!jobs_recheck(&js, "pagewarden.slice/backup/slot-1", 777, dead, 10)); /* born after it */
        ck_assert_str_eq(moved_back, "");
        ck_assert(jobs_recheck(&js, "/pagewarden.slice/backup/slot-1", 777, dead, 100));
        ck_assert_str_eq(moved_back, "777 -> jail");
        ck_assert_uint_eq(log.n, 1);
        moved_back[0] = '\0';
        ck_assert(jobs_recheck(&js, "pagewarden.slice/backup/slot-1", 778, dead, 100));
        ck_assert_str_eq(moved_back, "");                                                /* left where it was born */
        ck_assert(!jobs_recheck(&js, "pagewarden.slice/backup/slot-1", 780, dead, 100)); /* nobody */
        /* Below the path counts (a job's own subgroups); a name that only starts alike does not. */
        ck_assert(!jobs_recheck(&js, "pagewarden.slice/backup/slot", 777, dead, 100));
        ck_assert_str_eq(moved_back, "");
        ck_assert(jobs_recheck(&js, "pagewarden.slice/backup", 777, dead, 100));
        ck_assert_str_eq(moved_back, "777 -> jail");

        close(dead);
        close(alive);
        action_log_done(&log);
        tmpdir_cleanup(dir);
}
END_TEST

/* A job's own figures: a systemd scope without limits has no memory (nor io) controller, so its memory is unknown,
 * not 0, while its processes still count; a memory cgroup has all of them. */
START_TEST(test_jobs_read_scope) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        struct cgroup_job_state s;
        char *dir = tmpdir_new();
        const char *scope = "pagewarden.slice/pagewarden-backup.slice/pagewarden-backup-3.scope";
        _cleanup_free_ char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/cgroup.events", scope), 0);
        free(write_file(dir, p, "populated 1\nfrozen 0\n"));
        free(p);
        ck_assert_int_ge(asprintf(&p, "%s/cgroup.procs", scope), 0);
        free(write_file(dir, p, "12\n34\n"));
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);
        ck_assert_int_eq(cgroup_job_read(e, scope, &s), 0);
        ck_assert_uint_eq(s.n_procs, 2);
        ck_assert(!s.have_memory);
        ck_assert(!s.have_io);

        free(p);
        ck_assert_int_ge(asprintf(&p, "%s/memory.current", scope), 0);
        free(write_file(dir, p, "4096\n"));
        free(p);
        ck_assert_int_ge(asprintf(&p, "%s/memory.stat", scope), 0);
        free(write_file(dir, p, "anon 0\nfile 1024\n"));
        ck_assert_int_eq(cgroup_job_read(e, scope, &s), 0);
        ck_assert(s.have_memory);
        ck_assert_uint_eq(s.memory_current, 4096);
        ck_assert_uint_eq(s.memory_file, 1024);
        ck_assert_uint_eq(s.memory_high, UNITS_MAX); /* no file: no limit of its own */
        /* Gone (its processes cannot be read): an error, and status says null */
        ck_assert_int_eq(cgroup_job_read(e, "pagewarden.slice/gone.scope", &s), -ENOENT);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *jobs_suite(void) {
        Suite *s = suite_create("jobs");
        TCase *tc = tcase_create("units");

        tcase_set_timeout(tc, 20);
        tcase_add_test(tc, test_jobs_unit_between_commands);
        tcase_add_test(tc, test_jobs_place_async);
        tcase_add_test(tc, test_jobs_recheck);
        tcase_add_test(tc, test_jobs_read_scope);
        tcase_add_test(tc, test_jobs_class_io);
        suite_add_tcase(s, tc);
        return s;
}
