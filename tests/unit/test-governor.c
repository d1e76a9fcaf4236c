/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The governor driven through traces of readings, checking the actions it returns. */
#include "common.h"
#include "governor.h"
#include "pressure.h"

#define MIB (UINT64_C(1) << 20)
#define SEC UINT64_C(1000000)
#define MS UINT64_C(1000)

struct fixture {
        struct governor g;
        struct governor_class c;
        struct pw_io_limit io;
        struct pw_job_class pc;
        unsigned n_high, n_io, n_freeze, n_thaw, n_up;
};

static void setup(struct fixture *f) {
        struct pw_settings s;

        ck_assert_int_eq(settings_init(&s), 0); /* window 500ms, cooldown 30s, release 1% */
        f->io = (struct pw_io_limit){ .major = 8,
                                      .minor = 0,
                                      .read_bps = UNITS_MAX,
                                      .write_bps = 80 * MIB,
                                      .read_iops = UNITS_MAX,
                                      .write_iops = UNITS_MAX };
        f->pc = (struct pw_job_class){ .name = (char *) "backup",
                                       .memory_high = 512 * MIB,
                                       .memory_max = UNITS_MAX,
                                       .memory_high_floor = 64 * MIB,
                                       .io = &f->io,
                                       .n_io = 1,
                                       .io_floor = 8 * MIB,
                                       .freeze = true,
                                       .freeze_max_usec = 10 * SEC };
        governor_init(&f->g, &s, 1024 * MIB);
        settings_done(&s);
        ck_assert_int_eq(governor_class_init(&f->c, &f->pc), 0);
        f->c.jobs = 1;
        f->c.memory_current = 400 * MIB;
        f->g.classes = &f->c;
        f->g.n_classes = 1;
        f->n_high = f->n_io = f->n_freeze = f->n_thaw = f->n_up = 0;
}

static void fixture_done(struct fixture *f) {
        governor_class_done(&f->c);
}

/* One step, the protected applications having stalled stall_usec and faulted pages since the last; counts the
 * actions and checks the invariants every step must keep. */
static size_t step_harm(struct fixture *f, uint64_t now, bool pressure, double avg10, uint64_t stall_usec,
                        uint64_t pages) {
        struct governor_reading r = { .now_usec = now,
                                      .pressure = pressure,
                                      .why = "test memory.pressure",
                                      .psi_avg10 = avg10,
                                      .stall_usec = stall_usec,
                                      .pages = pages };
        struct governor_action a[GOVERNOR_MAX_ACTIONS];
        uint64_t before = f->c.high, io_before = f->c.io[0].wbps;
        size_t n = governor_step(&f->g, &r, a, ELEMENTSOF(a));

        for (size_t i = 0; i < n; i++) {
                ck_assert_ptr_eq(a[i].class, &f->c);
                ck_assert(a[i].reason[0]);
                switch (a[i].type) {
                case GOV_SET_MEMORY_HIGH:
                        f->n_high++;
                        if (a[i].value > before)
                                f->n_up++;
                        /* The journal's PAGEWARDEN_ACTION= says relax exactly when the limit goes up. */
                        ck_assert_int_eq(a[i].relaxes, a[i].value > before);
                        ck_assert_uint_eq(a[i].value, f->c.high);
                        break;
                case GOV_SET_IO:
                        f->n_io++;
                        ck_assert_int_eq(a[i].relaxes, f->c.io[0].wbps > io_before);
                        break;
                case GOV_FREEZE:
                        f->n_freeze++;
                        ck_assert(!a[i].relaxes);
                        break;
                case GOV_THAW:
                        f->n_thaw++;
                        ck_assert(!a[i].relaxes);
                        break;
                }
        }
        ck_assert_uint_ge(f->c.high, f->c.floor_high);
        ck_assert_uint_le(f->c.high, f->c.configured_high);
        ck_assert_uint_ge(f->c.io[0].wbps, f->c.io_floor);
        ck_assert_uint_le(f->c.io[0].wbps, f->c.io[0].configured_wbps);
        return n;
}

static size_t step(struct fixture *f, uint64_t now, bool pressure, double avg10) {
        return step_harm(f, now, pressure, avg10, 0, 0);
}

/* Steps every 500 ms from from to before to, the same readings each; returns to. */
static uint64_t steps_harm(struct fixture *f, uint64_t from, uint64_t to, bool pressure, double avg10,
                           uint64_t stall_usec, uint64_t pages) {
        for (uint64_t t = from; t < to; t += 500 * MS)
                step_harm(f, t, pressure, avg10, stall_usec, pages);
        return to;
}

