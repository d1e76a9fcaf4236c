/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Who evicts the protected applications: the pure decisions (evidence.c) and one observer over a fake tree
 * (observe.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "evidence.h"
#include "observe.h"
#include "rules.h"

#define MIB (UINT64_C(1) << 20)

static int64_t num(json_object *o, const char *key) {
        json_object *v;

        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s in %s", key, json_object_to_json_string(o));
        return json_object_is_type(v, json_type_null) ? -1 : json_object_get_int64(v);
}

static const char *str(json_object *o, const char *key) {
        json_object *v;

        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
        return json_object_is_type(v, json_type_null) ? NULL : json_object_get_string(v);
}

START_TEST(test_evidence_classify) {
        static const struct {
                const char *path;
                bool children;
                enum evidence_kind kind;
                const char *unit;
        } cases[] = {
                { "system.slice", true, EVIDENCE_DESCEND, "" },
                { "system.slice/backup-db.service", false, EVIDENCE_CANDIDATE, "backup-db.service" },
                /* A unit with children of its own (delegated) is still one unit */
                { "system.slice/docker.service", true, EVIDENCE_CANDIDATE, "docker.service" },
                { "system.slice/run-u12.service", false, EVIDENCE_CANDIDATE, "" },
                { "system.slice/cron.service", false, EVIDENCE_CANDIDATE, "cron.service" },
                { "user.slice/user-1002.slice/session-3.scope", false, EVIDENCE_CANDIDATE, "" },
                { "user.slice/user-1002.slice/user@1002.service", true, EVIDENCE_DESCEND, "" },
                { "user.slice/user-1002.slice/user@1002.service/app.slice/sync.service", false, EVIDENCE_CANDIDATE,
                  "" },
                { "init.scope", false, EVIDENCE_SKIP, "" },
                { "machine.slice", false, EVIDENCE_DESCEND, "" },
                /* cgroupfs hosts: plain cgroups, looked at where they have no children */
                { "srv/jobs", false, EVIDENCE_CANDIDATE, "" },
                { "srv", true, EVIDENCE_DESCEND, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char unit[256];

                ck_assert_int_eq(evidence_classify(cases[i].path, cases[i].children, unit, sizeof(unit)),
                                 cases[i].kind);
                ck_assert_str_eq(unit, cases[i].unit);
        }
        ck_assert_int_eq(evidence_path_uid("user.slice/user-1002.slice/session-3.scope"), 1002);
        ck_assert_int_eq(evidence_path_uid("system.slice/user-x.slice"), -1);
        ck_assert_int_eq(evidence_path_uid("system.slice/backup.service"), -1);
        ck_assert_int_eq(evidence_path_uid("user.slice/user-99999999999.slice"), -1);
}
END_TEST

START_TEST(test_evidence_window) {
        struct evidence_counters a, b;
        struct evidence_delta d;

        evidence_counters_parse("anon 0\nfile 1048576\npgsteal 10\nworkingset_refault_file 2\n",
                                "8:0 rbytes=1000 wbytes=0 rios=1 wios=0\n", &a);
        ck_assert(a.have_memory && a.have_io);
        ck_assert_uint_eq(a.file, MIB);
        /* The cache grew by 8 MiB and 2048 pages were reclaimed from it: 16 MiB entered it. */
        evidence_counters_parse("file 9437184\npgsteal 2058\nworkingset_refault_file 2\n", NULL, &b);
        ck_assert(!b.have_io);
        ck_assert(evidence_window(&a, &b, 4096, &d));
        ck_assert_uint_eq(d.charged, 16 * MIB);
        ck_assert_uint_eq(d.read + d.written, 0); /* no io.stat now: no I/O figure */
        ck_assert_uint_eq(d.refaulted, 0);
        /* One page less is not streaming. */
        b.pgsteal--;
        ck_assert(!evidence_window(&a, &b, 4096, &d));
        /* I/O alone counts (written to a file whose pages went at once, or direct I/O). */
        evidence_counters_parse(NULL, "8:0 rbytes=1000 wbytes=0\n", &a);
        evidence_counters_parse(NULL, "8:0 rbytes=1000 wbytes=16777216\n8:16 rbytes=1000 wbytes=0\n", &b);
        ck_assert(evidence_window(&a, &b, 4096, &d));
        ck_assert_uint_eq(d.written, 16 * MIB);
        ck_assert_uint_eq(d.read, 1000);
        /* A cache that only shrank took nothing in: reclaim took its old pages (1 GiB -> 424 MiB, 600 MiB
         * reclaimed); one that shrank less than reclaim took did take in the difference. */
        evidence_counters_parse("file 1073741824\npgsteal 0\n", NULL, &a);
        evidence_counters_parse("file 444596224\npgsteal 153600\n", NULL, &b);
        ck_assert(!evidence_window(&a, &b, 4096, &d));
        ck_assert_uint_eq(d.charged, 0);
        evidence_counters_parse("file 943718400\npgsteal 76800\n", NULL, &b);
        ck_assert(evidence_window(&a, &b, 4096, &d));
        ck_assert_uint_eq(d.charged, 900 * MIB + 300 * MIB - 1024 * MIB);
        /* A cgroup made again: its counters start from 0, and count from there. */
        evidence_counters_parse("file 0\npgsteal 100000\n", NULL, &a);
        evidence_counters_parse("file 0\npgsteal 8\n", NULL, &b);
        ck_assert(!evidence_window(&a, &b, 4096, &d));
        ck_assert_uint_eq(d.charged, 8 * 4096);
}
END_TEST

START_TEST(test_evidence_harmed) {
        struct governor_sample a = { .pgsteal = 100, .refaults = 10, .some_total = 1000 }, b = a;
        struct evidence_harm h;

        ck_assert(!evidence_harmed(&a, &b, 4096, &h));
        b.pgsteal = 100 + 1023; /* 4 MiB less a page */
        ck_assert(!evidence_harmed(&a, &b, 4096, &h));
        b.pgsteal++;
        ck_assert(evidence_harmed(&a, &b, 4096, &h));
        ck_assert_uint_eq(h.lost, 4 * MIB);
        b = a;
        b.refaults += EVIDENCE_REFAULTS_MIN;
        ck_assert(evidence_harmed(&a, &b, 4096, &h));
        b = a;
        b.some_total += EVIDENCE_STALL_MIN_USEC - 1;
        ck_assert(!evidence_harmed(&a, &b, 4096, &h));
        b.some_total++;
        ck_assert(evidence_harmed(&a, &b, 4096, &h));
}
END_TEST

static struct evidence_suspect suspect(const char *cgroup, const char *unit, uint64_t charged) {
        struct evidence_suspect s = { .uid = -1, .d = { .charged = charged } };

        snprintf(s.cgroup, sizeof(s.cgroup), "%s", cgroup);
        snprintf(s.unit, sizeof(s.unit), "%s", unit);
        return s;
}

START_TEST(test_evidence_episode) {
        struct evidence_harm db = { .name = "db", .lost = 8 * MIB, .refaults = 300, .stall_usec = 5000 };
        struct evidence_suspect s[EVIDENCE_EPISODE_SUSPECTS + 4];
        struct evidence_program tar = { .exe = "/usr/bin/tar", .cmdline = "tar cf x", .uid = 1002, .bytes = 10 };
        json_object *e = NULL, *list, *first, *apps, *summary;
        char largest[32];
        size_t n;

        for (size_t i = 0; i < ELEMENTSOF(s); i++) {
                char path[64];

                snprintf(path, sizeof(path), "/system.slice/s%zu.service", i);
                s[i] = suspect(path, path + strlen("/system.slice/"), (i + 1) * 20 * MIB);
        }
        /* A window names its largest */
        n = evidence_rank(s, ELEMENTSOF(s));
        ck_assert_uint_eq(n, EVIDENCE_WINDOW_SUSPECTS);
        snprintf(largest, sizeof(largest), "s%zu.service", ELEMENTSOF(s) - 1);
        ck_assert_str_eq(s[0].unit, largest);
        ck_assert_int_eq(evidence_episode_add(&e, 7, 100, 110, &db, 1, s, ELEMENTSOF(s)), 0);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(e, "suspects")), EVIDENCE_EPISODE_SUSPECTS);
        ck_assert_int_eq(num(e, "id"), 7);
        ck_assert_int_eq(num(e, "started"), 100);

        /* A second window: the same suspect again, a session's program, and more than an episode keeps */
        s[0].d.charged = 1;
        s[1] = suspect("/user.slice/user-1002.slice/session-3.scope", "", 500 * MIB);
        s[1].uid = 1002;
        evidence_add_program(&s[1], &tar);
        tar.bytes = 5; /* the same process seen earlier: the larger count stands */
        evidence_add_program(&s[1], &tar);
        ck_assert_uint_eq(s[1].n_programs, 1);
        ck_assert_uint_eq(s[1].programs[0].bytes, 10);
        ck_assert_int_eq(evidence_episode_add(&e, 8, 110, 120, &db, 1, s, 2), 0);
        ck_assert_int_eq(num(e, "id"), 7); /* still the same episode */
        ck_assert_int_eq(num(e, "ended"), 120);
        ck_assert_int_eq(num(e, "windows"), 2);
        apps = json_object_object_get(e, "applications");
        ck_assert_uint_eq(json_object_array_length(apps), 1);
        ck_assert_int_eq(num(json_object_array_get_idx(apps, 0), "lost_bytes"), 16 * MIB);
        ck_assert_int_eq(num(json_object_array_get_idx(apps, 0), "refaults"), 600);
        list = json_object_object_get(e, "suspects");
        ck_assert_uint_eq(json_object_array_length(list), EVIDENCE_EPISODE_SUSPECTS);
        /* The largest first: the session (500 MiB), then the largest service with both windows' shares */
        first = json_object_array_get_idx(list, 0);
        ck_assert_str_eq(str(first, "cgroup"), "/user.slice/user-1002.slice/session-3.scope");
        ck_assert_ptr_null(str(first, "unit"));
        ck_assert_int_eq(num(first, "uid"), 1002);
        ck_assert_int_eq(num(first, "read_bytes"), -1); /* never had io.stat: null, not 0 */
        ck_assert_str_eq(str(json_object_array_get_idx(json_object_object_get(first, "programs"), 0), "exe"),
                         "/usr/bin/tar");
        ck_assert_str_eq(str(json_object_array_get_idx(list, 1), "unit"), largest);
        ck_assert_int_eq(num(json_object_array_get_idx(list, 1), "charged_bytes"), ELEMENTSOF(s) * 20 * MIB + 1);
        ck_assert_int_eq(num(json_object_array_get_idx(list, 1), "windows"), 2);
        ck_assert_int_eq(num(json_object_array_get_idx(list, 1), "first"), 100);

        /* Over two episodes: one entry per unit, per program for work without one */
        {
                json_object *episodes = json_object_new_array(), *again = NULL;
                struct evidence_suspect one = suspect("/user.slice/user-1002.slice/session-9.scope", "", 30 * MIB);

                one.uid = 1002;
                evidence_add_program(&one, &tar);
                ck_assert_int_eq(evidence_episode_add(&again, 9, 200, 210, &db, 1, &one, 1), 0);
                json_object_array_add(episodes, e);
                json_object_array_add(episodes, again);
                summary = evidence_summary(episodes, 4);
                ck_assert_uint_eq(json_object_array_length(summary), 4);
                first = json_object_array_get_idx(summary, 0);
                ck_assert_str_eq(str(first, "name"), "/usr/bin/tar");
                ck_assert_int_eq(num(first, "episodes"), 2);
                ck_assert_int_eq(num(first, "charged_bytes"), 530 * MIB);
                ck_assert_str_eq(str(first, "cgroup"), "/user.slice/user-1002.slice/session-9.scope");
                ck_assert_int_eq(num(first, "last"), 210);
                /* db's losses in both episodes it was in */
                apps = json_object_object_get(first, "applications");
                ck_assert_int_eq(num(json_object_array_get_idx(apps, 0), "lost_bytes"), 24 * MIB);
                json_object_put(summary);
                json_object_put(episodes);
        }
}
END_TEST

