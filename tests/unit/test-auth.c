/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "auth.h"
#include "common.h"

START_TEST(test_auth_class_and_ownership) {
        char *users[] = { (char *) "alice", (char *) "1001" };
        struct pw_job_class c = { .name = (char *) "backup", .users = users, .n_users = 2 };
        struct proc_ids mine = { .uid = { 1000, 1000, 1000, 1000 } }, setuid = { .uid = { 1000, 0, 0, 0 } };

        ck_assert(auth_class_allows(&c, 0, "root"));
        ck_assert(auth_class_allows(&c, 1000, "alice"));
        ck_assert(auth_class_allows(&c, 1001, NULL));
        ck_assert(!auth_class_allows(&c, 1002, "bob"));
        ck_assert(!auth_class_allows(&c, 1000, NULL)); /* alice unknown to NSS: only ids match */
        ck_assert(auth_owns_process(&mine, 1000));
        ck_assert(!auth_owns_process(&mine, 1001));
        ck_assert(!auth_owns_process(&setuid, 1000)); /* a setuid program the user started is not theirs */
        ck_assert(auth_owns_process(&setuid, 0));
}
END_TEST

START_TEST(test_auth_path_under) {
        ck_assert(auth_path_under("a/b/c", "a/b"));
        ck_assert(auth_path_under("a/b", "a/b"));
        ck_assert(!auth_path_under("a/bc", "a/b"));
        ck_assert(auth_path_under("anything", ""));
}
END_TEST

static const char *const own_jobs[] = { "pagewarden.slice/backup/slot-2" };
static char *protected_cgroups[] = { (char *) "system.slice/postgresql.service" };
static const struct auth_protected protected = { .cgroups = protected_cgroups, .n_cgroups = 1 };

static struct proc_ids process(uid_t uid, pid_t pid, pid_t ppid, const char *cgroup) {
        return (struct proc_ids){ .uid = { uid, uid, uid, uid }, .ppid = ppid, .tgid = pid, .cgroup = (char *) cgroup };
}

/* Asserts that pid (ids) may or may not be placed for c, and that the sentence names the reason. */
static void expect(const struct auth_caller *c, pid_t pid, const struct proc_ids *ids, const char *needle) {
        char why[256] = "";
        bool ok = auth_may_place(c, pid, ids, why, sizeof(why));

        if (!needle)
                ck_assert_msg(ok, "refused: %s", why);
        else {
                ck_assert_msg(!ok, "allowed, expected '%s'", needle);
                ck_assert_msg(strstr(why, needle), "'%s' does not say '%s'", why, needle);
        }
}

START_TEST(test_auth_may_place) {
        const struct auth_caller alice = {
                .uid = 1000, .pid = 500, .self = 77, .own_jobs = own_jobs, .n_own_jobs = 1, .protected = &protected
        };
        struct auth_caller root = alice, run = alice;
        struct proc_ids ids;

        root.uid = 0;
        run.child_only = true;
        /* Her own processes from her session, her user manager, her jobs, the root cgroup. */
        ids = process(1000, 600, 500, "user.slice/user-1000.slice/session-3.scope");
        expect(&alice, 600, &ids, NULL);
        expect(&run, 600, &ids, NULL);
        ids.cgroup = (char *) "user.slice/user-1000.slice/user@1000.service/app.slice/x.service";
        expect(&alice, 600, &ids, NULL);
        ids.cgroup = (char *) "pagewarden.slice/backup/slot-2";
        expect(&alice, 600, &ids, NULL);
        ids.cgroup = (char *) "";
        expect(&alice, 600, &ids, NULL);
        /* Out of a cgroup root put her process in (a service, a pids.max cage, another's job): no. */
        ids.cgroup = (char *) "system.slice/pg-dump.service";
        expect(&alice, 600, &ids, "may only place processes from its own user slice or its own jobs");
        ids.cgroup = (char *) "cage";
        expect(&alice, 600, &ids, "is in /cage");
        ids.cgroup = (char *) "user.slice/user-10001.slice/session-1.scope";
        expect(&alice, 600, &ids, "own user slice");
        ids.cgroup = (char *) "pagewarden.slice/backup/slot-3";
        expect(&alice, 600, &ids, "own jobs");
        /* Root may. */
        expect(&root, 600, &ids, NULL);
        /* run: only the caller's child. */
        ids = process(1000, 601, 499, "user.slice/user-1000.slice/session-3.scope");
        expect(&run, 601, &ids, "is not a child of the caller");
        /* Never: PID 1, pagewardend (or one of its threads), kernel threads, threads by their id,
         * a protected application's processes, someone else's. */
        ids = process(0, 1, 0, "init.scope");
        expect(&root, 1, &ids, "is PID 1");
        ids = process(0, 77, 1, "system.slice/pagewarden.service");
        expect(&root, 77, &ids, "is pagewardend itself");
        ids.tgid = 77;
        expect(&root, 78, &ids, "is pagewardend itself");
        ids = process(0, 2, 0, "");
        ids.kernel_thread = true;
        expect(&root, 2, &ids, "is a kernel thread");
        ids = process(1000, 601, 500, "user.slice/user-1000.slice/session-3.scope");
        ids.tgid = 600;
        expect(&alice, 601, &ids, "is a thread of process 600");
        ids = process(0, 900, 1, "system.slice/postgresql.service");
        expect(&root, 900, &ids, "belongs to a protected application (/system.slice/postgresql.service)");
        ids.cgroup = (char *) "system.slice/postgresql.service/worker";
        expect(&root, 900, &ids, "protected application");
        ids = process(1001, 700, 1, "user.slice/user-1000.slice/session-3.scope");
        expect(&alice, 700, &ids, "does not belong to uid 1000");
}
END_TEST