START_TEST(test_governor_spike) {
        _cleanup_(fixture_done) struct fixture f = {};

        setup(&f);
        ck_assert(governor_at_rest(&f.g));
        ck_assert_uint_eq(step(&f, 1 * SEC, true, 5.0), 2);
        /* Half of min(limit 512M, usage 400M); io halves. */
        ck_assert_uint_eq(f.c.high, 200 * MIB);
        ck_assert_uint_eq(f.c.io[0].wbps, 40 * MIB);
        ck_assert_uint_eq(f.c.io[0].rbps, UNITS_MAX); /* no read limit configured: none invented */
        ck_assert(strstr(f.c.last_action, "pressure: test memory.pressure"));
        /* Calm, but not yet for the cooldown: nothing moves. */
        for (uint64_t t = 1500 * MS; t < 31 * SEC; t += 500 * MS)
                ck_assert_uint_eq(step(&f, t, false, 0.0), 0);
        /* Then the room comes back step by step, one step per window. */
        for (uint64_t t = 31 * SEC; t < 40 * SEC; t += 500 * MS)
                step(&f, t, false, 0.0);
        ck_assert(governor_at_rest(&f.g));
        ck_assert_uint_eq(f.c.high, 512 * MIB);
        ck_assert_uint_eq(f.c.io[0].wbps, 80 * MIB);
        ck_assert_uint_ge(f.n_up, 2); /* additively: more than one step back */
        ck_assert_uint_eq(f.n_freeze, 0);
}
END_TEST

START_TEST(test_governor_sustained) {
        _cleanup_(fixture_done) struct fixture f = {};
        uint64_t frozen_at = 0, longest = 0;

        setup(&f);
        for (uint64_t t = 1 * SEC; t <= 40 * SEC; t += 250 * MS) {
                bool was = f.c.frozen;

                step(&f, t, true, 30.0);
                if (!was && f.c.frozen)
                        frozen_at = t;
                if (was && !f.c.frozen && t - frozen_at > longest)
                        longest = t - frozen_at;
        }
        /* Down to the floors, then frozen, never longer than freeze_max, frozen again later. */
        ck_assert_uint_eq(f.c.high, 64 * MIB);
        ck_assert_uint_eq(f.c.io[0].wbps, 8 * MIB);
        ck_assert_uint_ge(f.n_freeze, 2);
        ck_assert_uint_ge(f.n_thaw, 1);
        ck_assert_uint_le(longest, 10 * SEC);
        ck_assert_uint_gt(longest, 0);
        ck_assert_uint_eq(f.n_up, 0);
        /* Pressure ends: thaw at once after the cooldown, then back to the configured limits. */
        for (uint64_t t = 41 * SEC; t <= 90 * SEC; t += 500 * MS)
                step(&f, t, false, 0.2);
        ck_assert(!f.c.frozen);
        ck_assert(governor_at_rest(&f.g));
}
END_TEST

/* A signal that comes and goes faster than the window never makes it act faster than the window. */
START_TEST(test_governor_flapping) {
        _cleanup_(fixture_done) struct fixture f = {};
        uint64_t last = 0;
        struct governor_reading r = { .why = "flap" };
        struct governor_action a[GOVERNOR_MAX_ACTIONS];

        setup(&f);
        f.c.freeze_allowed = false;
        f.c.memory_current = 4096 * MIB; /* big: many halvings before the floor */
        f.c.configured_high = f.c.high = UNITS_MAX;
        for (uint64_t t = 1 * SEC; t <= 20 * SEC; t += 100 * MS) {
                size_t n;

                r.now_usec = t;
                r.pressure = (t / (100 * MS)) % 2;
                r.psi_avg10 = r.pressure ? 20.0 : 0.0;
                n = governor_step(&f.g, &r, a, ELEMENTSOF(a));
                if (n) {
                        ck_assert(!last || t - last >= f.g.window_usec);
                        last = t;
                        for (size_t i = 0; i < n; i++)
                                ck_assert_int_ne(a[i].type, GOV_FREEZE);
                }
                /* Never calm for the cooldown: never relaxed. */
                ck_assert(f.c.high == UNITS_MAX || f.c.high <= 2048 * MIB);
        }
        ck_assert_uint_eq(f.c.high, 64 * MIB);
}
END_TEST

START_TEST(test_governor_no_jobs) {
        _cleanup_(fixture_done) struct fixture f = {};

        setup(&f);
        f.c.jobs = 0;
        for (uint64_t t = 1 * SEC; t <= 10 * SEC; t += 500 * MS)
                ck_assert_uint_eq(step(&f, t, true, 50.0), 0);
        ck_assert(governor_at_rest(&f.g));
}
END_TEST

/* Jobs and no protected application: no signal ever, so nothing happens. */
START_TEST(test_governor_no_protection) {
        _cleanup_(fixture_done) struct fixture f = {};

        setup(&f);
        for (uint64_t t = 1 * SEC; t <= 100 * SEC; t += 500 * MS)
                ck_assert_uint_eq(step(&f, t, false, 0.0), 0);
        ck_assert(governor_at_rest(&f.g));
}
END_TEST