START_TEST(test_rules_program_path) {
        char buf[256];

        rules_program_path("/usr/bin/python3.11", "/usr/bin/python3 /usr/bin/borg create ::x /src", buf, sizeof(buf));
        ck_assert_str_eq(buf, "/usr/bin/borg");
        rules_program_path("/usr/bin/rsync", "rsync -a /src/ /dst/", buf, sizeof(buf));
        ck_assert_str_eq(buf, "/usr/bin/rsync");
        /* An interpreter with no script path (python3 -c ...): the interpreter */
        rules_program_path("/usr/bin/python3.11", "python3 -c print(1)", buf, sizeof(buf));
        ck_assert_str_eq(buf, "/usr/bin/python3.11");
        rules_program_path("/usr/bin/perl", "/usr/bin/perl /usr/bin/pg_dump -Fc db", buf, sizeof(buf));
        ck_assert_str_eq(buf, "/usr/bin/pg_dump");
}
END_TEST

/* ---- the observer over a fake tree ---- */

struct fake {
        char *dir, *proc;
        bool with_job;
        bool two_apps; /* and cache.service protected too */
};

static int fake_scope(void *userdata, struct observe_app **ret_apps, size_t *ret_n_apps, char ***ret_skip,
                      size_t *ret_n_skip) {
        struct fake *f = userdata;
        struct observe_app *apps = calloc(2, sizeof(*apps));
        char **skip = calloc(2, sizeof(char *));

        ck_assert(apps && skip);
        snprintf(apps[0].name, sizeof(apps[0].name), "db");
        apps[0].path = strdup("system.slice/db.service");
        if (f->two_apps) {
                snprintf(apps[1].name, sizeof(apps[1].name), "cache");
                apps[1].path = strdup("system.slice/cache.service");
        }
        skip[0] = strdup("pagewarden.slice");
        if (f->with_job)
                skip[1] = strdup("system.slice/borgmatic.service"); /* a unit a rule placed */
        *ret_apps = apps;
        *ret_n_apps = f->two_apps ? 2 : 1;
        *ret_skip = skip;
        *ret_n_skip = f->with_job ? 2 : 1;
        return 0;
}

