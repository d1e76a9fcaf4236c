/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "fail-alloc.h"
#include "yamltree.h"

START_TEST(test_settings_defaults) {
        struct settings_result r;

        parse_settings("/etc/pagewarden/pagewarden.yaml", "", &r);
        ck_assert_int_eq(r.r, 0);
        ck_assert_str_eq(r.s.policy_dir, "/etc/pagewarden/policies.d");
        ck_assert_str_eq(r.s.socket, "/run/pagewarden/control.sock");
        ck_assert_ptr_null(r.s.socket_group);
        ck_assert_str_eq(r.s.cgroup_root, "pagewarden.slice");
        ck_assert_int_eq(r.s.backend, PW_BACKEND_AUTO);
        ck_assert(!r.s.restore_on_stop);
        ck_assert(!r.s.run_fallback);
        ck_assert_int_eq(r.s.log_level, PW_LOG_INFO);
        ck_assert_uint_eq(r.s.pressure.threshold, 1000);
        ck_assert_uint_eq(r.s.pressure.window_usec, 500000);
        ck_assert_uint_eq(r.s.pressure.release, 100);
        ck_assert_uint_eq(r.s.pressure.cooldown_usec, 30000000);
        ck_assert_uint_eq(r.s.reserve, UNITS_MAX); /* a tenth of RAM, at least 64 MiB: governor_reserve() */
        settings_result_done(&r);
}
END_TEST

START_TEST(test_settings_values) {
        static const char text[] =
                "policy_dir: ../pol\n"
                "socket: /run/pw.sock\n"
                "socket_group: root\n"
                "cgroup_root: /jobs.slice/pw\n"
                "backend: cgroupfs\n"
                "restore_on_stop: true\n"
                "run_fallback: true\n"
                "log_level: debug\n"
                "reserve: 512M\n"
                "pressure: {threshold: 20%, window: 2s, release: 2.5%, cooldown: 1m}\n";
        struct settings_result r;

        parse_settings("/srv/conf/pw.yaml", text, &r);
        ck_assert_msg(r.r == 0, "%s", r.errors);
        ck_assert_str_eq(r.s.policy_dir, "/srv/conf/../pol");
        ck_assert_str_eq(r.s.socket, "/run/pw.sock");
        ck_assert_str_eq(r.s.socket_group, "root");
        ck_assert_str_eq(r.s.cgroup_root, "jobs.slice/pw");
        ck_assert_int_eq(r.s.backend, PW_BACKEND_CGROUPFS);
        ck_assert(r.s.restore_on_stop);
        ck_assert(r.s.run_fallback);
        ck_assert_int_eq(r.s.log_level, PW_LOG_DEBUG);
        ck_assert_uint_eq(r.s.pressure.threshold, 2000);
        ck_assert_uint_eq(r.s.pressure.window_usec, 2000000);
        ck_assert_uint_eq(r.s.pressure.release, 250);
        ck_assert_uint_eq(r.s.pressure.cooldown_usec, 60000000);
        ck_assert_uint_eq(r.s.reserve, 512 * 1048576);
        settings_result_done(&r);
        /* A share of RAM (the test context has 16 GiB). */
        parse_settings("/srv/conf/pw.yaml", "reserve: 25%\n", &r);
        ck_assert_msg(r.r == 0, "%s", r.errors);
        ck_assert_uint_eq(r.s.reserve, UINT64_C(4) << 30);
        settings_result_done(&r);
}
END_TEST

static const struct {
        const char *text;
        unsigned line, column;
        const char *needle;
} settings_errors[] = {
        { "socket: run/x\n", 1, 9, "must be an absolute path" },
        { "socket: "
          "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aa\n",
          1, 9, "longer than 107 bytes" },
        { "socket_group: no-such-group-pw\n", 1, 15, "unknown group" },
        { "cgroup_root: /\n", 1, 14, "root cgroup" },
        { "cgroup_root: a/../b\n", 1, 14, "'.' or '..'" },
        { "backend: docker\n", 1, 10, "expected auto, systemd or cgroupfs" },
        { "log_level: verbose\n", 1, 12, "expected err, warning" },
        { "restore_on_stop: 1\n", 1, 18, "expected true or false" },
        { "pressure: {window: 100ms}\n", 1, 20, "between 500ms and 10s" },
        { "pressure: {window: 11s}\n", 1, 20, "between 500ms and 10s" },
        { "pressure: {threshold: 0%}\n", 1, 23, "above 0%" },
        { "pressure: {threshold: 5%, release: 5%}\n", 1, 36, "below the threshold" },
        { "pressure: {cooldown: 0s}\n", 1, 22, "between 1s and 60m" },
        { "pressure: {stall: 1s}\n", 1, 12, "unknown key 'stall'" },
        { "jobs: {}\n", 1, 1, "policies belong in files in the policy directory" },
        { "reserve: max\n", 1, 10, "reserve cannot be max" },
        { "reserve: 17G\n", 1, 10, "is not below the RAM (16 GiB)" },
        { "reserve: 100%\n", 1, 10, "is not below the RAM" },
        { "reserve: lots\n", 1, 10, "expected a number" },
        { "[1]\n", 1, 1, "the settings file must be a mapping" },
};