/* The avg10 has to fall below the release level before the cooldown even starts. */
START_TEST(test_governor_release_level) {
        _cleanup_(fixture_done) struct fixture f = {};

        setup(&f);
        step(&f, 1 * SEC, true, 10.0);
        for (uint64_t t = 2 * SEC; t <= 60 * SEC; t += 500 * MS)
                ck_assert_uint_eq(step(&f, t, false, 5.0), 0); /* 5% > release 1% */
        ck_assert(!governor_at_rest(&f.g));
        for (uint64_t t = 61 * SEC; t <= 100 * SEC; t += 500 * MS)
                step(&f, t, false, 0.5);
        ck_assert(governor_at_rest(&f.g));
}
END_TEST

/* Freezing waits until every running class is at its floors. */
START_TEST(test_governor_freeze_needs_all_floors) {
        struct governor_class c2;
        _cleanup_(fixture_done) struct fixture f = {};

        setup(&f);
        c2 = f.c;
        snprintf(c2.name, sizeof(c2.name), "copy");
        c2.freeze_allowed = false;
        c2.floor_high = 1 * MIB;
        c2.memory_current = 4096 * MIB;
        c2.configured_high = c2.high = UNITS_MAX;
        {
                struct governor_class both[2] = { f.c, c2 };
                struct governor_reading r = { .pressure = true, .why = "x", .psi_avg10 = 9 };
                struct governor_action a[GOVERNOR_MAX_ACTIONS];

                f.g.classes = both;
                f.g.n_classes = 2;
                for (uint64_t t = 1 * SEC; t <= 5 * SEC; t += 500 * MS) {
                        r.now_usec = t;
                        governor_step(&f.g, &r, a, ELEMENTSOF(a));
                }
                /* backup is at its floors after 4 steps, copy is still above: no freeze yet. */
                ck_assert_uint_eq(both[0].high, 64 * MIB);
                ck_assert_uint_gt(both[1].high, 1 * MIB);
                ck_assert(!both[0].frozen);
                ck_assert_uint_eq(both[0].n_frozen, 0);
        }
}
END_TEST

/* Any number of devices: every one is tightened (the governor once kept 16 and dropped the rest). */
START_TEST(test_governor_many_devices) {
        _cleanup_(fixture_done) struct fixture f = {};
        struct pw_io_limit io[18];

        setup(&f);
        governor_class_done(&f.c);
        for (unsigned i = 0; i < ELEMENTSOF(io); i++)
                io[i] = (struct pw_io_limit){ .major = 8,
                                              .minor = 16 * i,
                                              .read_bps = UNITS_MAX,
                                              .write_bps = 80 * MIB,
                                              .read_iops = UNITS_MAX,
                                              .write_iops = UNITS_MAX };
        f.pc.io = io;
        f.pc.n_io = ELEMENTSOF(io);
        ck_assert_int_eq(governor_class_init(&f.c, &f.pc), 0);
        ck_assert_uint_eq(f.c.n_io, 18);
        f.c.jobs = 1;
        f.c.memory_current = 400 * MIB;
        step(&f, 1 * SEC, true, 5.0);
        for (unsigned i = 0; i < ELEMENTSOF(io); i++) {
                ck_assert_uint_eq(f.c.io[i].minor, 16 * i);
                ck_assert_uint_eq(f.c.io[i].wbps, 40 * MIB);
        }
}
END_TEST

/* An io entry whose device is not there has no io.max: the governor leaves it out. */
START_TEST(test_governor_absent_device) {
        _cleanup_(fixture_done) struct fixture f = {};
        struct pw_io_limit io[2];

        setup(&f);
        governor_class_done(&f.c);
        io[0] = (struct pw_io_limit){ .absent = true, .write_bps = 80 * MIB, .read_bps = UNITS_MAX };
        io[1] = (struct pw_io_limit){ .major = 8, .minor = 16, .write_bps = 80 * MIB, .read_bps = UNITS_MAX };
        f.pc.io = io;
        f.pc.n_io = 2;
        ck_assert_int_eq(governor_class_init(&f.c, &f.pc), 0);
        ck_assert_uint_eq(f.c.n_io, 1);
        ck_assert_uint_eq(f.c.io[0].minor, 16);
}
END_TEST

/* ---- signals and "auto", on recorded counters (tests/unit/data/samples) ---- */

static char *sample_file(const char *sample, const char *file) {
        _cleanup_free_ char *path = NULL;
        char *text = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/tests/unit/data/samples/%s/%s", TOP_SRCDIR, sample, file), 0);
        ck_assert_int_eq(read_full_file(path, 1 << 20, &text, NULL), 0);
        return text;
}

static struct governor_sample sample(const char *name) {
        _cleanup_free_ char *stat = sample_file(name, "memory.stat"), *events = sample_file(name, "memory.events"),
                            *psi = sample_file(name, "memory.pressure"),
                            *swap = sample_file(name, "memory.swap.current"),
                            *current = sample_file(name, "memory.current");
        struct governor_sample s;

        pressure_sample_parse(stat, events, psi, swap, current, &s);
        return s;
}

