/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status.c: the JSON that `pagewardenctl status --json` prints, built from
 * a policy and a fake cgroup tree (a class with a job an earlier instance
 * left, a protected application, one whose cgroup is missing, a class that
 * left the policy while its job runs), against the golden file
 * tests/unit/data/status.json.  What changes from run to run (the daemon's
 * pid, RSS, CPU time and start, the version, the actions' times) is set to
 * 0 first.  PW_UPDATE_GOLDEN=1 writes the golden file instead: read its diff
 * before committing it, it is what operators' scripts parse.
 */
#include "fake-daemon.h"
#include "status.h"

#define GOLDEN TOP_SRCDIR "/tests/unit/data/status.json"

static void tree(const char *dir) {
        static const char *const class[] = { "memory.high=268435456\n",
                                             "memory.max=1073741824\n",
                                             "memory.swap.max=max\n",
                                             "cpu.weight=50\n",
                                             "io.max=8:0 rbps=max wbps=52428800 riops=max wiops=max\n",
                                             "cgroup.events=populated 1\nfrozen 0\n",
                                             "cgroup.freeze=0\n",
                                             "memory.current=52428800\n",
                                             NULL };
        static const char *const app[] = {
                "memory.min=67108864\n",
                "memory.low=0\n",
                "memory.current=104857600\n",
                "memory.swap.current=0\n",
                "memory.pressure=some avg10=0.50 avg60=0.25 avg300=0.00 total=12345\n"
                "full avg10=0.00 avg60=0.00 avg300=0.00 total=678\n",
                "memory.stat=anon 52428800\nfile 52428800\nworkingset_refault_file 12\npgmajfault 3\n",
                "cgroup.events=populated 1\nfrozen 0\n",
                NULL
        };

        fake_cgroup_files(dir, "pagewarden.slice/backup", class);
        fake_job_slot(dir, "pagewarden.slice/backup/slot-0",
                      "id=7 uid=0 started=1714644300250000 name=nightly by=rule exe /usr/bin/borg (jobs.yaml:4)");
        /* A class that left the policy while its job still runs */
        fake_cgroup_files(dir, "pagewarden.slice/old", class);
        fake_job_slot(dir, "pagewarden.slice/old/slot-0", "id=3 uid=0 started=1714640000000000 name=copy by=move");
        fake_cgroup_files(dir, "system.slice/db.service", app);
        /* Its slice protects less: the application's effective memory.min is the slice's */
        free(write_file(dir, "system.slice/memory.min", "33554432\n"));
        free(write_file(dir, "system.slice/memory.low", "0\n"));
}

/* Sets o's key to 0 (it must be there). */
static void zero(json_object *o, const char *key) {
        ck_assert_msg(json_object_object_get_ex(o, key, NULL), "no \"%s\" in %s", key, json_object_to_json_string(o));
        json_object_object_add(o, key, json_object_new_int(0));
}

static void normalize(json_object *s) {
        json_object *daemon, *actions, *jobs;

        zero(s, "version");
        ck_assert(json_object_object_get_ex(s, "daemon", &daemon));
        zero(daemon, "pid");
        zero(daemon, "started");
        zero(daemon, "memory_rss");
        zero(daemon, "cpu_us");
        ck_assert(json_object_object_get_ex(s, "actions", &actions));
        for (size_t i = 0; i < json_object_array_length(actions); i++)
                zero(json_object_array_get_idx(actions, i), "time");
        ck_assert(json_object_object_get_ex(s, "jobs", &jobs));
        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                json_object *age = json_object_object_get(json_object_array_get_idx(jobs, i), "figures_age_ms");

                /* read for this answer: a few ms at most, even under a sanitizer */
                ck_assert_msg(json_object_is_type(age, json_type_int) && json_object_get_int64(age) < 1000, "%s",
                              json_object_to_json_string(age));
                zero(json_object_array_get_idx(jobs, i), "figures_age_ms");
        }
}

/* Two jobs and two protected applications, over a tree of their files. */
static void golden_daemon_start(struct fake_daemon *d) {
        fake_daemon_start(d,
                          "jobs:\n"
                          "  backup:\n"
                          "    memory: {high: 256M, max: 1G}\n"
                          "    cpu: {weight: 50}\n"
                          "protect:\n"
                          "  db:\n"
                          "    cgroup: /system.slice/db.service\n"
                          "    memory: {min: 64M}\n"
                          "  cache:\n"
                          "    cgroup: /system.slice/cache.service\n"
                          "    memory: {min: 128M}\n",
                          tree);
        ck_assert_uint_eq(d->jobs.n, 2);
}