START_TEST(test_settings_errors) {
        struct settings_result r;

        parse_settings("/etc/pagewarden/pagewarden.yaml", settings_errors[_i].text, &r);
        ck_assert_int_eq(r.r, -EINVAL);
        ck_assert_msg(has_diag(&r.diags, settings_errors[_i].line, settings_errors[_i].column,
                               settings_errors[_i].needle),
                      "want %u:%u %s, got:\n%s", settings_errors[_i].line, settings_errors[_i].column,
                      settings_errors[_i].needle, r.errors);
        settings_result_done(&r);
}
END_TEST

/* config_load reads the settings, then every file of its policy directory, and reports both. */
START_TEST(test_config_load) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_settings s = {};
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *conf = write_file(dir, "pw.yaml", "log_level: loud\n");
        _cleanup_free_ char *a = write_file(dir, "policies.d/a.yaml", "jobs: {backup: {memory: {high: 1X}}}\n");
        _cleanup_free_ char *b = write_file(dir, "policies.d/b.yaml", "jobs: {copy: {}}\n");
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(config_load(&ctx, conf, false, &s, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(d.n == 2, "%s", text);
        ck_assert_ptr_nonnull(policy_find_class(&p, "copy"));
        settings_done(&s);
        policy_done(&p);
        diag_list_done(&d);

        free(write_file(dir, "pw.yaml", "log_level: notice\n"));
        free(write_file(dir, "policies.d/a.yaml", "jobs: {backup: {memory: {high: 1G}}}\n"));
        ck_assert_int_eq(config_load(&ctx, conf, false, &s, &p, &d), 0);
        ck_assert_uint_eq(p.n_classes, 2);
        ck_assert_int_eq(s.log_level, PW_LOG_NOTICE);
        settings_done(&s);
        policy_done(&p);

        /* The default settings file may be missing: defaults, policies beside it. */
        free(conf);
        conf = path_join(dir, "absent.yaml");
        ck_assert_int_eq(config_load(&ctx, conf, true, &s, &p, &d), 0);
        ck_assert_ptr_null(s.path);
        ck_assert_uint_eq(p.n_classes, 2);
        settings_done(&s);
        policy_done(&p);
        /* A settings file named explicitly must exist. */
        ck_assert_int_eq(config_load(&ctx, conf, false, &s, &p, &d), -EINVAL);
        ck_assert(has_diag(&d, 0, 0, "cannot open: No such file or directory"));
        settings_done(&s);
        policy_done(&p);
        diag_list_done(&d);
        tmpdir_cleanup(dir);
}
END_TEST

/* The settings file has the bounds of every file: size, nesting, nodes; errors capped per file. */
START_TEST(test_settings_limits) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_settings s = {};
        struct pw_policy p = {};
        struct diag_list d = {};
        char *big = malloc(YTREE_MAX_FILE_SIZE + 2), *text;
        _cleanup_free_ char *conf = NULL, *pol = NULL;
        struct settings_result r;
        uint64_t t0, t;
        size_t n = 0;

        /* Larger than 1 MiB: refused before it is read. */
        ck_assert_ptr_nonnull(big);
        memset(big, '#', YTREE_MAX_FILE_SIZE + 1);
        big[YTREE_MAX_FILE_SIZE] = '\n';
        big[YTREE_MAX_FILE_SIZE + 1] = '\0';
        conf = write_file(dir, "pw.yaml", big);
        ck_assert_int_eq(settings_load(&ctx, conf, false, &s, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "pw.yaml: error: file is larger than 1 MiB (1048576 bytes)\n"), "%s", text);
        free(text);
        settings_done(&s);
        diag_list_done(&d);

        /* 100,000 nested '[' and then 1 MiB of unknown keys: refused at once, at most 100 errors shown. */
        memset(big, '[', 100000);
        big[100000] = '\0';
        t0 = now_usec(CLOCK_PROCESS_CPUTIME_ID);
        parse_settings("/etc/pagewarden/pagewarden.yaml", big, &r);
        t = now_usec(CLOCK_PROCESS_CPUTIME_ID) - t0;
        fprintf(stderr, "settings: 100,000 nested '[': %.1f ms of CPU\n", (double) t / 1000);
        ck_assert_int_eq(r.r, -EINVAL);
        ck_assert(has_diag(&r.diags, 1, YTREE_MAX_DEPTH + 1, "nesting is too deep"));
        ck_assert_uint_lt(t, 2 * 1000000);
        settings_result_done(&r);

        while (n + 16 < YTREE_MAX_FILE_SIZE)
                n += (size_t) sprintf(big + n, "k%zu: 1\n", n);
        t0 = now_usec(CLOCK_PROCESS_CPUTIME_ID);
        parse_settings("/etc/pagewarden/pagewarden.yaml", big, &r);
        t = now_usec(CLOCK_PROCESS_CPUTIME_ID) - t0;
        fprintf(stderr, "settings: 1 MiB of unknown keys: %.1f ms of CPU, %zu errors\n", (double) t / 1000,
                r.diags.n_errors);
        ck_assert_int_eq(r.r, -EINVAL);
        ck_assert_uint_eq(r.diags.n, DIAG_MAX_PER_FILE);
        /* Line L holds nodes 2L and 2L + 1 (the map is node 1): node 65537 is the value of line 32768. */
        ck_assert(strstr(r.errors,
                         "pagewarden.yaml:32768:10: error: more than 65536 values, lists and mappings in one "
                         "file (reading stops here)\n"));
        ck_assert_ptr_nonnull(strstr(r.errors, "pagewarden.yaml: ... and "));
        ck_assert_uint_lt(t, 2 * 1000000);
        settings_result_done(&r);

        /* Each file has its own 100: the policies' errors are reported after those of the settings. */
        pol = write_file(dir, "policies.d/a.yaml", "jobs: {backup: {memory: {high: 1X}}}\n");
        free(write_file(dir, "pw.yaml", big));
        ck_assert_int_eq(config_load(&ctx, conf, false, &s, &p, &d), -EINVAL);
        ck_assert_uint_eq(d.n, DIAG_MAX_PER_FILE + 1);
        ck_assert(has_diag(&d, 1, 32, "expected a size"));
        settings_done(&s);
        policy_done(&p);
        diag_list_done(&d);
        free(big);
        tmpdir_cleanup(dir);
}
END_TEST