START_TEST(test_governor_sample_parse) {
        struct governor_sample s = sample("4-swapped");

        ck_assert_uint_eq(s.pgsteal, 5200);
        ck_assert_uint_eq(s.refaults, 950);
        ck_assert_uint_eq(s.majfaults, 200);
        ck_assert_uint_eq(s.swap, 3 * MIB);
        ck_assert_uint_eq(s.low_events, 0);
        ck_assert_uint_eq(s.current, (447 + 180 + 3) * MIB);
        ck_assert(s.some_avg10 > 4.09 && s.some_avg10 < 4.11);
        /* Missing files read as zero. */
        pressure_sample_parse(NULL, NULL, NULL, NULL, NULL, &s);
        ck_assert_uint_eq(s.pgsteal + s.refaults + s.swap + s.current, 0);
}
END_TEST

/* What a job's cost is counted in, from two files of the five (a job's start or end with 180 applications
 * protected read them all). */
START_TEST(test_governor_cost_read) {
        _cleanup_free_ char *mount = NULL;
        struct cgroup_engine *e = NULL;
        struct governor_sample s;

        ck_assert_int_ge(asprintf(&mount, "%s/tests/unit/data/samples", TOP_SRCDIR), 0);
        ck_assert_int_eq(cgroup_engine_new(mount, "pagewarden.slice", false, &e), 0);
        ck_assert_int_eq(pressure_cost_read(e, "4-swapped", &s), 0);
        ck_assert_uint_eq(s.refaults, 950);
        ck_assert_uint_eq(s.majfaults, 200);
        ck_assert(s.some_avg10 > 4.09 && s.some_avg10 < 4.11);
        ck_assert_uint_eq(s.swap + s.current + s.low_events, 0); /* not read */
        ck_assert_int_eq(pressure_cost_read(e, "no-such-cgroup", &s), -ENOENT);
        cgroup_engine_free(e);
}
END_TEST

START_TEST(test_governor_early_signals_on_a_trace) {
        static const struct {
                const char *sample;
                const char *why; /* NULL: no signal */
        } trace[] = {
                { "0-rest", NULL },
                { "1-rest", NULL }, /* normal churn: 12 pages reclaimed, 3 refaulted */
                { "2-reclaimed", "its memory is being reclaimed (pgsteal +5000)" },
                { "3-refaults", "it refaults evicted pages (+900)" },
                { "4-swapped", "memory.swap.current grew by 3072 KiB" },
                { "5-low", "memory.events low +1" },
                { "6-restarted", NULL }, /* a new cgroup: counters went back, no signal */
        };
        struct governor_sample prev = sample(trace[0].sample);

        for (size_t i = 1; i < ELEMENTSOF(trace); i++) {
                struct governor_sample cur = sample(trace[i].sample);
                char why[128] = "";
                bool fired = governor_early_signal(&prev, &cur, why, sizeof(why));

                ck_assert_msg(fired == (trace[i].why != NULL), "%s: fired %d (%s)", trace[i].sample, fired, why);
                if (fired)
                        ck_assert_str_eq(why, trace[i].why);
                prev = cur;
        }
}
END_TEST

START_TEST(test_governor_signal_thresholds) {
        struct governor_sample a = {}, b = {};
        char why[128];

        b.pgsteal = GOVERNOR_SIGNAL_PAGES - 1;
        b.majfaults = GOVERNOR_SIGNAL_PAGES - 1;
        b.swap = GOVERNOR_SIGNAL_SWAP_BYTES - 1;
        ck_assert(!governor_early_signal(&a, &b, why, sizeof(why)));
        b.majfaults = GOVERNOR_SIGNAL_PAGES;
        ck_assert(governor_early_signal(&a, &b, why, sizeof(why)));
        ck_assert_str_eq(why, "major faults +256");
        /* Swap that shrinks is no signal. */
        a = (struct governor_sample){ .swap = 100 * MIB };
        b = (struct governor_sample){ .swap = 10 * MIB };
        ck_assert(!governor_early_signal(&a, &b, why, sizeof(why)));
}
END_TEST

/* An application read every few windows (many are protected): the thresholds are rates per window, so what
 * crosses one window's threshold over three windows is no signal, and three windows' worth is. */