/* A protected unit is known by its name, wherever systemd runs it and before PID 1 says where. */
START_TEST(test_auth_protected_unit_by_name) {
        static char *units[] = { (char *) "postgresql@15-main.service", (char *) "app.scope" };
        const struct auth_protected by_name = { .units = units, .n_units = 2 };
        struct auth_caller root = { .self = 77, .protected = &by_name };
        struct proc_ids ids = process(0, 900, 1, "system.slice/system-postgresql.slice/postgresql@15-main.service");

        expect(&root, 900, &ids, "belongs to a protected application (postgresql@15-main.service)");
        ids.cgroup = (char *) "custom.slice/postgresql@15-main.service/sub";
        expect(&root, 900, &ids, "(postgresql@15-main.service)");
        ids.cgroup = (char *) "app.scope";
        expect(&root, 900, &ids, "(app.scope)");
        /* A whole component only: a name that contains the unit's, or a prefix of it, is someone else. */
        ids.cgroup = (char *) "system.slice/postgresql@15-main.service-backup.service";
        expect(&root, 900, &ids, NULL);
        ids.cgroup = (char *) "system.slice/postgresql@15-main.servic";
        expect(&root, 900, &ids, NULL);
        ids.cgroup = (char *) "system.slice/xapp.scope";
        expect(&root, 900, &ids, NULL);
        ids.cgroup = (char *) "";
        expect(&root, 900, &ids, NULL);
}
END_TEST

/* The copy a move keeps: both kinds of entry, the cgroup without the policy's leading '/'. */
START_TEST(test_auth_protected_copy) {
        struct pw_protect entries[] = { { .name = (char *) "db", .unit = (char *) "postgresql.service" },
                                        { .name = (char *) "web", .cgroup = (char *) "/system.slice/nginx.service" } };
        struct pw_policy policy = { .protects = entries, .n_protects = 2 };
        struct auth_protected x;
        char name[64];

        ck_assert_int_eq(auth_protected_copy(&policy, &x), 0);
        ck_assert_uint_eq(x.n_units, 1);
        ck_assert_uint_eq(x.n_cgroups, 1);
        ck_assert(auth_protected_holds(&x, "system.slice/nginx.service/worker", name, sizeof(name)));
        ck_assert_str_eq(name, "/system.slice/nginx.service");
        ck_assert(auth_protected_holds(&x, "system.slice/postgresql.service", name, sizeof(name)));
        ck_assert_str_eq(name, "postgresql.service");
        ck_assert(!auth_protected_holds(&x, "system.slice/nginx.service2", name, sizeof(name)));
        ck_assert(!auth_protected_holds(NULL, "system.slice/nginx.service", name, sizeof(name)));
        auth_protected_done(&x);
        ck_assert_ptr_null(x.cgroups);
}
END_TEST

Suite *auth_suite(void) {
        Suite *s = suite_create("auth");
        TCase *tc = tcase_create("rules");

        tcase_add_test(tc, test_auth_class_and_ownership);
        tcase_add_test(tc, test_auth_path_under);
        tcase_add_test(tc, test_auth_may_place);
        tcase_add_test(tc, test_auth_protected_unit_by_name);
        tcase_add_test(tc, test_auth_protected_copy);
        suite_add_tcase(s, tc);
        return s;
}