START_TEST(test_status_golden) {
        struct fake_daemon d;
        json_object *status;
        _cleanup_free_ char *want = NULL;
        const char *got;

        golden_daemon_start(&d);

        status = json_as_sent(status_json(&d.api));
        ck_assert_ptr_nonnull(status);
        normalize(status);
        got = json_object_to_json_string_ext(status, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
        if (getenv("PW_UPDATE_GOLDEN")) {
                FILE *f = fopen(GOLDEN, "we");

                ck_assert_ptr_nonnull(f);
                fprintf(f, "%s\n", got);
                ck_assert_int_eq(fclose(f), 0);
        }
        ck_assert_int_eq(read_full_file(GOLDEN, 1 << 20, &want, NULL), 0);
        if (*want && want[strlen(want) - 1] == '\n')
                want[strlen(want) - 1] = '\0';
        if (!streq(got, want)) {
                size_t at = 0, line = 1;

                for (; got[at] && got[at] == want[at]; at++)
                        line += got[at] == '\n';
                ck_abort_msg(
                        "status JSON differs from %s at line %zu: got \"%.80s\", want \"%.80s\" "
                        "(PW_UPDATE_GOLDEN=1 rewrites it; read its diff)",
                        GOLDEN, line, got + at, want + at);
        }

        json_object_put(status);
        fake_daemon_stop(&d);
}
END_TEST

#define MANY_JOBS (STATUS_READ_ALL_JOBS + 8)

/* n jobs of class backup, ids 1 to n, in slots 1 to n. */
static void jobs_tree(const char *dir, unsigned n) {
        static const char *const class[] = { "memory.high=268435456\n", "cgroup.events=populated 1\nfrozen 0\n", NULL };

        fake_cgroup_files(dir, "pagewarden.slice/backup", class);
        for (unsigned i = 1; i <= n; i++) {
                _cleanup_free_ char *slot = NULL, *label = NULL;

                ck_assert_int_ge(asprintf(&slot, "pagewarden.slice/backup/slot-%u", i), 0);
                ck_assert_int_ge(asprintf(&label, "id=%u uid=0 started=1714644300250000 name=j%u by=run", i, i), 0);
                fake_job_slot(dir, slot, label);
        }
}

static void many_jobs(const char *dir) {
        jobs_tree(dir, MANY_JOBS);
}

/* The figure fields of the job with this id in a status answer. */
static json_object *job_field(json_object *status, uint64_t id, const char *key) {
        json_object *jobs = json_object_object_get(status, "jobs");

        for (size_t i = 0; i < json_object_array_length(jobs); i++) {
                json_object *j = json_object_array_get_idx(jobs, i);

                if (json_object_get_uint64(json_object_object_get(j, "id")) == id)
                        return json_object_object_get(j, key);
        }
        ck_abort_msg("no job %" PRIu64, id);
        return NULL;
}

/*
 * More jobs than status reads for each answer: the first answer comes at once without figures (null, and no
 * age), the loop reads them in the background, the next answer has them; a change within
 * STATUS_FIGURES_FRESH_USEC is not read again for status (it is for show: one job, read now).
 */
START_TEST(test_status_many_jobs_figures_in_the_background) {
        struct fake_daemon d;
        json_object *status;
        _cleanup_free_ char *slot3 = NULL;
        struct job *j3;

        fake_daemon_start(&d, "jobs:\n  backup:\n    memory: {high: 256M}\n", many_jobs);
        ck_assert_uint_eq(d.jobs.n, MANY_JOBS);

        status = json_as_sent(status_json(&d.api));
        ck_assert_ptr_null(job_field(status, 3, "memory_current"));
        ck_assert_ptr_null(job_field(status, 3, "figures_age_ms"));
        ck_assert_ptr_null(job_field(status, 3, "pids"));
        json_object_put(status);
        for (int i = 0; i < 100 && sd_event_run(d.event, 0) > 0; i++)
                ;
        status = json_as_sent(status_json(&d.api));
        ck_assert_uint_eq(json_object_get_uint64(job_field(status, 3, "memory_current")), 41943040);
        ck_assert_uint_eq(json_object_get_uint64(job_field(status, 3, "pids")), 1);
        ck_assert_uint_eq(json_object_get_uint64(job_field(status, MANY_JOBS, "io_written_bytes")), 2000);
        ck_assert(json_object_is_type(job_field(status, 3, "figures_age_ms"), json_type_int));
        json_object_put(status);

        ck_assert_int_ge(asprintf(&slot3, "%s/pagewarden.slice/backup/slot-3/memory.current", d.dir), 0);
        ck_assert_int_eq(write_file_atomic(slot3, "1048576\n"), 0);
        status = json_as_sent(status_json(&d.api)); /* fresh enough: not read again */
        ck_assert_uint_eq(json_object_get_uint64(job_field(status, 3, "memory_current")), 41943040);
        json_object_put(status);
        j3 = jobs_find_id(&d.jobs, 3);
        ck_assert_ptr_nonnull(j3);
        status = status_job_json(&d.api, j3);
        ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(status, "memory_current")), 1048576);
        json_object_put(status);
        fake_daemon_stop(&d);
}
END_TEST