START_TEST(test_governor_signal_over_windows) {
        struct governor_sample a = {}, b = { .refaults = 2 * GOVERNOR_SIGNAL_PAGES, .windows = 3 };
        struct governor_auto est = { .source = GOVERNOR_AUTO_WORKING_SET, .want = 1 };
        char why[128];

        ck_assert(!governor_early_signal(&a, &b, why, sizeof(why)));
        b.windows = 1;
        ck_assert(governor_early_signal(&a, &b, why, sizeof(why)));
        b = (struct governor_sample){ .refaults = 3 * GOVERNOR_SIGNAL_PAGES, .windows = 3 };
        ck_assert(governor_early_signal(&a, &b, why, sizeof(why)));
        ck_assert_str_eq(why, "it refaults evicted pages (+768)");
        b.swap = b.refaults = 0;
        b.swap = 2 * GOVERNOR_SIGNAL_SWAP_BYTES;
        ck_assert(!governor_early_signal(&a, &b, why, sizeof(why)));
        /* "auto" follows the usage once it refaults, at the same rate. */
        b = (struct governor_sample){ .current = 100 * MIB, .refaults = 2 * GOVERNOR_SIGNAL_PAGES, .windows = 3 };
        (void) governor_auto_estimate(&est, &a, &b, true);
        ck_assert_int_eq(est.source, GOVERNOR_AUTO_WORKING_SET);
        b.windows = 2;
        (void) governor_auto_estimate(&est, &a, &b, true);
        ck_assert_int_eq(est.source, GOVERNOR_AUTO_REFAULTS);
}
END_TEST

/* A sample of an application charged with current bytes: anon, active_file of it in use. */
static struct governor_sample usage(uint64_t current, uint64_t anon, uint64_t active_file, uint64_t refaults) {
        return (struct governor_sample){
                .current = current, .anon = anon, .active_file = active_file, .refaults = refaults
        };
}

START_TEST(test_governor_auto_working_set) {
        struct governor_auto a = {};
        /* A database after days of uptime: 700 MiB charged, of which 560 MiB a file read once (inactive). */
        struct governor_sample s = usage(700 * MIB, 100 * MIB, 40 * MIB, 0), t;

        /* The first sample sets it: what it uses, not what is charged to it. */
        ck_assert(governor_auto_estimate(&a, NULL, &s, true));
        ck_assert_uint_eq(a.want, 140 * MIB);
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_WORKING_SET);
        /* Growth within a step: unchanged; beyond: follows. */
        t = usage(700 * MIB, 100 * MIB, 40 * MIB + GOVERNOR_AUTO_STEP, 0);
        ck_assert(!governor_auto_estimate(&a, &s, &t, true));
        ck_assert_uint_eq(a.want, 140 * MIB);
        t = usage(700 * MIB, 110 * MIB, 40 * MIB, 0);
        ck_assert(governor_auto_estimate(&a, &s, &t, true));
        ck_assert_uint_eq(a.want, 150 * MIB);
        /* Never shrinks while jobs run (the backup's reclaim deactivates pages). */
        s = t;
        t = usage(400 * MIB, 100 * MIB, 5 * MIB, 0);
        ck_assert(!governor_auto_estimate(&a, &s, &t, true));
        ck_assert_uint_eq(a.want, 150 * MIB);
        /* It refaulted a MiB in a window: the working set was too small; all it has now. */
        s = t;
        t = usage(420 * MIB, 100 * MIB, 5 * MIB, GOVERNOR_SIGNAL_PAGES);
        ck_assert(governor_auto_estimate(&a, &s, &t, true));
        ck_assert_uint_eq(a.want, 420 * MIB);
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_REFAULTS);
        /* Fewer refaults are no signal. */
        a = (struct governor_auto){};
        s = usage(700 * MIB, 100 * MIB, 40 * MIB, 0);
        ck_assert(governor_auto_estimate(&a, NULL, &s, true));
        t = usage(700 * MIB, 100 * MIB, 40 * MIB, GOVERNOR_SIGNAL_PAGES - 1);
        ck_assert(!governor_auto_estimate(&a, &s, &t, true));
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_WORKING_SET);
}
END_TEST

START_TEST(test_governor_auto_mglru) {
        struct governor_auto a = {};
        struct governor_sample s = usage(700 * MIB, 100 * MIB, 0, 0);

        /* The lists say nothing about read pages: all it has. */
        ck_assert(governor_auto_estimate(&a, NULL, &s, false));
        ck_assert_uint_eq(a.want, 700 * MIB);
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_USAGE);
        ck_assert_str_eq(governor_auto_source_name(a.source),
                         "usage: the kernel's lists do not age read pages (MGLRU)");
}
END_TEST

START_TEST(test_governor_auto_bounded_by_usage) {
        struct governor_auto a = {};
        /* Read one after another, the counters may add up to more than memory.current. */
        struct governor_sample s = usage(100 * MIB, 80 * MIB, 30 * MIB, 0);

        ck_assert(governor_auto_estimate(&a, NULL, &s, true));
        ck_assert_uint_eq(a.want, 100 * MIB);
        /* Nothing charged yet (an application not started): an estimate of 0, made. */
        a = (struct governor_auto){};
        s = usage(0, 0, 0, 0);
        ck_assert(governor_auto_estimate(&a, NULL, &s, true));
        ck_assert_uint_eq(a.want, 0);
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_WORKING_SET);
}
END_TEST

