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
#include <sys/xattr.h>

#include "cgroup.h"
#include "common.h"
#include "status.h"

#define GOLDEN TOP_SRCDIR "/tests/unit/data/status.json"

static char *fake_class_path(struct backend *b, const char *class) {
        char *p;

        return asprintf(&p, "pagewarden.slice/%s", class) < 0 ? NULL : p;
}

static int fake_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path) {
        if (!p->cgroup)
                return -EOPNOTSUPP;
        *ret_path = strdup(p->cgroup);
        return *ret_path ? 0 : -ENOMEM;
}

static int fake_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        return cgroup_scan(b->engine, ret, ret_n);
}

static int fake_thaw_all(struct backend *b) {
        return 0;
}

static void on_changed(void *userdata, const char *class, bool ended) {
}

static const struct backend_ops fake_ops = {
        .name = "fake",
        .caps = { .releases_jobs = true },
        .class_path = fake_class_path,
        .protect_path = fake_protect_path,
        .scan = fake_scan,
        .thaw_all = fake_thaw_all,
};

/* A cgroup's files, "name=value" each. */
static void cgroup_files(const char *dir, const char *cgroup, const char *const *files) {
        for (size_t i = 0; files[i]; i++) {
                const char *eq = strchr(files[i], '=');
                _cleanup_free_ char *name = NULL;

                ck_assert_ptr_nonnull(eq);
                ck_assert_int_ge(asprintf(&name, "%s/%.*s", cgroup, (int) (eq - files[i]), files[i]), 0);
                free(write_file(dir, name, eq + 1));
        }
}

static void job_slot(const char *dir, const char *slot, const char *label) {
        static const char *const files[] = { "cgroup.events=populated 1\nfrozen 0\n",
                                             "cgroup.procs=4242\n",
                                             "cgroup.freeze=0\n",
                                             "memory.current=41943040\n",
                                             "memory.stat=anon 1048576\nfile 40894464\n",
                                             "memory.high=268435456\n",
                                             "memory.max=max\n",
                                             "memory.events=low 0\nhigh 3\nmax 0\noom 0\noom_kill 0\n",
                                             "io.stat=8:0 rbytes=1000 wbytes=2000 rios=1 wios=1\n",
                                             NULL };
        _cleanup_free_ char *path = NULL;

        cgroup_files(dir, slot, files);
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, slot), 0);
        ck_assert_msg(setxattr(path, "user.pagewarden.job", label, strlen(label), 0) == 0,
                      "setxattr %s: %m (the unit tests need user xattrs on /tmp, as cgroupfs has them)", path);
}

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

        cgroup_files(dir, "pagewarden.slice/backup", class);
        job_slot(dir, "pagewarden.slice/backup/slot-0",
                 "id=7 uid=0 started=1714644300250000 name=nightly by=rule exe /usr/bin/borg (jobs.yaml:4)");
        /* A class that left the policy while its job still runs */
        cgroup_files(dir, "pagewarden.slice/old", class);
        job_slot(dir, "pagewarden.slice/old/slot-0", "id=3 uid=0 started=1714640000000000 name=copy by=move");
        cgroup_files(dir, "system.slice/db.service", app);
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
        json_object *daemon, *actions;

        zero(s, "version");
        ck_assert(json_object_object_get_ex(s, "daemon", &daemon));
        zero(daemon, "pid");
        zero(daemon, "started");
        zero(daemon, "memory_rss");
        zero(daemon, "cpu_us");
        ck_assert(json_object_object_get_ex(s, "actions", &actions));
        for (size_t i = 0; i < json_object_array_length(actions); i++)
                zero(json_object_array_get_idx(actions, i), "time");
}

START_TEST(test_status_golden) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct backend b = { .ops = &fake_ops, .root = (char *) "pagewarden.slice" };
        struct pw_policy policy = {};
        struct jobs jobs = {};
        struct govern govern = {};
        struct protect protect = {};
        struct observe observe = {};
        struct action_log log = {};
        struct loop_stats loop = {};
        bool stopping = false;
        struct api api = { .backend = &b,
                           .policy = &policy,
                           .jobs = &jobs,
                           .govern = &govern,
                           .protect = &protect,
                           .observe = &observe,
                           .log = &log,
                           .loop = &loop,
                           .stopping = &stopping };
        struct parse_result p;
        json_object *status;
        _cleanup_free_ char *want = NULL;
        const char *got;
        char *dir = tmpdir_new();

        parse_policy(
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
                &p);
        ck_assert_msg(p.r == 0, "%s", p.errors);
        policy = p.policy;
        p.policy = (struct pw_policy){};
        tree(dir);
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &b.engine), 0);
        api.event = event;
        jobs_init(&jobs, event, &b, &log, on_changed, NULL, NULL);
        ck_assert_int_eq(jobs_adopt(&jobs), 0);
        ck_assert_uint_eq(jobs.n, 2);
        govern_init(&govern);
        govern.policy = &policy;
        govern.jobs = &jobs;
        govern.protect = &protect;
        ck_assert_int_eq(observe_init(&observe, NULL, b.engine, NULL, NULL, NULL, 86400), 0);

        status = status_json(&api);
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
        observe_done(&observe);
        govern_done(&govern);
        jobs_done(&jobs);
        action_log_done(&log);
        policy_done(&policy);
        parse_result_done(&p);
        cgroup_engine_free(b.engine);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *status_suite(void) {
        Suite *s = suite_create("status");
        TCase *tc = tcase_create("golden");

        tcase_add_test(tc, test_status_golden);
        suite_add_tcase(s, tc);
        return s;
}