/* The jobs are written when the answer is serialized (status.c's serializer): in each of json-c's formats, the
 * text is what json-c itself writes of the same content. */
START_TEST(test_status_jobs_in_every_format) {
        static const int formats[] = { JSON_C_TO_STRING_PLAIN, JSON_C_TO_STRING_SPACED, JSON_C_TO_STRING_PRETTY,
                                       JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED,
                                       JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB };
        struct fake_daemon d;

        golden_daemon_start(&d);
        for (size_t i = 0; i < ELEMENTSOF(formats); i++) {
                json_object *status = status_json(&d.api), *list = status_list_json(&d.api, false), *parsed;

                for (json_object *o = status; o; o = o == status ? list : NULL) {
                        const char *text = json_object_to_json_string_ext(o, formats[i]);

                        parsed = json_tokener_parse(text);
                        ck_assert_ptr_nonnull(parsed);
                        ck_assert_uint_eq(json_object_array_length(json_object_object_get(parsed, "jobs")), 2);
                        ck_assert_str_eq(text, json_object_to_json_string_ext(parsed, formats[i]));
                        json_object_put(parsed);
                }
                json_object_put(status);
                json_object_put(list);
        }
        fake_daemon_stop(&d);
}
END_TEST

#define SLICED_JOBS (STATUS_SLICED_JOBS * 3)

static void no_jobs(const char *dir) {
        jobs_tree(dir, 0);
}

static void sliced_jobs(const char *dir) {
        jobs_tree(dir, SLICED_JOBS);
}

/* The answers a test's "client" got, by client id. */
static json_object *replies[4];
static void on_reply(struct api *api, uint64_t client, json_object *resp) {
        ck_assert_uint_lt(client, ELEMENTSOF(replies));
        ck_assert_ptr_null(replies[client]);
        replies[client] = json_as_sent(resp);
}

/* One field of each element of an answer's array, in order, as text ("3 2 1"). */
static char *fields_of(json_object *answer, const char *array, const char *key) {
        json_object *a = json_object_object_get(answer, array);
        char *text = strdup("");

        for (size_t i = 0; i < json_object_array_length(a); i++) {
                char *more = NULL;

                ck_assert_int_ge(asprintf(&more, "%s%s%s", text, i ? " " : "",
                                          json_object_get_string(
                                                  json_object_object_get(json_object_array_get_idx(a, i), key))),
                                 0);
                free(text);
                text = more;
        }
        return text;
}

/*
 * Past STATUS_SLICED_JOBS jobs, status and list are answered later, their jobs written in slices on the loop: a
 * request that comes meanwhile waits for the same text (one text made), each gets its own kind of answer, the
 * jobs in the list's order as an answer made at once has them; a job that ended before its turn is left out.
 */
START_TEST(test_status_many_jobs_in_slices) {
        struct fake_daemon d;
        json_object *now = NULL, *ignored = NULL;
        _cleanup_free_ char *want = NULL, *got = NULL, *got_list = NULL;
        struct job *gone;

        fake_daemon_start(&d, "jobs:\n  backup:\n    memory: {high: 256M}\n", sliced_jobs);
        ck_assert_uint_eq(d.jobs.n, SLICED_JOBS);
        memset(replies, 0, sizeof(replies));
        ck_assert_int_eq(status_answer(&d.api, false, false, on_reply, 1, &ignored), 1);
        ck_assert_int_eq(status_answer(&d.api, true, false, on_reply, 2, &ignored), 1);
        ck_assert_ptr_null(ignored);
        ck_assert_uint_eq(d.api.status_gens, 1);
        gone = jobs_find_id(&d.jobs, 5);
        ck_assert_ptr_nonnull(gone);
        jobs_forget(&d.jobs, gone);
        for (int i = 0; i < 1000 && (!replies[1] || !replies[2]); i++)
                ck_assert_int_ge(sd_event_run(d.event, 0), 0);
        ck_assert_ptr_nonnull(replies[1]);
        ck_assert_ptr_nonnull(replies[2]);
        ck_assert_ptr_nonnull(json_object_object_get(replies[1], "classes")); /* a status */
        ck_assert_ptr_null(json_object_object_get(replies[2], "classes"));    /* a list */
        now = json_as_sent(status_json(&d.api));
        want = fields_of(now, "jobs", "id");
        got = fields_of(replies[1], "jobs", "id");
        got_list = fields_of(replies[2], "jobs", "id");
        ck_assert_str_eq(got, want);
        ck_assert_str_eq(got_list, want);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(replies[1], "jobs")), SLICED_JOBS - 1);
        ck_assert_ptr_null(strstr(got, " 5 "));
        /* Done: the next request begins a text of its own. */
        ck_assert_int_eq(status_answer(&d.api, false, false, on_reply, 3, &ignored), 1);
        ck_assert_uint_eq(d.api.status_gens, 2);
        for (int i = 0; i < 1000 && !replies[3]; i++)
                ck_assert_int_ge(sd_event_run(d.event, 0), 0);
        ck_assert_ptr_nonnull(replies[3]);
        for (size_t i = 0; i < ELEMENTSOF(replies); i++)
                json_object_put(replies[i]);
        json_object_put(now);
        fake_daemon_stop(&d);
}
END_TEST