START_TEST(test_governor_auto_share) {
        struct governor_auto db = { .want = 300 * MIB }, web = { .want = 100 * MIB };
        struct governor_auto *const both[] = { &db, &web };

        /* Room for both: each gets what it needs. */
        ck_assert(governor_auto_share(both, 2, 500 * MIB));
        ck_assert_uint_eq(db.gets, 300 * MIB);
        ck_assert_uint_eq(web.gets, 100 * MIB);
        ck_assert(!governor_auto_share(both, 2, 400 * MIB));
        /* Not enough: shares in proportion to the needs. */
        ck_assert(governor_auto_share(both, 2, 200 * MIB));
        ck_assert_uint_eq(db.gets, 150 * MIB);
        ck_assert_uint_eq(web.gets, 50 * MIB);
        ck_assert(governor_auto_share(both, 2, 0));
        ck_assert_uint_eq(db.gets + web.gets, 0);
        ck_assert(!governor_auto_share(NULL, 0, 100 * MIB));
}
END_TEST

START_TEST(test_governor_auto_available) {
        /* 1 GiB: the reserve, the running jobs' floors and the fixed protections are kept out. */
        ck_assert_uint_eq(governor_auto_available(1024 * MIB, 100 * MIB, 64 * MIB, 200 * MIB), 660 * MIB);
        ck_assert_uint_eq(governor_auto_available(1024 * MIB, 1000 * MIB, 64 * MIB, 0), 0);
        ck_assert_uint_eq(governor_auto_available(1024 * MIB, UINT64_MAX, UINT64_MAX, UINT64_MAX), 0);
        /* The reserve's default: a tenth of RAM, at least 64 MiB; a configured one as it is. */
        ck_assert_uint_eq(governor_reserve(UNITS_MAX, 457 * MIB), GOVERNOR_RESERVE_MIN);
        ck_assert_uint_eq(governor_reserve(UNITS_MAX, 16384 * MIB), 16384 * MIB / 10);
        ck_assert_uint_eq(governor_reserve(300 * MIB, 16384 * MIB), 300 * MIB);
}
END_TEST

START_TEST(test_governor_auto_reclaim_above_it) {
        struct governor_auto a = { .want = 140 * MIB, .gets = 140 * MIB, .source = GOVERNOR_AUTO_WORKING_SET };
        struct governor_sample prev = usage(700 * MIB, 100 * MIB, 40 * MIB, 0), cur = prev;
        char why[128] = "";

        /* 700 MiB charged, 140 protected: the kernel reclaims the file it read once; no signal. */
        cur.pgsteal = 5000;
        cur.current = 600 * MIB;
        ck_assert(!governor_early_signal_auto(&prev, &cur, &a, why, sizeof(why)));
        /* The same reclaim of an application with a fixed size is one. */
        ck_assert(governor_early_signal_auto(&prev, &cur, NULL, why, sizeof(why)));
        ck_assert_str_eq(why, "its memory is being reclaimed (pgsteal +5000)");
        /* At its protection, what is reclaimed is what auto protects: a signal. */
        cur.current = 140 * MIB;
        ck_assert(governor_early_signal_auto(&prev, &cur, &a, why, sizeof(why)));
        /* Above it, its refaults still are. */
        cur.current = 600 * MIB;
        cur.refaults = GOVERNOR_SIGNAL_PAGES;
        ck_assert(governor_early_signal_auto(&prev, &cur, &a, why, sizeof(why)));
        ck_assert_str_eq(why, "it refaults evicted pages (+256)");
}
END_TEST

START_TEST(test_governor_auto_follows_a_trace) {
        static const char *const names[] = { "0-rest", "1-rest", "2-reclaimed", "3-refaults", "4-swapped" };
        struct governor_sample prev = {}, cur;
        struct governor_auto a = {};

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                cur = sample(names[i]);
                (void) governor_auto_estimate(&a, i ? &prev : NULL, &cur, true);
                if (i == 0) /* at rest: its anonymous memory and active file pages */
                        ck_assert_uint_eq(a.want, cur.anon + cur.active_file);
                prev = cur;
        }
        /* 3-refaults refaulted 900 pages: all it had then. */
        ck_assert_int_eq(a.source, GOVERNOR_AUTO_REFAULTS);
        ck_assert_uint_eq(a.want, sample("3-refaults").current);
}
END_TEST

/* Tightening that does not lower the applications' stall and faults is undone at once, and not tried again for
 * the cooldown (the stall is somebody else's doing). */
