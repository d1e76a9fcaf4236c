/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placement by rule: which class a process or a unit matches, and what is never touched. */
#include "auth.h"
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
        "      user: [root, \"34\"]\n"
        "  boxed:\n"
        "    match:\n"
        "      exe: [/usr/bin/tar]\n"
        "      under: [machine.slice, /jail]\n"
        "  shared:\n"
        "    users: [\"1000\"]\n"
        "    match:\n"
        "      exe: [/usr/bin/restic]\n";

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
        /* under: only below sshd's own cgroup, or below /srv/jobs: not a user's unit of that name, nor a
         * container's. */
        p.cgroup = "system.slice/ssh.service/x";
        expect_match(&res.policy, &p, "copy", "cmdline", "rsync --server *");
        p.cgroup = "user.slice/user-1000.slice/session-4.scope";
        expect_match(&res.policy, &p, "", NULL, NULL);
        p.cgroup = "user.slice/user-1000.slice/user@1000.service/app.slice/ssh.service";
        expect_match(&res.policy, &p, "", NULL, NULL);
        p.cgroup = "lxc.payload.c1/system.slice/ssh.service";
        expect_match(&res.policy, &p, "", NULL, NULL);
        p.cgroup = "system.slice/ssh.servicex";
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
        static char *cgroups[] = { (char *) "system.slice/postgresql.service" },
                    *units[] = { (char *) "redis.service" };
        static const struct auth_protected protected = {
                .cgroups = cgroups, .n_cgroups = 1, .units = units, .n_units = 1
        };
        const struct rules_exclusions x = { .self = 77, .job_root = "pagewarden.slice", .protected = &protected };
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
        p.cgroup = "system.slice/redis.service"; /* a unit: entry, by its name */
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it belongs to a protected application");
        /* Containers: not by default; by a rule whose under: names them by path, yes: machine.slice as a
         * unit name is system.slice/machine.slice, not the host's machine.slice. */
        p.cgroup = "machine.slice/machine-web.scope/payload";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        ck_assert_str_eq(rules_excluded(&x, &p, boxed), "it runs in a container");
        p.cgroup = "system.slice/docker-0123abcd.scope";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        p.cgroup = "system.slice/docker-cleanup.service"; /* a service named docker-*, not a container */
        ck_assert_ptr_null(rules_excluded(&x, &p, backup));
        p.cgroup = "";
        p.other_cgroup_ns = true;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "it runs in a container");
        p.cgroup = "jail/x";
        ck_assert_ptr_null(rules_excluded(&x, &p, boxed)); /* an absolute under: names it */
        parse_result_done(&res);
}
END_TEST

/* A process of a unit a units: rule places is that rule's, even where an exe: rule names its program. */
START_TEST(test_rules_unit_managed) {
        struct parse_result res;
        struct rules_process p;
        const struct pw_job_class *backup;
        struct rules_exclusions x = { .self = 77, .job_root = "pagewarden.slice" };

        parse_policy(policy_text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        backup = policy_find_class(&res.policy, "backup");
        p = process("/usr/bin/borg", "borg", "system.slice/borgmatic.service");
        ck_assert_ptr_null(rules_excluded(&x, &p, backup)); /* where units are not placed (cgroupfs) */
        x.units = &res.policy;
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "its unit is placed by a units: rule, which has it already");
        p.cgroup = "system.slice/restic-daily.service/child";
        ck_assert_str_eq(rules_excluded(&x, &p, backup), "its unit is placed by a units: rule, which has it already");
        p.cgroup = "system.slice/cron.service";
        ck_assert_ptr_null(rules_excluded(&x, &p, backup));
        /* A user's own unit of that name is not the system's. */
        p.cgroup = "user.slice/user-1000.slice/user@1000.service/app.slice/borgmatic.service";
        p.uid = 1000;
        p.one_uid = true;
        ck_assert_ptr_null(rules_excluded(&x, &p, backup) && strstr(rules_excluded(&x, &p, backup), "units:")
                                   ? rules_excluded(&x, &p, backup)
                                   : NULL);
        parse_result_done(&res);
}
END_TEST

