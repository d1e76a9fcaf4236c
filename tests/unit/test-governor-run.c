/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What src/daemon/governor-run.c keeps for status: the reaction latency's
 * histogram and each class's counts since the daemon started, across the
 * governor's runs (each start makes its classes anew).  Governing itself
 * needs a kernel: tests/vm/scenarios/governor.sh.
 */
#include <inttypes.h>

#include "common.h"
#include "governor-run.h"
#include "units.h"

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key, json_object_to_json_string(o));
        return v;
}

/* A memory.high write by the worker that woke latency_usec after its trigger. */
static void write_done(struct govern *g, uint64_t latency_usec) {
        struct worker_task t = { .kind = WORKER_WRITE,
                                 .path = (char *) "pagewarden.slice/backup",
                                 .file = (char *) "memory.high",
                                 .value = (char *) "1G",
                                 .wake_usec = 1000,
                                 .start_usec = 1000 + latency_usec,
                                 .end_usec = 2000 + latency_usec };

        govern_write_done(g, &t);
}

/* The machine-wide trigger is a fallback: only while no protected application has a trigger of its own. */
START_TEST(test_govern_machine_trigger_only_as_fallback) {
        struct govern_watch w[2] = { { .fd = { -1, -1 } }, { .fd = { -1, -1 } } };
        struct govern g = {};

        govern_init(&g);
        ck_assert(govern_needs_machine_trigger(&g)); /* nothing watched */
        g.watches = w;
        g.n_watches = 2;
        ck_assert(govern_needs_machine_trigger(&g)); /* watched, but no trigger armed (no PSI there) */
        w[1].fd[1] = 7;                              /* one application's io.pressure trigger */
        ck_assert(!govern_needs_machine_trigger(&g));
        w[1].fd[1] = -1;
        w[0].fd[0] = 5; /* another's memory.pressure */
        ck_assert(!govern_needs_machine_trigger(&g));
        w[0].fd[0] = -1;
        w[0].arming[1] = 3; /* one the worker is arming: it will have one (the machine's fired meanwhile, and the
                             * governor throttled jobs for pressure the application made itself: faults@6.1) */
        ck_assert(!govern_needs_machine_trigger(&g));
        g.watches = NULL;
        g.n_watches = 0;
}
END_TEST

START_TEST(test_govern_latency_histogram) {
        static const uint64_t latencies[] = { 100, 250, 251, 850, 4200, 9999999, 10000000, 10000001, 60000000 };
        static const struct {
                uint64_t le_us, count;
        } want[] = {
                { 250, 2 },    { 500, 3 },     { 1000, 4 },    { 2500, 4 },    { 5000, 5 },
                { 10000, 5 },  { 25000, 5 },   { 50000, 5 },   { 100000, 5 },  { 250000, 5 },
                { 500000, 5 }, { 1000000, 5 }, { 2500000, 5 }, { 5000000, 5 }, { 10000000, 7 },
        };
        struct govern g = {};
        json_object *o, *lat, *buckets;
        uint64_t sum = 0;

        govern_init(&g);
        for (size_t i = 0; i < ELEMENTSOF(latencies); i++) {
                write_done(&g, latencies[i]);
                sum += latencies[i];
        }
        o = govern_json(&g);
        lat = get(o, "reaction_latency");
        ck_assert_uint_eq(json_object_get_uint64(get(lat, "count")), ELEMENTSOF(latencies));
        ck_assert_uint_eq(json_object_get_uint64(get(lat, "sum_us")), sum);
        buckets = get(lat, "buckets");
        ck_assert_uint_eq(json_object_array_length(buckets), ELEMENTSOF(want));
        /* Cumulative; the two above 10 s are only in count. */
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                json_object *b = json_object_array_get_idx(buckets, i);

                ck_assert_uint_eq(json_object_get_uint64(get(b, "le_us")), want[i].le_us);
                ck_assert_msg(json_object_get_uint64(get(b, "count")) == want[i].count, "le %" PRIu64 ": %s",
                              want[i].le_us, json_object_to_json_string(b));
        }
        /* The median and the maximum are still those of the last samples. */
        ck_assert_uint_eq(json_object_get_uint64(get(lat, "median_us")), 4200);
        ck_assert_uint_eq(json_object_get_uint64(get(lat, "max_us")), 60000000);
        json_object_put(o);
        govern_done(&g);
}
END_TEST

/* The governor, running with classes (as govern_start() makes them) that took counts. */
static void run(struct govern *g, const char *name, unsigned tightened, unsigned relaxed, unsigned frozen) {
        struct governor_class *c;

        ck_assert(!g->active);
        g->gov.classes = calloc(1, sizeof(struct governor_class));
        ck_assert_ptr_nonnull(g->gov.classes);
        c = &g->gov.classes[0];
        snprintf(c->name, sizeof(c->name), "%s", name);
        c->high = c->configured_high = UNITS_MAX;
        c->n_tightened = tightened;
        c->n_relaxed = relaxed;
        c->n_frozen = frozen;
        g->gov.n_classes = 1;
        g->active = true;
}