static void stat_file(struct fake *f, const char *cgroup, uint64_t file, uint64_t pgsteal) {
        char path[256], text[256];

        snprintf(path, sizeof(path), "%s/memory.stat", cgroup);
        snprintf(text, sizeof(text), "anon 4096\nfile %llu\npgsteal %llu\nworkingset_refault_file 0\n",
                 (unsigned long long) file, (unsigned long long) pgsteal);
        free(write_file(f->dir, path, text));
}

static void tree(struct fake *f, uint64_t step) {
        /* The protected application loses 2048 pages (8 MiB) a window from step 1 */
        stat_file(f, "system.slice/db.service", 100 * MIB, step * 2048);
        free(write_file(f->dir, "system.slice/db.service/memory.pressure",
                        "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
        /* A backup service reads 64 MiB a window through its cache */
        stat_file(f, "system.slice/backup-db.service", 64 * MIB, step * 64 * MIB / 4096);
        /* A login session copies: 32 MiB a window; its rsync's own counters */
        stat_file(f, "user.slice/user-1002.slice/session-3.scope", 32 * MIB, step * 32 * MIB / 4096);
        /* Quiet ones */
        stat_file(f, "system.slice/cron.service", MIB, 0);
        stat_file(f, "user.slice/user-1002.slice/user@1002.service/init.scope", MIB, 0);
        /* A job's and a rule-placed unit's streaming is not evidence */
        stat_file(f, "pagewarden.slice/backup/slot-0", 64 * MIB, step * 64 * MIB / 4096);
        stat_file(f, "system.slice/borgmatic.service", 64 * MIB, step * 64 * MIB / 4096);
        /* An ancestor of the application holds its counters: never a suspect (a plain cgroup here) */
        stat_file(f, "system.slice", 200 * MIB, step * 2048);
}

static void fake_process(struct fake *f) {
        char path[PATH_MAX];

        free(write_file(f->proc, "4242/status", "Name:\trsync\nTgid:\t4242\nPPid:\t1\nUid:\t1002\t1002\t1002\t1002\n"));
        free(write_file(f->proc, "4242/stat", "4242 (rsync) S 1 1 1 0 -1 4194304 0 0 0 0\n"));
        free(write_file(f->proc, "4242/cgroup", "0::/user.slice/user-1002.slice/session-3.scope\n"));
        free(write_file(f->proc, "4242/io",
                        "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: 33554432\n"
                        "write_bytes: 4096\ncancelled_write_bytes: 0\n"));
        free(write_file(f->proc, "4242/cmdline", "rsync\0-a\0/srv/\0/copy/"));
        /* write_file stops at the first NUL: the arguments as the kernel keeps them */
        {
                FILE *c;

                snprintf(path, sizeof(path), "%s/4242/cmdline", f->proc);
                c = fopen(path, "we");
                ck_assert_ptr_nonnull(c);
                fwrite("rsync\0-a\0/srv/\0/copy/", 1, sizeof("rsync\0-a\0/srv/\0/copy/") - 1, c);
                fclose(c);
        }
        snprintf(path, sizeof(path), "%s/4242/exe", f->proc);
        ck_assert_int_eq(symlink("/usr/bin/rsync", path), 0);
        /* A process without I/O of its own is not named */
        free(write_file(f->proc, "4243/io", "read_bytes: 0\nwrite_bytes: 0\n"));
        free(write_file(f->dir, "user.slice/user-1002.slice/session-3.scope/cgroup.procs", "4243\n4242\n"));
}

/* Nothing to look at but the protected application (a host where everything else is pagewarden's): a window
 * is taken all the same (UBSan once stopped the daemon there: qsort of no cgroups). */
START_TEST(test_observe_nothing_else) {
        struct fake f = { .dir = tmpdir_new() };
        struct cgroup_engine *engine = NULL;
        struct observe o = {};

        stat_file(&f, "system.slice/db.service", 100 * MIB, 0);
        stat_file(&f, "pagewarden.slice/backup/slot-0", MIB, 0);
        ck_assert_int_eq(cgroup_engine_new(f.dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(observe_init(&o, NULL, engine, fake_scope, &f, NULL, 86400), 0);
        observe_window(&o);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 4096);
        observe_window(&o);
        ck_assert_uint_eq(o.n_cgroups, 0);
        ck_assert_uint_eq(o.windows, 2);
        ck_assert_uint_eq(o.harmful, 1);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(o.open, "suspects")), 0);
        observe_done(&o);
        cgroup_engine_free(engine);
        tmpdir_cleanup(f.dir);
}
END_TEST

/* The timer's windows read the applications in slices, a turn of the loop each (here one application a slice), and
 * end as a whole window does; a window under way when observation stops is dropped (LeakSanitizer checks). */
START_TEST(test_observe_timer) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        struct fake f = { .dir = tmpdir_new(), .two_apps = true };
        struct cgroup_engine *engine = NULL;
        struct observe o = { .period_usec = 20 * 1000, .slice_usec = 1 };
        uint64_t windows;

        stat_file(&f, "system.slice/db.service", 100 * MIB, 0);
        stat_file(&f, "system.slice/cache.service", 10 * MIB, 0);
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(cgroup_engine_new(f.dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(observe_init(&o, event, engine, fake_scope, &f, NULL, 86400), 0);
        observe_update(&o, true, 86400); /* the first window, at once */
        ck_assert_uint_eq(o.windows, 1);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 4096);
        for (int i = 0; i < 100 && o.windows < 2; i++)
                ck_assert_int_ge(sd_event_run(event, 50 * 1000), 0);
        ck_assert_uint_eq(o.windows, 2);
        ck_assert_uint_eq(o.harmful, 1);
        ck_assert_ptr_null(o.round);

        /* One dispatch at a time, until a window has begun and not ended. */
        windows = o.windows;
        for (int i = 0; i < 100 && !o.round; i++)
                ck_assert_int_ge(sd_event_run(event, 50 * 1000), 0);
        ck_assert_ptr_nonnull(o.round);
        ck_assert_int_ge(sd_event_run(event, 50 * 1000), 0); /* its first slice: one of the two */
        ck_assert_ptr_nonnull(o.round);
        observe_update(&o, false, 86400);
        ck_assert_ptr_null(o.round);
        ck_assert_uint_eq(o.windows, windows);
        observe_done(&o);
        cgroup_engine_free(engine);
        tmpdir_cleanup(f.dir);
}
END_TEST

START_TEST(test_observe_window) {
        struct fake f = { .dir = tmpdir_new(), .with_job = true };
        struct cgroup_engine *engine = NULL;
        struct observe o = {};
        json_object *episodes, *e, *suspects, *summary;
        char path[PATH_MAX];

        f.proc = strdup(f.dir);
        snprintf(path, sizeof(path), "%s/proc", f.dir);
        free(f.proc);
        f.proc = strdup(path);
        tree(&f, 0);
        free(write_file(f.dir, "init.scope/memory.stat", "file 0\n"));
        fake_process(&f);
        ck_assert_int_eq(cgroup_engine_new(f.dir, "pagewarden.slice", false, &engine), 0);
        o.procdir = f.proc;
        ck_assert_int_eq(observe_init(&o, NULL, engine, fake_scope, &f, NULL, 86400), 0);

        /* The first window has nothing to compare with */
        observe_window(&o);
        ck_assert_uint_eq(o.n_cgroups, 3); /* backup-db, cron, the session: not the job, the unit placed, db */
        ck_assert_uint_eq(o.harmful, 0);
        ck_assert_ptr_null(o.open);
        /* "proc" is a plain cgroup without children here: looked at, but it has no counters */
        tree(&f, 1);
        observe_window(&o);
        ck_assert_uint_eq(o.harmful, 1);
        ck_assert_ptr_nonnull(o.open);
        suspects = json_object_object_get(o.open, "suspects");
        ck_assert_uint_eq(json_object_array_length(suspects), 2);
        e = json_object_array_get_idx(suspects, 0);
        ck_assert_str_eq(str(e, "unit"), "backup-db.service");
        ck_assert_int_eq(num(e, "charged_bytes"), 64 * MIB);
        e = json_object_array_get_idx(suspects, 1);
        ck_assert_str_eq(str(e, "cgroup"), "/user.slice/user-1002.slice/session-3.scope");
        ck_assert_int_eq(num(e, "uid"), 1002);
        e = json_object_array_get_idx(json_object_object_get(e, "programs"), 0);
        ck_assert_str_eq(str(e, "exe"), "/usr/bin/rsync");
        ck_assert_str_eq(str(e, "cmdline"), "rsync -a /srv/ /copy/");
        ck_assert_int_eq(num(e, "uid"), 1002);
        ck_assert_int_eq(num(e, "bytes"), 32 * MIB + 4096);
        ck_assert_uint_eq(json_object_array_length(
                                  json_object_object_get(json_object_array_get_idx(suspects, 1), "programs")),
                          1);

        /* A cgroup that appears between two windows counts from nothing: a oneshot service's whole run */
        stat_file(&f, "system.slice/db.service", 100 * MIB, 3 * 2048);
        stat_file(&f, "system.slice/dump.service", 20 * MIB, 0);
        observe_window(&o);
        suspects = json_object_object_get(o.open, "suspects");
        ck_assert_uint_eq(json_object_array_length(suspects), 3);
        e = json_object_array_get_idx(suspects, 2);
        ck_assert_str_eq(str(e, "unit"), "dump.service");
        ck_assert_int_eq(num(e, "charged_bytes"), 20 * MIB);

        /* Calm windows: the episode ends after OBSERVE_EPISODE_GAP of them, into the history */
        for (unsigned i = 0; i < OBSERVE_EPISODE_GAP - 1; i++) {
                observe_window(&o);
                ck_assert_ptr_nonnull(o.open);
        }
        observe_window(&o);
        ck_assert_ptr_null(o.open);
        episodes = observe_episodes(&o);
        ck_assert_uint_eq(json_object_array_length(episodes), 1);
        ck_assert_int_eq(num(json_object_array_get_idx(episodes, 0), "id"), 1);
        json_object_put(episodes);

        /* Harm with nothing else streaming (the application's own growth): an episode with no suspect */
        stat_file(&f, "system.slice/db.service", 100 * MIB, 10 * 2048);
        observe_window(&o);
        ck_assert_ptr_nonnull(o.open);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(o.open, "suspects")), 0);
        ck_assert_int_eq(num(o.open, "id"), 2);
        summary = observe_summary(&o, 8);
        ck_assert_uint_eq(json_object_array_length(summary), 3);
        ck_assert_str_eq(str(json_object_array_get_idx(summary, 0), "name"), "backup-db.service");
        ck_assert_str_eq(str(json_object_array_get_idx(summary, 1), "name"), "/usr/bin/rsync");
        ck_assert_str_eq(str(json_object_array_get_idx(summary, 2), "name"), "dump.service");
        json_object_put(summary);
        ck_assert_uint_eq(o.windows, 10);

        observe_done(&o);
        cgroup_engine_free(engine);
        free(f.proc);
        tmpdir_cleanup(f.dir);
}
END_TEST

