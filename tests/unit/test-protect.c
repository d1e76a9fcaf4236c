/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * protect.c against a fake backend that protects units: an entry whose unit
 * does not run yet is applied again when systemd reports an event of that
 * unit, and only then (not for other units, not once it is in force); an
 * entry's result is logged when it changes, not at every apply.
 */
#include "action-log.h"
#include "cgroup.h"
#include "common.h"
#include "protect.h"

struct fake {
        struct backend b;
        unsigned applies;
        bool running; /* does pw-late.service run (have a cgroup) now? */
        void (*listener)(void *userdata, const char *unit);
        void *listener_userdata;
        unsigned listeners;
};

static int fake_protect_set(struct backend *b, const struct backend_protect *req, size_t n,
                            struct cgroup_protect_result *res) {
        struct fake *f = (struct fake *) b;

        f->applies++;
        for (size_t i = 0; res && i < n; i++)
                res[i] = (struct cgroup_protect_result){ .error = f->running ? 0 : -ENOENT, .min = req[i].min };
        return 0;
}

static int fake_units_watch(struct backend *b, void (*fn)(void *userdata, const char *unit), void *userdata) {
        struct fake *f = (struct fake *) b;

        f->listener = fn;
        f->listener_userdata = userdata;
        f->listeners++;
        return 0;
}

static const struct backend_ops fake_ops = {
        .name = "fake",
        .caps = { .protects_units = true },
        .protect_set = fake_protect_set,
        .units_watch = fake_units_watch,
};

/* Runs the loop until nothing is pending. */
static void settle(sd_event *e) {
        for (int i = 0; i < 10; i++)
                ck_assert_int_ge(sd_event_run(e, 0), 0);
}

START_TEST(test_protect_unit_started_later) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct pw_protect entry = { .name = (char *) "late",
                                    .unit = (char *) "pw-late.service",
                                    .min = { .mode = PW_PROTECT_BYTES, .bytes = 64 << 20 } };
        struct pw_policy policy = { .protects = &entry, .n_protects = 1 };
        struct action_log log = {};
        struct fake f = { .b.ops = &fake_ops };
        struct protect p;
        char *dir = tmpdir_new();

        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &f.b.engine), 0);
        protect_init(&p, event, &f.b, &log);

        ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_uint_eq(f.applies, 1);
        ck_assert_uint_eq(f.listeners, 1); /* it waits for the unit */
        ck_assert_ptr_nonnull(f.listener);

        /* Events of other units change nothing. */
        f.listener(f.listener_userdata, "other.service");
        settle(event);
        ck_assert_uint_eq(f.applies, 1);

        /* The unit starts: systemd sends UnitNew, JobRemoved, PropertiesChanged; applied once. */
        f.running = true;
        f.listener(f.listener_userdata, "pw-late.service");
        f.listener(f.listener_userdata, "pw-late.service");
        f.listener(f.listener_userdata, "pw-late.service");
        settle(event);
        ck_assert_uint_eq(f.applies, 2);

        /* In force: its own events (our writes make PropertiesChanged) do not apply again. */
        f.listener(f.listener_userdata, "pw-late.service");
        settle(event);
        ck_assert_uint_eq(f.applies, 2);

        /* Another apply (a reload) while it does not run: it waits again, with the same listener. */
        f.running = false;
        ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_uint_eq(f.applies, 3);
        f.listener(f.listener_userdata, "pw-late.service");
        settle(event);
        ck_assert_uint_eq(f.applies, 4);
        ck_assert_uint_eq(f.listeners, 1);

        protect_done(&p);
        action_log_done(&log);
        cgroup_engine_free(f.b.engine);
        tmpdir_cleanup(dir);
}
END_TEST

/* The actions recorded so far whose message contains needle. */
static unsigned count_logged(const struct action_log *l, const char *needle) {
        unsigned n = 0;

        for (unsigned i = 0; i < l->n && i < ACTION_LOG_SIZE; i++)
                if (l->ring[i].message && strstr(l->ring[i].message, needle))
                        n++;
        return n;
}

START_TEST(test_protect_logged_when_changed) {
        struct pw_protect entry = { .name = (char *) "late",
                                    .unit = (char *) "pw-late.service",
                                    .min = { .mode = PW_PROTECT_BYTES, .bytes = 64 << 20 } };
        struct pw_protect other = { .name = (char *) "other", .unit = (char *) "pw-other.service" };
        struct pw_protect both[] = { entry, other };
        struct pw_policy policy = { .protects = &entry, .n_protects = 1 };
        struct pw_policy policy2 = { .protects = both, .n_protects = 2 };
        struct action_log log = {};
        struct fake f = { .b.ops = &fake_ops };
        struct protect p;
        char *dir = tmpdir_new();

        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &f.b.engine), 0);
        protect_init(&p, NULL, &f.b, &log);

        /* Nine applies (reloads, jobs starting) while the unit does not run: one warning. */
        for (int i = 0; i < 9; i++)
                ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_uint_eq(f.applies, 9);
        ck_assert_uint_eq(count_logged(&log, "does not exist"), 1);

        /* It runs: said once. */
        f.running = true;
        ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_uint_eq(count_logged(&log, "late: pw-late.service is protected now (memory.min 64 MiB"), 1);

        /* Gone again: warned again; an entry new to the policy is warned of on its own. */
        f.running = false;
        ck_assert_int_eq(protect_apply(&p, &policy2), 0);
        ck_assert_int_eq(protect_apply(&p, &policy2), 0);
        ck_assert_uint_eq(count_logged(&log, "late: pw-late.service does not exist"), 2);
        ck_assert_uint_eq(count_logged(&log, "other: pw-other.service does not exist"), 1);

        /* An entry that left the policy and comes back is warned of again. */
        ck_assert_int_eq(protect_apply(&p, &policy), 0);
        ck_assert_int_eq(protect_apply(&p, &policy2), 0);
        ck_assert_uint_eq(count_logged(&log, "other: pw-other.service does not exist"), 2);
        ck_assert_uint_eq(count_logged(&log, "late: pw-late.service does not exist"), 2);

        protect_done(&p);
        action_log_done(&log);
        cgroup_engine_free(f.b.engine);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *protect_suite(void) {
        Suite *s = suite_create("protect");
        TCase *tc = tcase_create("units");

        tcase_add_test(tc, test_protect_unit_started_later);
        tcase_add_test(tc, test_protect_logged_when_changed);
        suite_add_tcase(s, tc);
        return s;
}