struct config_run {
        const char *path;
        struct fail_alloc_ref ref;
};

/* config_load of run's settings file; everything freed. */
static int config_run(void *data) {
        struct config_run *run = data;
        struct policy_context ctx = test_context();
        struct pw_settings s = {};
        struct pw_policy p = {};
        struct diag_list d = {};
        int r;

        ctx.resolve_users = false; /* NSS keeps caches: not this test's business */
        r = config_load(&ctx, run->path, false, &s, &p, &d);
        r = fail_alloc_same(&run->ref, r, digest_diags(digest_policy(digest_settings(DIGEST_INIT, &s), &p), &d));
        settings_done(&s);
        policy_done(&p);
        diag_list_done(&d);
        return r;
}

/* Memory running out anywhere while loading gives -ENOMEM: not an abort, a crash, a leak or a wrong result. */
START_TEST(test_config_load_enomem) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *conf = write_file(dir, "pw.yaml",
                                               "socket: /run/pw.sock\nsocket_group: \"0\"\ncgroup_root: /a.slice\n"
                                               "policy_dir: pol\nlog_level: debug\n"
                                               "pressure: {threshold: 20%, window: 2s, release: 2.5%, cooldown: 1m}\n");

        free(write_file(dir, "pol/a.yaml", "jobs: {backup: {memory: {high: 1G}}}\n"));
        ck_assert_uint_gt(fail_alloc_each(config_run, &(struct config_run){ .path = conf }, 0), 20);
        free(write_file(dir, "pw.yaml", "socket: run\ncgroup_root: /\nbackend: x\npressure: {window: 1ms}\nbad: 1\n"));
        ck_assert_uint_gt(fail_alloc_each(config_run, &(struct config_run){ .path = conf }, -EINVAL), 20);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *settings_suite(void) {
        Suite *s = suite_create("settings");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_settings_defaults);
        tcase_add_test(tc, test_settings_values);
        tcase_add_loop_test(tc, test_settings_errors, 0, ELEMENTSOF(settings_errors));
        tcase_add_test(tc, test_config_load);
        tcase_add_test(tc, test_settings_limits);
        tcase_add_test(tc, test_config_load_enomem);
        suite_add_tcase(s, tc);
        return s;
}