/* Past STATUS_SLICED_PROTECTED protected applications a status is sliced too (each is several files read), with
 * few jobs; a list, which has none, is not. */
START_TEST(test_status_many_protected_in_slices) {
        struct fake_daemon d;
        json_object *now = NULL, *listed = NULL;
        _cleanup_free_ char *policy = strdup("protect:\n"), *want = NULL, *got = NULL;

        for (unsigned i = 0; i < STATUS_SLICED_PROTECTED * 2; i++) {
                char *more = NULL;

                ck_assert_int_ge(asprintf(&more, "%s  app%u:\n    cgroup: /apps/app%u\n    memory: {min: 1M}\n", policy,
                                          i, i),
                                 0);
                free(policy);
                policy = more;
        }
        fake_daemon_start(&d, policy, no_jobs);
        memset(replies, 0, sizeof(replies));
        ck_assert_int_eq(status_answer(&d.api, true, false, on_reply, 0, &listed), 0);
        ck_assert_ptr_nonnull(listed);
        ck_assert_int_eq(status_answer(&d.api, false, false, on_reply, 1, &now), 1);
        for (int i = 0; i < 1000 && !replies[1]; i++)
                ck_assert_int_ge(sd_event_run(d.event, 0), 0);
        ck_assert_ptr_nonnull(replies[1]);
        now = json_as_sent(status_json(&d.api));
        want = fields_of(now, "protected", "name");
        got = fields_of(replies[1], "protected", "name");
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(replies[1], "protected")),
                          STATUS_SLICED_PROTECTED * 2);
        json_object_put(replies[1]);
        json_object_put(now);
        json_object_put(listed);
        fake_daemon_stop(&d);
}
END_TEST

/* A sliced answer as it is (not as sent): in another of json-c's formats its jobs are what json-c writes of them. */
static char *pretty;
static void on_reply_pretty(struct api *api, uint64_t client, json_object *resp) {
        json_object *parsed;

        ck_assert_ptr_nonnull(resp);
        pretty = strdup(json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PRETTY));
        parsed = json_tokener_parse(pretty);
        ck_assert_ptr_nonnull(parsed);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(parsed, "jobs")), SLICED_JOBS);
        ck_assert_msg(streq(pretty, json_object_to_json_string_ext(parsed, JSON_C_TO_STRING_PRETTY)),
                      "not as json-c writes it");
        json_object_put(parsed);
        json_object_put(resp);
}

START_TEST(test_status_sliced_text_in_another_format) {
        struct fake_daemon d;
        json_object *ignored = NULL;

        fake_daemon_start(&d, "jobs:\n  backup:\n    memory: {high: 256M}\n", sliced_jobs);
        pretty = NULL;
        ck_assert_int_eq(status_answer(&d.api, true, false, on_reply_pretty, 0, &ignored), 1);
        for (int i = 0; i < 1000 && !pretty; i++)
                ck_assert_int_ge(sd_event_run(d.event, 0), 0);
        ck_assert_ptr_nonnull(pretty);
        free(pretty);
        fake_daemon_stop(&d);
}
END_TEST

Suite *status_suite(void) {
        Suite *s = suite_create("status");
        TCase *tc = tcase_create("golden");

        tcase_add_test(tc, test_status_golden);
        tcase_add_test(tc, test_status_jobs_in_every_format);
        tcase_add_test(tc, test_status_many_jobs_figures_in_the_background);
        tcase_add_test(tc, test_status_many_jobs_in_slices);
        tcase_add_test(tc, test_status_sliced_text_in_another_format);
        tcase_add_test(tc, test_status_many_protected_in_slices);
        suite_add_tcase(s, tc);
        return s;
}
