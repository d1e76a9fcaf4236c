/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagewardenctl's renderings (src/ctl/ctl-print.c) against golden files:
 * tests/golden/ctl/NAME.json is a response as pagewardend sends it (built by
 * src/daemon/manager-status.c, manager-governor.c and manager-control.c;
 * indented here for the reader, the daemon sends one line), NAME.ok what
 * pagewardenctl prints for it, with times in UTC.  When the output differs,
 * the test names the first line that does and leaves the whole output in
 * ctl-print-NAME.out in the current directory: diff it against the .ok file,
 * and copy it over the .ok file if the change is meant.
 */
#include <time.h>

#include "common.h"
#include "ctl-print.h"
#include "ctl-suggest.h"

#define GOLDEN_DIR TOP_SRCDIR "/tests/golden/ctl/"

typedef int (*printer_t)(FILE *f, json_object *resp);

static int print_placed(FILE *f, json_object *resp) {
        return ctl_print_placed(f, resp, 1.234);
}

static int print_failure(FILE *f, json_object *resp) {
        struct ctl_response r = { .obj = resp };

        ctl_print_failure(f, &r, NULL);
        return 0;
}

/* Two seconds after top-prev.json, for the rates. */
static int print_top(FILE *f, json_object *resp) {
        json_object *prev = json_object_from_file(GOLDEN_DIR "top-prev.json");
        int r;

        ck_assert_ptr_nonnull(prev);
        r = ctl_print_top(f, resp, prev, 2.0, "12:00:00");
        json_object_put(prev);
        return r;
}

static int print_report_line(FILE *f, json_object *resp) {
        json_object *job = NULL;

        ck_assert(json_object_object_get_ex(resp, "job", &job));
        ctl_print_report_line(f, job);
        return 0;
}

static int print_top_first(FILE *f, json_object *resp) {
        return ctl_print_top(f, resp, NULL, 0, "12:00:00");
}

static int print_suggest(FILE *f, json_object *resp) {
        return ctl_print_suggest(f, resp, false);
}

static int print_suggest_policy(FILE *f, json_object *resp) {
        return ctl_print_suggest(f, resp, true);
}

static const struct {
        const char *name;
        printer_t print;
        const char *json; /* the response, if not NAME.json */
        struct ctl_print_style style;
} goldens[] = {
        { "status-idle", ctl_print_status },        /* no job: the governor idle, a class without cgroup */
        { "status-jobs", ctl_print_status },        /* jobs run, the governor acts, a protected cgroup is missing */
        { "status-left-policy", ctl_print_status }, /* classes a reload removed while their jobs run */
        { "status-empty", ctl_print_status },       /* nothing but "ok" (another version of the daemon) */
        { "status-odd", ctl_print_status },         /* fields of unexpected types, control characters, UTF-8 */
        /* status-jobs with the fields that metrics reads (the daemon's own, the classes' governor counts, the
         * latency's buckets, PSI totals, faults): status prints the same. */
        { "status-jobs", ctl_print_status, "status-metrics" },
        { "list", ctl_print_list },
        { "list-empty", ctl_print_list },
        { "show", ctl_print_show },
        { "show-left-policy", ctl_print_show },
        { "show-ended", ctl_print_show }, /* an ended job: its report */
        { "show-oom", ctl_print_show },   /* OOM-killed, counted from adoption, its peak perhaps an earlier job's */
        { "list-all", ctl_print_list },   /* list --all: the ended ones too, one without counters */
        /* A daemon with many jobs: figures read 7 s ago, and a job's not read yet, said under the table. */
        { "list-figures-age", ctl_print_list },
        { "report-line", print_report_line, "show-oom" },
        /* A job whose scope counted no memory nor I/O (systemd, no controller): "not measured", never 0 B. */
        { "show-unmeasured", ctl_print_show },
        { "report-line-unmeasured", print_report_line, "show-unmeasured" },
        /* A job in a scope whose I/O its class counted while it ran alone there (from 42 s after its start). */
        { "show-class-io", ctl_print_show },
        /* A running job in a systemd scope without a memory controller: its processes, its memory "not measured". */
        { "show-scope", ctl_print_show },
        /* A unit whose cgroup systemd removed before its end was read: its figures as last read, and when. */
        { "show-unit-sampled", ctl_print_show },
        { "moved", ctl_print_moved },
        { "placed", print_placed },
        { "reloaded", ctl_print_reloaded },
        { "failure-reload", print_failure },
        { "failure-bare", print_failure },
        /* On an 80-column terminal: long cells cut, states in colour, and without the column headers. */
        { "status-jobs-80", ctl_print_status, "status-jobs", { .width = 80, .color = true } },
        { "list-no-legend", ctl_print_list, "list", { .no_legend = true } },
        /* top: rates against a status two seconds older; its first screen, without one; 100 columns. */
        { "top", print_top, "status-jobs", { .width = 100 } },
        { "top-first", print_top_first, "status-jobs", { .width = 100 } },
        /* suggest: a unit, a session's program, systemd-run's unit (borg, by its script), a plain cgroup (its own
         * class, with under:), a session whose processes had ended; the class name the policy has is skipped */
        { "suggest", print_suggest },
        { "suggest-policy", print_suggest_policy, "suggest" },
        { "suggest-none", print_suggest },
};

/* Times print in local time: make it UTC, so that the golden files hold everywhere. */
static void utc(void) {
        ck_assert_int_eq(setenv("TZ", "UTC", 1), 0);
        tzset();
}

