/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placement by rule: which class a process or a unit matches, and what is never touched. */
#include "common.h"
#include "rules.h"

static const char policy_text[] =
        "jobs:\n"
        "  backup:\n"
        "    match:\n"
        "      units: [borgmatic.service, \"restic-*.service\"]\n"
        "      exe: [/usr/bin/borg, /usr/bin/pg_dump]\n"
        "  copy:\n"
        "    match:\n"
        "      cmdline: [\"rsync --server *\"]\n"
        "      under: [ssh.service, /srv/jobs]\n"
        "      user: [root, \"1000\"]\n"
        "  later:\n"
        "    match:\n"
        "      cmdline: [\"*borg*\"]\n"
        "  boxed:\n"
        "    match:\n"
        "      exe: [/usr/bin/tar]\n"
        "      under: [machine.slice]\n";

static struct rules_process process(const char *exe, const char *cmdline, const char *cgroup) {
        return (struct rules_process){ .pid = 500,
                                       .tgid = 500,
                                       .ppid = 400,
                                       .uid = 0,
                                       .user = "root",
                                       .exe = exe,
                                       .cmdline = cmdline,
                                       .cgroup = cgroup };
}

/* The class p matches ("" if none), and the rule's kind and text. */
static void expect_match(const struct pw_policy *pol, const struct rules_process *p, const char *class,
                         const char *kind, const char *rule) {
        struct rules_match m;
        bool ok = rules_match_process(pol, p, &m);

        if (!class[0]) {
                ck_assert_msg(!ok, "%s matched class %s", p->cmdline ?: p->exe, ok ? m.class->name : "");
                return;
        }
        ck_assert_msg(ok, "%s matched nothing", p->cmdline ?: p->exe);
        ck_assert_str_eq(m.class->name, class);
        ck_assert_str_eq(m.kind, kind);
        ck_assert_str_eq(m.rule->text, rule);
}

START_TEST(test_rules_processes) {
        struct parse_result res;
        struct rules_process p;

        parse_policy(policy_text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        p = process("/usr/bin/borg", "borg create ::x /data", "system.slice/borgmatic.service");
        expect_match(&res.policy, &p, "backup", "exe", "/usr/bin/borg");
        /* exe is the program, not what the command line says it is. */
        p = process("/usr/bin/python3", "/usr/bin/borg create", "");
        expect_match(&res.policy, &p, "later", "cmdline", "*borg*");
        p = process("/usr/bin/rsync", "rsync --server -vlogDtpre.iLsfxC . /backup", "system.slice/ssh.service");
        expect_match(&res.policy, &p, "copy", "cmdline", "rsync --server *");
        /* under: only below sshd, or below /srv/jobs. */
        p.cgroup = "user.slice/user-1000.slice/session-4.scope";
        expect_match(&res.policy, &p, "", NULL, NULL);
        p.cgroup = "srv/jobs/nightly";
        expect_match(&res.policy, &p, "copy", "cmdline", "rsync --server *");
        p.cgroup = "srv/jobsx";
        expect_match(&res.policy, &p, "", NULL, NULL);
        /* user: by name or number. */
        p.cgroup = "system.slice/ssh.service";
        p.uid = 1000;
        p.user = "alice";
        expect_match(&res.policy, &p, "copy", "cmdline", "rsync --server *");
        p.uid = 1001;
        p.user = "bob";
        expect_match(&res.policy, &p, "", NULL, NULL);
        /* Nothing known: nothing matches. */
        p = process(NULL, NULL, "");
        expect_match(&res.policy, &p, "", NULL, NULL);
        parse_result_done(&res);
}
END_TEST

START_TEST(test_rules_units) {
        struct parse_result res;
        struct rules_match m;
        char text[128];

        parse_policy(policy_text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        ck_assert(rules_match_unit(&res.policy, "restic-daily.service", &m));
        ck_assert_str_eq(m.class->name, "backup");
        ck_assert_int_eq(rules_describe(&m, text, sizeof(text)), 0);
        ck_assert_str_eq(text, "rule units restic-*.service (test.yaml:4)");
        ck_assert(rules_match_unit(&res.policy, "borgmatic.service", &m));
        ck_assert(!rules_match_unit(&res.policy, "borgmatic.timer", &m));
        ck_assert(!rules_match_unit(&res.policy, "restic.service", &m));
        parse_result_done(&res);
}
END_TEST

START_TEST(test_rules_exclusions) {
        static const char *const protected[] = { "system.slice/postgresql.service" };
        const struct rules_exclusions x = {
                .self = 77, .job_root = "pagewarden.slice", .protected = protected, .n_protected = 1
        };
        struct parse_result res;
        struct rules_process p;
        const struct pw_job_class *backup, *boxed;

        parse_policy(policy_text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        backup = policy_find_class(&res.policy, "backup");
        boxed = policy_find_class(&res.policy, "boxed");
        p = process("/usr/bin/borg", "borg", "system.slice/cron.service");
        ck_assert_ptr_null(rules_excluded(&x, &p, backup));
        p.pid = p.tgid = 1;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it is PID 1");
        p.pid = p.tgid = 77;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it is pagewardend");
        p.pid = p.tgid = 500;
        p.kernel_thread = true;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it is a kernel thread");
        p.kernel_thread = false;
        p.cgroup = "pagewarden.slice/backup/slot-1";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it is in a job already");
        p.cgroup = "system.slice/postgresql.service";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it belongs to a protected application");
        /* Containers: not by default; by a rule whose under: names them, yes. */
        p.cgroup = "machine.slice/machine-web.scope/payload";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        ck_assert_ptr_null(rules_excluded(&x, &p, boxed));
        p.cgroup = "system.slice/docker-0123abcd.scope";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        p.cgroup = "system.slice/docker-cleanup.service"; /* a service named docker-*, not a container */
        ck_assert_ptr_null(rules_excluded(&x, &p, backup));
        p.cgroup = "";
        p.other_cgroup_ns = true;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        parse_result_done(&res);
}
END_TEST

START_TEST(test_rules_join_cmdline) {
        char args[] = "rsync\0--server\0-e.Lsfx\0.\0/backup\0";

        rules_join_cmdline(args, sizeof(args) - 1);
        ck_assert_str_eq(args, "rsync --server -e.Lsfx . /backup");
}
END_TEST

Suite *rules_suite(void) {
        Suite *s = suite_create("rules");
        TCase *tc = tcase_create("match");

        tcase_add_test(tc, test_rules_processes);
        tcase_add_test(tc, test_rules_units);
        tcase_add_test(tc, test_rules_exclusions);
        tcase_add_test(tc, test_rules_join_cmdline);
        suite_add_tcase(s, tc);
        return s;
}