/* Memory fills before anything is taken from the application: its losses come a window after the copy that
 * caused them, which may have ended (a oneshot service's cgroup gone).  What streamed in a window that
 * harmed no one is named with the next window's harm, and never counted twice. */
START_TEST(test_observe_lag) {
        struct fake f = { .dir = tmpdir_new() };
        struct cgroup_engine *engine = NULL;
        struct observe o = {};
        json_object *suspects, *e;
        char path[PATH_MAX];

        stat_file(&f, "system.slice/db.service", 100 * MIB, 0);
        stat_file(&f, "system.slice/backup-db.service", 0, 0);
        stat_file(&f, "system.slice/cron.service", MIB, 0);
        ck_assert_int_eq(cgroup_engine_new(f.dir, "pagewarden.slice", false, &engine), 0);
        ck_assert_int_eq(observe_init(&o, NULL, engine, fake_scope, &f, NULL, 86400), 0);
        observe_window(&o);

        /* The backup streams 64 MiB into free memory: no harm */
        stat_file(&f, "system.slice/backup-db.service", 64 * MIB, 0);
        observe_window(&o);
        ck_assert_ptr_null(o.open);
        /* It ends; the application loses 8 MiB meanwhile */
        snprintf(path, sizeof(path), "%s/system.slice/backup-db.service/memory.stat", f.dir);
        ck_assert_int_eq(unlink(path), 0);
        snprintf(path, sizeof(path), "%s/system.slice/backup-db.service", f.dir);
        ck_assert_int_eq(rmdir(path), 0);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 2048);
        observe_window(&o);
        ck_assert_ptr_nonnull(o.open);
        suspects = json_object_object_get(o.open, "suspects");
        ck_assert_uint_eq(json_object_array_length(suspects), 1);
        e = json_object_array_get_idx(suspects, 0);
        ck_assert_str_eq(str(e, "unit"), "backup-db.service");
        ck_assert_int_eq(num(e, "charged_bytes"), 64 * MIB);
        ck_assert_int_eq(num(e, "windows"), 1);
        ck_assert_int_le(num(e, "first"), num(o.open, "started"));

        /* Its next run streams while the harm goes on, then ends: counted once per window it streamed in */
        stat_file(&f, "system.slice/backup-db.service", 32 * MIB, 0);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 2 * 2048);
        observe_window(&o);
        snprintf(path, sizeof(path), "%s/system.slice/backup-db.service/memory.stat", f.dir);
        ck_assert_int_eq(unlink(path), 0);
        snprintf(path, sizeof(path), "%s/system.slice/backup-db.service", f.dir);
        ck_assert_int_eq(rmdir(path), 0);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 3 * 2048);
        observe_window(&o);
        suspects = json_object_object_get(o.open, "suspects");
        ck_assert_uint_eq(json_object_array_length(suspects), 1);
        e = json_object_array_get_idx(suspects, 0);
        ck_assert_int_eq(num(e, "charged_bytes"), 96 * MIB);
        ck_assert_int_eq(num(e, "windows"), 2);
        ck_assert_int_eq(num(o.open, "windows"), 3);

        /* Streaming two windows before the harm, with a calm one between: not named */
        for (unsigned i = 0; i < OBSERVE_EPISODE_GAP; i++)
                observe_window(&o);
        ck_assert_ptr_null(o.open);
        stat_file(&f, "system.slice/cron.service", 40 * MIB, 0);
        observe_window(&o);
        observe_window(&o);
        stat_file(&f, "system.slice/db.service", 100 * MIB, 4 * 2048);
        observe_window(&o);
        ck_assert_ptr_nonnull(o.open);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(o.open, "suspects")), 0);

        observe_done(&o);
        cgroup_engine_free(engine);
        tmpdir_cleanup(f.dir);
}
END_TEST

Suite *evidence_suite(void) {
        Suite *s = suite_create("evidence");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_evidence_classify);
        tcase_add_test(tc, test_evidence_window);
        tcase_add_test(tc, test_evidence_harmed);
        tcase_add_test(tc, test_evidence_episode);
        tcase_add_test(tc, test_rules_program_path);
        tcase_add_test(tc, test_observe_window);
        tcase_add_test(tc, test_observe_timer);
        tcase_add_test(tc, test_observe_nothing_else);
        tcase_add_test(tc, test_observe_lag);
        suite_add_tcase(s, tc);
        return s;
}