/* Where a rule may take a process from: not out of what root put it in. */
static const char *excluded_in(const struct rules_exclusions *x, struct rules_process *p, const struct pw_job_class *c,
                               const char *cgroup) {
        p->cgroup = cgroup;
        return rules_excluded(x, p, c);
}

START_TEST(test_rules_sources) {
        const struct rules_exclusions x = { .self = 77, .job_root = "pagewarden.slice" };
        const char *not_source =
                "it runs in a cgroup root made: rules take processes only from the root cgroup, "
                "system units and their own user slice, or from below an absolute under: path";
        struct parse_result res;
        struct rules_process p = process("/usr/bin/borg", "borg", "");
        const struct pw_job_class *backup, *boxed, *shared;
        char top[256];

        parse_policy(policy_text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        backup = policy_find_class(&res.policy, "backup");
        boxed = policy_find_class(&res.policy, "boxed");
        shared = policy_find_class(&res.policy, "shared");
        p.one_uid = true;
        /* The root cgroup, a system unit, a user's own slice. */
        ck_assert_ptr_null(excluded_in(&x, &p, backup, ""));
        ck_assert_int_eq(rules_source(&p, backup, top, sizeof(top)), 0);
        ck_assert_str_eq(top, "");
        ck_assert_ptr_null(excluded_in(&x, &p, backup, "system.slice/cron.service/sub"));
        ck_assert_int_eq(rules_source(&p, backup, top, sizeof(top)), 0);
        ck_assert_str_eq(top, "system.slice/cron.service");
        ck_assert_str_eq(excluded_in(&x, &p, backup, "cage"), not_source);
        ck_assert_str_eq(excluded_in(&x, &p, backup, "system.slice"), not_source);
        ck_assert_str_eq(excluded_in(&x, &p, backup, "init.scope"), not_source);
        ck_assert_str_eq(excluded_in(&x, &p, backup, "other.slice/x.service"), not_source);
        ck_assert_int_eq(rules_source(&p, backup, top, sizeof(top)), -EPERM);
        /* Root's own process in a user's session is root's to place; a user's only from the user's slice. */
        ck_assert_ptr_null(excluded_in(&x, &p, backup, "user.slice/user-1000.slice/session-3.scope"));
        ck_assert_int_eq(rules_source(&p, backup, top, sizeof(top)), 0);
        ck_assert_str_eq(top, "user.slice/user-1000.slice/session-3.scope");
        p.uid = 1000;
        p.user = "alice";
        p.exe = "/usr/bin/restic";
        ck_assert_ptr_null(excluded_in(&x, &p, shared, "user.slice/user-1000.slice/user@1000.service/app.slice/a"));
        ck_assert_int_eq(rules_source(&p, shared, top, sizeof(top)), 0);
        ck_assert_str_eq(top, "user.slice/user-1000.slice/user@1000.service");
        ck_assert_str_eq(excluded_in(&x, &p, shared, "user.slice/user-1001.slice/session-9.scope"), not_source);
        ck_assert_str_eq(excluded_in(&x, &p, shared, "user.slice/user-1000.slice"), not_source);
        ck_assert_str_eq(excluded_in(&x, &p, shared, "user.slice/user-10000.slice/session-9.scope"), not_source);
        /* A setuid program (its uids differ) is not the user's to be taken from the user's slice. */
        p.one_uid = false;
        ck_assert_str_eq(excluded_in(&x, &p, shared, "user.slice/user-1000.slice/session-3.scope"), not_source);
        p.one_uid = true;
        /* users: of the class applies to rules as to run and move. */
        ck_assert_str_eq(excluded_in(&x, &p, backup, ""), "its user is not in the class's users:");
        ck_assert_ptr_null(excluded_in(&x, &p, shared, ""));
        /* Something confines it at its source: not placed, unless an absolute under: names the place. */
        p.confined = "pids.max 8 on /system.slice/cron.service";
        ck_assert_str_eq(excluded_in(&x, &p, shared, "system.slice/cron.service"),
                         "something confines it where it runs (a limit or a BPF program), which the move would "
                         "undo: name the place with an absolute under: path to allow it");
        p.uid = 0;
        p.exe = "/usr/bin/tar";
        ck_assert_ptr_null(excluded_in(&x, &p, boxed, "jail/inner"));
        ck_assert_int_eq(rules_source(&p, boxed, top, sizeof(top)), 0);
        ck_assert_str_eq(top, "jail");
        parse_result_done(&res);
}
END_TEST

START_TEST(test_rules_join_cmdline) {
        char args[] = "rsync\0--server\0-e.Lsfx\0.\0/backup\0";

        rules_join_cmdline(args, sizeof(args) - 1);
        ck_assert_str_eq(args, "rsync --server -e.Lsfx . /backup");
}
END_TEST

START_TEST(test_rules_job_name) {
        static const struct {
                const char *exe, *cmdline, *want;
        } cases[] = {
                { "/usr/bin/restic", NULL, "restic" },
                { "/usr/bin/borg", "/usr/bin/python3 /usr/bin/borg create", "borg" }, /* exe: rule, a script */
                { NULL, "rsync --server -e.Lsfx . /backup", "rsync" },
                /* a cmdline: rule on a script run by its interpreter: the script's name, not "rule" (issue 30) */
                { NULL, "/usr/bin/python3 /usr/bin/borg create --lock-wait 600 /repo::a", "borg" },
                { NULL, "/usr/bin/perl /usr/bin/pg_dump -f x", "pg_dump" },
                { NULL, "python3.11 /opt/tools/sync.py --all", "sync-py" },
                { NULL, "/bin/sh /usr/local/sbin/nightly", "nightly" },
                /* an interpreter's option first, or a relative script: the interpreter's name */
                { NULL, "/usr/bin/python3 -u /usr/bin/borg", "python3" },
                { NULL, "bash run.sh", "bash" },
                /* not an interpreter: its own name, whatever follows */
                { NULL, "/usr/bin/shred /tmp/x", "shred" },
                { NULL, "/usr/bin/tar cf /backup/etc.tar /etc", "tar" },
                { "/usr/bin/python3.11", "/usr/bin/python3.11 /usr/bin/borg", "python3-11" },
                /* never a number, never empty */
                { NULL, "/tmp/42 x", "rule" },
                { NULL, "", "rule" },
                { NULL, NULL, "rule" },
                { "/", NULL, "rule" },
        };
        char name[POLICY_NAME_MAX + 1];
        char long_exe[300];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                rules_job_name(cases[i].exe, cases[i].cmdline, name, sizeof(name));
                ck_assert_msg(streq(name, cases[i].want), "exe %s, cmdline '%s': got '%s', want '%s'",
                              cases[i].exe ?: "(null)", cases[i].cmdline ?: "(null)", name, cases[i].want);
        }
        /* A name is at most POLICY_NAME_MAX long. */
        memset(long_exe, 'a', sizeof(long_exe) - 1);
        long_exe[0] = '/';
        long_exe[sizeof(long_exe) - 1] = '\0';
        rules_job_name(long_exe, NULL, name, sizeof(name));
        ck_assert_uint_eq(strlen(name), POLICY_NAME_MAX);
}
END_TEST

Suite *rules_suite(void) {
        Suite *s = suite_create("rules");
        TCase *tc = tcase_create("match");

        tcase_add_test(tc, test_rules_processes);
        tcase_add_test(tc, test_rules_units);
        tcase_add_test(tc, test_rules_exclusions);
        tcase_add_test(tc, test_rules_unit_managed);
        tcase_add_test(tc, test_rules_sources);
        tcase_add_test(tc, test_rules_join_cmdline);
        tcase_add_test(tc, test_rules_job_name);
        suite_add_tcase(s, tc);
        return s;
}