static json_object *parse_json(const char *text) {
        enum json_tokener_error e;
        json_object *o = json_tokener_parse_verbose(text, &e);

        ck_assert_msg(o, "invalid JSON: %s", json_tokener_error_desc(e));
        return o;
}

static json_object *load_json(const char *path) {
        _cleanup_free_ char *text = NULL;
        json_object *o;

        ck_assert_msg(read_full_file(path, 1 << 20, &text, NULL) >= 0, "cannot read %s", path);
        o = parse_json(text);
        ck_assert_msg(json_object_is_type(o, json_type_object), "%s is not a JSON object", path);
        return o;
}

/* What print writes for resp. */
static char *print_to_string(printer_t print, json_object *resp) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(print(f, resp), 0);
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

/* The first line where a and b differ: its number (from 1), and both lines. */
static unsigned first_difference(const char *a, const char *b, char **ret_a, char **ret_b) {
        unsigned line = 1;

        for (; *a && *a == *b; a++, b++)
                if (*a == '\n')
                        line++;
        while (line > 1 && a[-1] != '\n') {
                a--;
                b--;
        }
        *ret_a = strndup(a, strcspn(a, "\n"));
        *ret_b = strndup(b, strcspn(b, "\n"));
        return line;
}

static void assert_golden(const char *name, const char *out) {
        _cleanup_free_ char *ok_path = NULL, *out_path = NULL, *expected = NULL, *want = NULL, *got = NULL;
        unsigned line;

        ck_assert_int_ge(asprintf(&ok_path, GOLDEN_DIR "%s.ok", name), 0);
        ck_assert_msg(read_full_file(ok_path, 1 << 20, &expected, NULL) >= 0, "cannot read %s", ok_path);
        if (streq(out, expected))
                return;
        ck_assert_int_ge(asprintf(&out_path, "ctl-print-%s.out", name), 0);
        ck_assert_int_eq(write_file_atomic(out_path, out), 0);
        line = first_difference(expected, out, &want, &got);
        ck_abort_msg("%s:%u: expected \"%s\", got \"%s\" (the output is in %s)", ok_path, line, want, got, out_path);
}

START_TEST(test_ctl_print_golden) {
        _cleanup_free_ char *json_path = NULL, *out = NULL;
        json_object *resp;

        ck_assert_int_ge(asprintf(&json_path, GOLDEN_DIR "%s.json", goldens[_i].json ?: goldens[_i].name), 0);
        resp = load_json(json_path);
        ctl_print_set_style(&goldens[_i].style);
        out = print_to_string(goldens[_i].print, resp);
        ctl_print_set_style(NULL);
        json_object_put(resp);
        assert_golden(goldens[_i].name, out);
}
END_TEST

/* Today's times print as HH:MM:SS in tables, with the date in show (the golden files have other days). */
START_TEST(test_ctl_print_today) {
        static const char fmt[] =
                "{\"ok\":true,\"job\":{\"id\":1,\"started\":%lld},"
                "\"jobs\":[{\"id\":1,\"started\":%lld}]}";
        _cleanup_free_ char *json = NULL, *list = NULL, *show = NULL;
        time_t now = time(NULL), later;
        char hms[32], full[64];
        struct tm tm, tm_later;
        json_object *resp;

        ck_assert_ptr_nonnull(localtime_r(&now, &tm));
        strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
        strftime(full, sizeof(full), "%Y-%m-%d %H:%M:%S", &tm);
        ck_assert_int_ge(asprintf(&json, fmt, (long long) now, (long long) now), 0);
        resp = parse_json(json);
        list = print_to_string(ctl_print_list, resp);
        show = print_to_string(ctl_print_show, resp);
        json_object_put(resp);
        later = time(NULL);
        ck_assert_ptr_nonnull(localtime_r(&later, &tm_later));
        if (tm_later.tm_yday != tm.tm_yday)
                return; /* midnight passed meanwhile: "now" is no longer today */
        ck_assert_msg(strstr(list, hms) && !strstr(list, full), "list: %s", list);
        ck_assert_msg(strstr(show, full), "show: %s", show);
}
END_TEST

/* suggest --policy prints a policy file that is valid as printed: its classes, their rules. */
START_TEST(test_ctl_suggest_policy_valid) {
        _cleanup_free_ char *text = NULL;
        struct parse_result res;

        ck_assert_int_ge(read_full_file(GOLDEN_DIR "suggest-policy.ok", 1 << 20, &text, NULL), 0);
        parse_policy(text, &res);
        ck_assert_msg(res.r >= 0 && res.diags.n_errors == 0, "%s", strempty(res.errors));
        ck_assert_uint_eq(res.policy.n_classes, 2);
        ck_assert_str_eq(res.policy.classes[0].name, "unplaced-2");
        parse_result_done(&res);
}
END_TEST

Suite *ctl_print_suite(void) {
        Suite *s = suite_create("ctl-print");
        TCase *tc = tcase_create("golden");

        tcase_add_checked_fixture(tc, utc, NULL);
        tcase_add_loop_test(tc, test_ctl_print_golden, 0, ELEMENTSOF(goldens));
        tcase_add_test(tc, test_ctl_print_today);
        tcase_add_test(tc, test_ctl_suggest_policy_valid);
        suite_add_tcase(s, tc);
        return s;
}