static void assert_counts(const struct govern *g, const char *class, uint64_t tightened, uint64_t relaxed,
                          uint64_t frozen) {
        struct govern_counts n;

        govern_class_counts(g, class, &n);
        ck_assert_msg(n.tightened == tightened && n.relaxed == relaxed && n.frozen == frozen,
                      "%s: %" PRIu64 " %" PRIu64 " %" PRIu64 ", want %" PRIu64 " %" PRIu64 " %" PRIu64, class,
                      n.tightened, n.relaxed, n.frozen, tightened, relaxed, frozen);
}

START_TEST(test_govern_class_counts) {
        struct pw_policy policy = {};
        struct protect protect = {};
        struct jobs jobs = {};
        struct classes classes = {};
        struct govern g = { .policy = &policy, .classes = &classes, .protect = &protect, .jobs = &jobs };

        govern_init(&g);
        assert_counts(&g, "backup", 0, 0, 0);
        run(&g, "backup", 2, 1, 1);
        assert_counts(&g, "backup", 2, 1, 1); /* while it runs */
        govern_stop(&g);
        assert_counts(&g, "backup", 2, 1, 1); /* idle: kept */
        run(&g, "backup", 3, 0, 0);           /* a new run (after a reload): its classes count from 0 */
        assert_counts(&g, "backup", 5, 1, 1);
        govern_stop(&g);
        run(&g, "batch", 0, 0, 4);
        govern_stop(&g);
        assert_counts(&g, "backup", 5, 1, 1);
        assert_counts(&g, "batch", 0, 0, 4);
        assert_counts(&g, "never-governed", 0, 0, 0);
        govern_done(&g);
        ck_assert_ptr_null(g.tallies);
}
END_TEST

static void count_sample(void *userdata, const char *name, const struct governor_sample *s) {
        uint64_t *sum = userdata;

        ck_assert_str_eq(name, "db");
        *sum += s->refaults + 1;
}

/* A job's start and end take the applications' samples from the governor's last tick, not from reading them
 * again: only while it runs, only a tick recent enough, only what that tick could read. */
START_TEST(test_govern_recent_samples) {
        struct govern_watch w[2] = { { .name = (char *) "db",
                                       .fd = { -1, -1 },
                                       .sampled = true,
                                       .last_usec = 1000,
                                       .last = { .refaults = 41 } },
                                     { .name = (char *) "gone", .fd = { -1, -1 }, .sampled = true, .last_usec = 500 } };
        struct govern g = {};
        uint64_t sum = 0;

        govern_init(&g);
        g.watches = w;
        g.n_watches = 2;
        ck_assert(!govern_recent_samples(&g, 1000, 1000, count_sample, &sum)); /* not running */
        g.active = true;
        ck_assert(!govern_recent_samples(&g, 1000, 1000, count_sample, &sum)); /* running, no tick yet */
        g.sampled_usec = 1000;
        ck_assert(govern_recent_samples(&g, 2000, 1000, count_sample, &sum));
        ck_assert_uint_eq(sum, 42); /* db's, not the one the tick could not read */
        ck_assert(!govern_recent_samples(&g, 2001, 1000, count_sample, &sum)); /* too old */
        ck_assert(!govern_recent_samples(&g, 999, 1000, count_sample, &sum));  /* a clock that went back */
        ck_assert_uint_eq(sum, 42);
        g.active = false;
        g.watches = NULL;
        g.n_watches = 0;
}
END_TEST

/* With more applications than a tick reads, the samples of the last turn count: one read within that many
 * ticks is recent, one older (its cgroup gone since) is not. */
START_TEST(test_govern_recent_samples_in_turns) {
        struct govern_watch w[GOVERN_SAMPLES_PER_TICK + 1] = {};
        struct govern g = {};
        uint64_t sum = 0;

        govern_init(&g);
        for (size_t i = 0; i < ELEMENTSOF(w); i++)
                w[i] = (struct govern_watch){
                        .name = (char *) "db", .fd = { -1, -1 }, .sampled = true, .last_usec = 3000
                };
        w[0].last_usec = 2000; /* read one tick earlier, in its turn */
        w[1].last_usec = 500;  /* not read for more than a turn */
        g.watches = w;
        g.n_watches = ELEMENTSOF(w);
        g.active = true;
        g.sampled_usec = 3000;
        ck_assert(govern_recent_samples(&g, 3100, 1000, count_sample, &sum));
        ck_assert_uint_eq(sum, ELEMENTSOF(w) - 1); /* each adds its refaults + 1: all but the stale one */
        g.active = false;
        g.watches = NULL;
        g.n_watches = 0;
}
END_TEST

Suite *govern_suite(void) {
        Suite *s = suite_create("govern");
        TCase *tc = tcase_create("status");

        tcase_add_test(tc, test_govern_machine_trigger_only_as_fallback);
        tcase_add_test(tc, test_govern_latency_histogram);
        tcase_add_test(tc, test_govern_class_counts);
        tcase_add_test(tc, test_govern_recent_samples);
        tcase_add_test(tc, test_govern_recent_samples_in_turns);
        suite_add_tcase(s, tc);
        return s;
}