START_TEST(test_governor_undo_when_it_does_not_help) {
        _cleanup_(fixture_done) struct fixture f = {};
        uint64_t t;

        setup(&f);
        /* Stalling 200 ms and losing 2000 pages per 500 ms window, before and after: the jobs are not it. */
        t = steps_harm(&f, 1 * SEC, 3 * SEC, false, 0.0, 200 * MS, 2000);
        step_harm(&f, t, true, 40.0, 200 * MS, 2000);
        ck_assert_uint_eq(f.c.high, 200 * MIB);
        ck_assert_uint_eq(f.c.n_tightened, 2);
        /* The ladder goes on while the check waits... */
        step_harm(&f, t += 500 * MS, true, 40.0, 200 * MS, 2000);
        ck_assert_uint_eq(f.c.high, 100 * MIB);
        steps_harm(&f, t + 500 * MS, 5 * SEC, true, 40.0, 200 * MS, 2000);
        ck_assert_uint_eq(f.c.n_unhelpful, 0);
        /* ...and 4 windows after its first step it is all given back, in one step. */
        f.n_up = 0;
        step_harm(&f, 5 * SEC, true, 40.0, 200 * MS, 2000);
        ck_assert_uint_eq(f.c.n_unhelpful, 1);
        ck_assert_uint_eq(f.c.high, 512 * MIB);
        ck_assert_uint_eq(f.c.io[0].wbps, 80 * MIB);
        ck_assert_uint_eq(f.n_up, 1);
        ck_assert(governor_at_rest(&f.g));
        ck_assert_msg(strstr(f.c.last_action, "did not help, released after 2.0 s") &&
                              strstr(f.c.last_action, "stalled 400 -> 400 ms/s"),
                      "%s", f.c.last_action);
        /* The pressure goes on: left alone for the cooldown, then tried again. */
        for (t = 5500 * MS; t < 35 * SEC; t += 500 * MS)
                ck_assert_uint_eq(step_harm(&f, t, true, 40.0, 200 * MS, 2000), 0);
        ck_assert_uint_gt(step_harm(&f, 35 * SEC, true, 40.0, 200 * MS, 2000), 0);
        ck_assert_uint_eq(f.c.high, 200 * MIB);
}
END_TEST

/* Tightening after which the stall falls by a quarter or more stands, and the ladder goes on. */
START_TEST(test_governor_kept_when_it_helps) {
        _cleanup_(fixture_done) struct fixture f = {};
        uint64_t t;

        setup(&f);
        t = steps_harm(&f, 1 * SEC, 3 * SEC, false, 0.0, 200 * MS, 2000);
        step_harm(&f, t, true, 40.0, 200 * MS, 2000);
        /* The stall falls to 100 ms a window, the pages lost stay: it helped. */
        steps_harm(&f, t + 500 * MS, 6500 * MS, true, 20.0, 100 * MS, 2000);
        ck_assert_uint_eq(f.c.n_unhelpful, 0);
        ck_assert_uint_eq(f.c.high, 64 * MIB);
        ck_assert_uint_eq(f.n_up, 0);
        /* Nothing stalled and nothing was reclaimed before the action (the signal was a refault): nothing to
         * judge by, it stands. */
        fixture_done(&f);
        setup(&f);
        step_harm(&f, 1 * SEC, true, 0.0, 0, 0);
        steps_harm(&f, 1500 * MS, 4500 * MS, false, 0.0, 300 * MS, 5000);
        ck_assert_uint_eq(f.c.n_unhelpful, 0);
        ck_assert_uint_eq(f.c.high, 200 * MIB);
}
END_TEST

/* A frozen class whose freezing did not help is thawed at once. */
START_TEST(test_governor_undo_thaws) {
        _cleanup_(fixture_done) struct fixture f = {};
        uint64_t t;

        setup(&f);
        f.c.high = 64 * MIB; /* at its floors already (an earlier sequence that helped), still under pressure */
        f.c.io[0].wbps = 8 * MIB;
        f.g.under_pressure = true;
        t = steps_harm(&f, 1 * SEC, 3 * SEC, false, 40.0, 200 * MS, 0);
        step_harm(&f, t, true, 40.0, 200 * MS, 0);
        ck_assert(f.c.frozen);
        steps_harm(&f, t + 500 * MS, 5500 * MS, true, 40.0, 200 * MS, 0);
        ck_assert(!f.c.frozen);
        ck_assert_uint_eq(f.n_thaw, 1);
        ck_assert_uint_eq(f.c.n_unhelpful, 1);
        ck_assert_uint_eq(f.c.high, 64 * MIB); /* its limits were those already */
}
END_TEST

static struct governor_io_use io_use(unsigned major, unsigned minor, uint64_t bytes) {
        return (struct governor_io_use){ .n = 1, .dev = { { .major = major, .minor = minor, .bytes = bytes } } };
}

START_TEST(test_governor_jobs_can_cause) {
        struct governor_sample p = { .high_events = 10, .io = io_use(8, 0, 0) }, c = p;
        struct governor_jobs_sample jp = { .current = 100 * MIB, .io = io_use(8, 0, 0) }, jc = jp;
        char why[160] = "";

        /* The jobs did nothing in the window: no I/O, no fault, nothing dirty, no memory charged. */
        ck_assert(!governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        ck_assert_msg(strstr(why, "the jobs did nothing"), "%s", why);
        /* Each of those alone makes them a possible cause of a memory stall. */
        jc.pgfault = 1;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        jc = jp, jc.dirty = 4096;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        jc = jp, jc.current += 4096;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        /* ...but of an I/O stall only their I/O is. */
        ck_assert(!governor_jobs_can_cause(&p, &c, &jp, &jc, true, why, sizeof(why)));
        ck_assert_msg(strstr(why, "did none"), "%s", why);
        jc.io.dev[0].bytes = MIB;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, true, why, sizeof(why)));
        /* The application's I/O is on another device than the jobs'. */
        c.io = (struct governor_io_use){ .n = 2, .dev = { { 8, 0, 0 }, { 8, 16, 5 * MIB } } };
        ck_assert(!governor_jobs_can_cause(&p, &c, &jp, &jc, true, why, sizeof(why)));
        ck_assert_msg(strstr(why, "on 8:16, where the jobs did none"), "%s", why);
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why))); /* memory: the device is moot */
        /* On the same device as the jobs'. */
        c.io.dev[0].bytes = MIB;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, true, why, sizeof(why)));
        /* At its own memory.high, or memory.max: never the jobs, whatever they do. */
        c.high_events = 11;
        ck_assert(!governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        ck_assert_msg(strstr(why, "its own memory.high (memory.events high +1)"), "%s", why);
        c.high_events = 10, c.max_events = 3;
        ck_assert(!governor_jobs_can_cause(&p, &c, &jp, &jc, true, why, sizeof(why)));
        ck_assert_msg(strstr(why, "its own memory.max"), "%s", why);
        /* A new cgroup (counters back to 0) is no sign of a limit. */
        c.max_events = 0, p.high_events = 99;
        ck_assert(governor_jobs_can_cause(&p, &c, &jp, &jc, false, why, sizeof(why)));
        /* The whole machine's trigger: only the jobs are looked at; no history yet: they may be the cause. */
        ck_assert(governor_jobs_can_cause(NULL, NULL, &jp, &jc, false, why, sizeof(why)));
        ck_assert(!governor_jobs_can_cause(NULL, NULL, &jp, &jp, false, why, sizeof(why)));
        ck_assert(governor_jobs_can_cause(&p, &c, NULL, NULL, true, why, sizeof(why)));
}
END_TEST

START_TEST(test_governor_io_use) {
        struct governor_io_use u, sum = {};

        pressure_io_use_parse(
                "8:0 rbytes=1000 wbytes=24 rios=1 wios=1 dbytes=0 dios=0\n"
                "253:1 rbytes=5 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
                "garbage\n",
                &u);
        ck_assert_uint_eq(u.n, 2);
        ck_assert_uint_eq(u.dev[0].major, 8);
        ck_assert_uint_eq(u.dev[0].bytes, 1024);
        ck_assert_uint_eq(u.dev[1].major, 253);
        ck_assert_uint_eq(u.dev[1].minor, 1);
        ck_assert_uint_eq(u.dev[1].bytes, 5);
        governor_io_use_add(&sum, &u);
        governor_io_use_add(&sum, &u);
        ck_assert_uint_eq(sum.n, 2);
        ck_assert_uint_eq(sum.dev[0].bytes, 2048);
        pressure_io_use_parse(NULL, &u);
        ck_assert_uint_eq(u.n, 0);
}
END_TEST

Suite *governor_suite(void) {
        Suite *s = suite_create("governor");
        TCase *tc = tcase_create("traces");

        tcase_add_test(tc, test_governor_spike);
        tcase_add_test(tc, test_governor_sustained);
        tcase_add_test(tc, test_governor_flapping);
        tcase_add_test(tc, test_governor_no_jobs);
        tcase_add_test(tc, test_governor_no_protection);
        tcase_add_test(tc, test_governor_release_level);
        tcase_add_test(tc, test_governor_freeze_needs_all_floors);
        tcase_add_test(tc, test_governor_many_devices);
        tcase_add_test(tc, test_governor_absent_device);
        suite_add_tcase(s, tc);
        tc = tcase_create("signals");
        tcase_add_test(tc, test_governor_sample_parse);
        tcase_add_test(tc, test_governor_early_signals_on_a_trace);
        tcase_add_test(tc, test_governor_signal_over_windows);
        tcase_add_test(tc, test_governor_signal_thresholds);
        tcase_add_test(tc, test_governor_auto_working_set);
        tcase_add_test(tc, test_governor_auto_mglru);
        tcase_add_test(tc, test_governor_auto_bounded_by_usage);
        tcase_add_test(tc, test_governor_auto_share);
        tcase_add_test(tc, test_governor_auto_available);
        tcase_add_test(tc, test_governor_auto_reclaim_above_it);
        tcase_add_test(tc, test_governor_auto_follows_a_trace);
        tcase_add_test(tc, test_governor_undo_when_it_does_not_help);
        tcase_add_test(tc, test_governor_kept_when_it_helps);
        tcase_add_test(tc, test_governor_undo_thaws);
        tcase_add_test(tc, test_governor_jobs_can_cause);
        tcase_add_test(tc, test_governor_io_use);
        tcase_add_test(tc, test_governor_cost_read);
        suite_add_tcase(s, tc);
        return s;
}
