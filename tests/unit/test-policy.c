/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <sys/stat.h>

#include "common.h"
#include "fail-alloc.h"
#include "policy-parse.h"
#include "yamltree.h"

#define MiB (UINT64_C(1) << 20)

START_TEST(test_policy_full) {
        static const char text[] =
                "jobs:\n"
                "  backup:\n"
                "    memory:\n"
                "      high: 256M\n"
                "      max: 2G\n"
                "      swap_max: 0\n"
                "    per_job: {memory: {high: 128M, max: 1G}}\n"
                "    match:\n"
                "      units: [borgmatic.service, \"restic-*.service\"]\n"
                "      exe: [/usr/bin/borg]\n"
                "      cmdline: [\"rsync --server *\"]\n"
                "      user: [root, \"0\"]\n"
                "      under: [ssh.service, /system.slice/cron.service]\n"
                "    cpu: {weight: 50}\n"
                "    io:\n"
                "      - device: /\n"
                "        write_bps: 80M\n"
                "        read_iops: 1000\n"
                "    under_pressure:\n"
                "      memory_high_floor: 64M\n"
                "      io_floor: 8M\n"
                "      freeze: true\n"
                "      freeze_max: 5s\n"
                "    users: [root, \"0\"]\n"
                "protect:\n"
                "  postgres:\n"
                "    unit: postgresql.service\n"
                "    memory:\n"
                "      min: 25%\n"
                "      low: auto\n"
                "      swap: deny\n";
        struct parse_result res;
        const struct pw_job_class *c;
        const struct pw_protect *p;

        parse_policy(text, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        ck_assert_uint_eq(res.policy.n_classes, 1);
        c = policy_find_class(&res.policy, "backup");
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->memory_high, 256 * MiB);
        ck_assert_uint_eq(c->memory_max, 2048 * MiB);
        ck_assert_uint_eq(c->memory_swap_max, 0);
        ck_assert_uint_eq(c->per_job.memory_high, 128 * MiB);
        ck_assert_uint_eq(c->per_job.memory_max, 1024 * MiB);
        ck_assert_uint_eq(c->per_job.memory_swap_max, UNITS_MAX);
        ck_assert(policy_class_matches(c));
        ck_assert_uint_eq(c->match.units.n, 2);
        ck_assert_str_eq(c->match.units.v[1].text, "restic-*.service");
        ck_assert_uint_eq(c->match.units.v[1].line, 9);
        ck_assert_str_eq(c->match.exe.v[0].text, "/usr/bin/borg");
        ck_assert_str_eq(c->match.cmdline.v[0].text, "rsync --server *");
        ck_assert_uint_eq(c->match.user.n, 2);
        ck_assert_str_eq(c->match.under.v[1].text, "/system.slice/cron.service");
        ck_assert_uint_eq(c->cpu_weight, 50);
        ck_assert_uint_eq(c->n_io, 1);
        ck_assert_uint_eq(c->io[0].write_bps, 80 * MiB);
        ck_assert_uint_eq(c->io[0].read_bps, UNITS_MAX);
        ck_assert_uint_eq(c->io[0].read_iops, 1000);
        ck_assert_uint_eq(c->io[0].write_iops, UNITS_MAX);
        ck_assert_uint_eq(c->memory_high_floor, 64 * MiB);
        ck_assert_uint_eq(c->io_floor, 8 * MiB);
        ck_assert(c->freeze);
        ck_assert_uint_eq(c->freeze_max_usec, 5000000);
        ck_assert_uint_eq(c->n_users, 2);
        ck_assert_str_eq(c->source, "test.yaml");
        ck_assert_uint_eq(c->line, 2);
        p = policy_find_protect(&res.policy, "postgres");
        ck_assert_ptr_nonnull(p);
        ck_assert_str_eq(p->unit, "postgresql.service");
        ck_assert_ptr_null(p->cgroup);
        ck_assert_int_eq(p->min.mode, PW_PROTECT_BYTES);
        ck_assert_uint_eq(p->min.bytes, TEST_RAM / 4);
        ck_assert_int_eq(p->low.mode, PW_PROTECT_AUTO);
        ck_assert(p->swap_deny);
        parse_result_done(&res);
}
END_TEST

START_TEST(test_policy_defaults) {
        struct parse_result res;
        const struct pw_job_class *c;

        parse_policy("jobs:\n  a:\n  b:\n    memory: {high: 16M}\nprotect:\n", &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        c = policy_find_class(&res.policy, "a");
        ck_assert_uint_eq(c->memory_high, UNITS_MAX);
        ck_assert_uint_eq(c->memory_max, UNITS_MAX);
        ck_assert_uint_eq(c->memory_swap_max, UNITS_MAX);
        ck_assert_uint_eq(c->cpu_weight, PW_DEFAULT_CPU_WEIGHT);
        ck_assert_uint_eq(c->n_io, 0);
        ck_assert_uint_eq(c->memory_high_floor, PW_DEFAULT_MEMORY_HIGH_FLOOR);
        ck_assert_uint_eq(c->io_floor, PW_DEFAULT_IO_FLOOR);
        ck_assert(!c->freeze);
        ck_assert_uint_eq(c->freeze_max_usec, PW_DEFAULT_FREEZE_MAX_USEC);
        /* The floor follows a high below the default floor. */
        c = policy_find_class(&res.policy, "b");
        ck_assert_uint_eq(c->memory_high_floor, 16 * MiB);
        ck_assert_uint_eq(res.policy.n_protects, 0);
        parse_result_done(&res);
}
END_TEST

/* Every error class: text, line, column, and a part of the message. */
static const struct {
        const char *text;
        unsigned line, column;
        const char *needle;
} error_cases[] = {
        /* unknown keys, with a suggestion or the list of keys */
        { "jobs:\n  b:\n    memory:\n      hihg: 1G\n", 4, 7,
          "unknown key 'hihg' in job class 'b'.memory: did you mean 'high'?" },
        { "jobs:\n  b:\n    colour: red\n", 3, 5, "expected memory, per_job, io, cpu, under_pressure, users or match" },
        { "jobs:\n  b:\n    match: {exe: [bin/borg]}\n", 3, 19, "an executable must be an absolute path" },
        { "jobs:\n  b:\n    match: {exe: [/usr//bin/borg]}\n", 3, 19, "path must be normalised" },
        { "jobs:\n  b:\n    match: {exe: [/usr/bin/b*]}\n", 3, 19, "not a pattern" },
        { "jobs:\n  b:\n    match: {exe: [/a, /a]}\n", 3, 23, "'/a' is listed twice" },
        { "jobs:\n  b:\n    match: {units: [borg]}\n", 3, 21, "needs a type suffix" },
        { "jobs:\n  b:\n    match: {units: [\"a b.service\"]}\n", 3, 21, "does not allow" },
        { "jobs:\n  b:\n    match: {cmdline: [\"\"]}\n", 3, 23, "cannot be empty" },
        { "jobs:\n  b:\n    match: {exe: [/a], under: [sshd]}\n", 3, 32, "needs a type suffix" },
        { "jobs:\n  b:\n    match: {exe: [/a], under: [/a/../b]}\n", 3, 32, "match.under '/a/../b'" },
        { "jobs:\n  b:\n    match: {user: [root]}\n", 3, 12, "match: needs units, exe or cmdline" },
        { "jobs:\n  b:\n    match: {cmdline: [\"rsync --server *\"]}\n", 3, 22,
          "match.cmdline needs user or under as well: any local user can give a program any command line" },
        { "jobs:\n  b:\n    match: {exe: [{a: b}]}\n", 3, 19, "must be a list of strings" },
        { "jobs:\n  b:\n    match: {exe: [/a]}\n  c:\n    match: {exe: [/a]}\n", 5, 19,
          "/a is matched by class 'b' already (test.yaml:3)" },
        { "jobs:\n  b:\n    match: {colour: red}\n", 3, 13, "expected units, exe, cmdline, user or under" },
        { "jobs:\n  b:\n    per_job: {memory: {high: 2G, max: 1G}}\n", 3, 30,
          "per_job.memory.high (2 GiB) is above per_job.memory.max (1 GiB)" },
        { "jobs:\n  b:\n    per_job: {memory: {max: 4K}}\n", 3, 29, "per_job.memory.max must be at least 1M" },
        { "jobs:\n  b:\n    per_job: {io: []}\n", 3, 15, "expected memory" },
        { "job:\n  b: {}\n", 1, 1, "did you mean 'jobs'?" },
        { "socket: /run/x.sock\n", 1, 1, "a daemon setting: it belongs in pagewarden.yaml" },
        { "protect:\n  p:\n    unit: a.service\n    memory: {minimum: 1G}\n", 4, 14, "unknown key 'minimum'" },
        /* wrong node types */
        { "jobs: [a, b]\n", 1, 7, "'jobs' must be a mapping, not a list" },
        { "jobs:\n  b:\n    memory: 1G\n", 3, 13, "'memory' must be a mapping, not a value" },
        { "jobs:\n  b:\n    io: {device: /}\n", 3, 9, "'io' must be a list, not a mapping" },
        { "jobs:\n  b:\n    memory: {high: [1G]}\n", 3, 20, "'high' must be a value, not a list" },
        { "jobs:\n  b:\n    io: [/dev/sda]\n", 3, 10, "each io entry must be a mapping" },
        { "jobs:\n  b:\n    users: [[root]]\n", 3, 13, "users must be a list of user names" },
        { "- a\n- b\n", 1, 1, "a policy file must be a mapping" },
        { "jobs:\n  b: 5\n", 2, 6, "job class 'b' must be a mapping" },
        { "jobs:\n  b:\n    memory: {high: }\n", 3, 14, "'high' needs a value" },
        /* duplicate keys and names */
        { "jobs:\n  b: {}\n  b: {}\n", 3, 3, "duplicate key 'b' (first given at line 2)" },
        { "jobs:\n  b:\n    memory: {high: 1G, high: 2G}\n", 3, 24, "duplicate key 'high'" },
        /* aliases, anchors, documents, tabs, bytes */
        { "jobs:\n  b: &x {}\n  c: *x\n", 2, 6, "anchors" },
        { "jobs:\n  b: &x {}\n  c: *x\n", 3, 6, "aliases" },
        { "jobs: {}\n---\nprotect: {}\n", 2, 1, "more than one YAML document" },
        { "jobs:\n\tb: {}\n", 2, 1, "tab character" },
        { "jobs:\n  b\xe9: {}\n", 2, 4, "invalid UTF-8" },
        /* names */
        { "jobs:\n  a/b: {}\n", 2, 3, "contains '/'" },
        { "jobs:\n  ..: {}\n", 2, 3, "'.' and '..' are not names" },
        { "jobs:\n  \"a\\tb\": {}\n", 2, 3, "control character" },
        { "jobs:\n  \"a\\x9bb\": {}\n", 2, 3, "control character" }, /* C1: U+009B is CSI */
        { "protect:\n  a:\n    cgroup: \"/a b\\x8dapp.service\"\n", 3, 13, "cgroup path contains a control character" },
        { "jobs:\n  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: {}\n", 2, 3, "longer than 64" },
        { "jobs:\n  \"\": {}\n", 2, 3, "name is empty" },
        { "jobs:\n  -x: {}\n", 2, 3, "must start with a letter or a digit" },
        { "jobs:\n  a.b: {}\n", 2, 3, "only letters, digits" },
        { "protect:\n  a b:\n    unit: a.service\n", 2, 3, "only letters, digits" },
        /* values */
        { "jobs:\n  b:\n    memory: {high: 101%}\n", 3, 20, "percentage is over 100%" },
        { "jobs:\n  b:\n    memory: {high: -1G}\n", 3, 20, "negative values are not allowed" },
        { "jobs:\n  b:\n    memory: {high: 99999999999T}\n", 3, 20, "size is too large" },
        { "jobs:\n  b:\n    memory: {high: 99999999999999999999999}\n", 3, 20, "number is too large" },
        { "jobs:\n  b:\n    memory: {high: 1 Gb}\n", 3, 20, "expected a size such as 512M" },
        { "jobs:\n  b:\n    memory: {high: 512K}\n", 3, 20, "memory.high must be at least 1M" },
        { "jobs:\n  b:\n    memory: {high: 2G, max: 1G}\n", 3, 20, "is above memory.max" },
        { "jobs:\n  b:\n    cpu: {weight: 0}\n", 3, 19, "cpu weight is 1 to 10000" },
        { "jobs:\n  b:\n    cpu: {weight: 10001}\n", 3, 19, "out of range" },
        { "jobs:\n  b:\n    under_pressure: {freeze: yes}\n", 3, 30, "expected true or false" },
        { "jobs:\n  b:\n    under_pressure: {freeze: \"true\"}\n", 3, 30, "expected true or false" },
        { "jobs:\n  b:\n    under_pressure: {freeze_max: 10}\n", 3, 34, "needs a unit" },
        { "jobs:\n  b:\n    under_pressure: {freeze_max: 2h}\n", 3, 34, "unknown duration unit" },
        { "jobs:\n  b:\n    under_pressure: {freeze_max: 61m}\n", 3, 34, "between 100ms and 60m" },
        /* floors */
        { "jobs:\n  b:\n    memory: {high: 128M}\n    under_pressure: {memory_high_floor: 256M}\n", 4, 41,
          "memory_high_floor (256 MiB) is above memory.high (128 MiB)" },
        { "jobs:\n  b:\n    under_pressure: {memory_high_floor: max}\n", 3, 41, "cannot be max" },
        { "jobs:\n  b:\n    io: [{device: /, write_bps: 4M}]\n    under_pressure: {io_floor: 8M}\n", 4, 32,
          "io_floor (8 MiB/s) is above the class's lowest io limit (4 MiB/s)" },
        /* io */
        { "jobs:\n  b:\n    io: [{write_bps: 1M}]\n", 3, 10, "io entry needs a device:" },
        { "jobs:\n  b:\n    io: [{device: /}]\n", 3, 10, "sets no limit" },
        { "jobs:\n  b:\n    io: [{device: /no/disk, write_bps: 1M}, {device: /no/disk, read_bps: 1M}]\n", 3, 54,
          "'/no/disk' is named twice" },
        { "jobs:\n  b:\n    io: [{device: relative, write_bps: 1M}]\n", 3, 19, "give an absolute path" },
        { "jobs:\n  b:\n    io: [{device: /proc, write_bps: 1M}]\n", 3, 19,
          "proc file system, which has no block device" },
        { "jobs:\n  b:\n    io: [{device: \"1:2:3\", write_bps: 1M}]\n", 3, 19,
          "expected an absolute path or MAJ:MIN" },
        { "jobs:\n  b:\n    io: [{device: /, write_bps: 1M}, {device: /etc, read_bps: 1M}]\n", 3, 47, "already names" },
        { "jobs:\n  b:\n    io: [{device: /, write_bps: 0}]\n", 3, 33, "would stop all I/O" },
        /* users */
        { "jobs:\n  b:\n    users: [no-such-user-pw]\n", 3, 13, "unknown user 'no-such-user-pw'" },
        { "jobs:\n  b:\n    users: [root, root]\n", 3, 19, "listed twice" },
        { "jobs:\n  b:\n    users: [\"r/t\"]\n", 3, 13, "not allowed" },
        /* protect */
        { "protect:\n  p:\n    memory: {min: 1G}\n", 2, 3, "needs unit: (a systemd unit) or cgroup:" },
        { "protect:\n  p:\n    unit: a.service\n    cgroup: /a\n", 4, 13, "both unit: and cgroup:" },
        { "protect:\n  p:\n", 2, 3, "must be a mapping with unit: or cgroup:" },
        { "protect:\n  p:\n    unit: postgresql\n", 3, 11, "needs a type suffix" },
        { "protect:\n  p:\n    unit: \"a b.service\"\n", 3, 11, "character systemd does not allow" },
        { "protect:\n  p:\n    cgroup: system.slice/x\n", 3, 13, "must start with '/'" },
        { "protect:\n  p:\n    cgroup: /a/../b\n", 3, 13, "'.' or '..'" },
        { "protect:\n  p:\n    cgroup: /\n", 3, 13, "root cgroup" },
        { "protect:\n  p:\n    cgroup: /a//b\n", 3, 13, "empty component" },
        { "protect:\n  p:\n    cgroup: /a\n    memory: {min: 2G, low: 1G}\n", 4, 28, "memory.low is below memory.min" },
        { "protect:\n  p:\n    cgroup: /a\n    memory: {min: 17G}\n", 4, 19, "more than the machine's RAM (16 GiB)" },
        { "protect:\n  p:\n    cgroup: /a\n    memory: {min: max}\n", 4, 19, "give a size or auto" },
        { "protect:\n  p:\n    cgroup: /a\n    memory: {swap: no}\n", 4, 20, "expected deny" },
        { "protect:\n  p:\n    cgroup: /a\n  q:\n    cgroup: /a\n", 4, 3, "'/a' is already protected by entry 'p'" },
};

START_TEST(test_policy_errors) {
        assert_policy_error(error_cases[_i].text, error_cases[_i].line, error_cases[_i].column, error_cases[_i].needle);
}
END_TEST

/* A device that is not there (an unplugged backup disk) is a warning, not an
 * error: the file stays valid, and the entry waits for the device. */
START_TEST(test_policy_absent_device) {
        struct parse_result res;
        const struct pw_job_class *c;

        parse_policy("jobs:\n  b:\n    io: [{device: /does/not/exist, write_bps: 1M}, {device: /, read_bps: 2M}]\n",
                     &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        ck_assert_uint_eq(res.diags.n_errors, 0);
        ck_assert_uint_eq(res.diags.n_warnings, 1);
        ck_assert(
                has_diag(&res.diags, 3, 19, "device '/does/not/exist' does not exist: its limits apply once it does"));
        ck_assert(res.diags.items[0].warning);
        c = policy_find_class(&res.policy, "b");
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->n_io, 2);
        ck_assert(c->io[0].absent);
        ck_assert_ptr_null(c->io[0].disk);
        ck_assert(!c->io[1].absent);
        ck_assert_ptr_nonnull(c->io[1].disk);
        parse_result_done(&res);
}
END_TEST

/* All errors of a file are reported, not only the first. */
START_TEST(test_policy_all_errors) {
        static const char text[] =
                "jobs:\n"
                "  a:\n"
                "    memory: {high: 1X}\n"
                "  b/c: {}\n"
                "  d:\n"
                "    cpu: {weight: -1}\n"
                "protect:\n"
                "  p: {unit: x}\n"
                "  q: {cgroup: /q, memory: {min: 120%}}\n";
        struct parse_result res;

        parse_policy(text, &res);
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_msg(res.diags.n == 5, "%s", res.errors);
        ck_assert(has_diag(&res.diags, 3, 20, "expected a size"));
        ck_assert(has_diag(&res.diags, 4, 3, "contains '/'"));
        ck_assert(has_diag(&res.diags, 6, 19, "negative"));
        ck_assert(has_diag(&res.diags, 8, 13, "needs a type suffix"));
        ck_assert(has_diag(&res.diags, 9, 33, "over 100%"));
        /* Valid entries of a file with errors are not kept half-parsed. */
        ck_assert_ptr_null(policy_find_class(&res.policy, "a"));
        parse_result_done(&res);
}
END_TEST

/* The printed report: FILE:LINE:COLUMN: error: MESSAGE, the line, a caret. */
START_TEST(test_policy_error_format) {
        struct parse_result res;

        parse_policy("jobs:\n  backup:\n    memory:\n      high: 12Q\n", &res);
        ck_assert_str_eq(res.errors,
                         "test.yaml:4:13: error: '12Q': expected a size such as 512M or 1.5 GiB: a number with K, M, "
                         "G, "
                         "T or KiB, MiB, GiB, TiB (powers of 1024), a percentage of RAM, or max\n"
                         "          high: 12Q\n"
                         "                ^\n");
        parse_result_done(&res);
}
END_TEST

START_TEST(test_policy_empty_sections) {
        static const char *const texts[] = { "", "jobs:\n", "jobs: {}\nprotect: {}\n", "jobs: ~\nprotect: null\n",
                                             "# nothing\n" };
        struct parse_result res;

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                parse_policy(texts[i], &res);
                ck_assert_msg(res.r == 0, "%s: %s", texts[i], res.errors);
                ck_assert_uint_eq(res.policy.n_classes + res.policy.n_protects, 0);
                parse_result_done(&res);
        }
}
END_TEST

/* Names must be unique across all files of a policy directory. */
START_TEST(test_policy_duplicates_across_files) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *a = write_file(dir, "a.yaml", "jobs:\n  backup: {}\nprotect:\n  db: {cgroup: /db}\n");
        _cleanup_free_ char *b = write_file(dir, "b.yaml", "jobs:\n  copy: {}\n  backup: {}\n");
        _cleanup_free_ char *c = write_file(dir, "c.yaml", "protect:\n  db: {cgroup: /db2}\n  db3: {cgroup: /db}\n");
        _cleanup_free_ char *ignored = write_file(dir, "notes.txt", "not yaml: [\n");
        _cleanup_free_ char *hidden = write_file(dir, ".x.yaml", "not yaml: [\n");
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(policy_load_path(&ctx, dir, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(d.n == 3, "%s", text);
        ck_assert(strstr(text, "b.yaml:3:3: error: job class 'backup' is already defined at a.yaml:2"));
        ck_assert(strstr(text, "c.yaml:2:3: error: protect entry 'db' is already defined at a.yaml:4"));
        ck_assert(strstr(text, "c.yaml:3:3: error: '/db' is already protected by entry 'db'"));
        ck_assert_ptr_nonnull(policy_find_class(&p, "copy"));
        policy_done(&p);
        diag_list_done(&d);
        tmpdir_cleanup(dir);
}
END_TEST

/* A later file adds to a class an earlier one defines (a shipped class extended from a drop-in): lists are
 * added to, values replaced, what the first file set and the extension does not stays; rules carry the file
 * that named them. */
START_TEST(test_policy_extend) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *a =
                write_file(dir, "10-shipped.yaml",
                           "jobs:\n  backup:\n    memory: {high: 512M}\n"
                           "    under_pressure: {memory_high_floor: 100M}\n"
                           "    match:\n      units: [borgmatic.service]\n      exe: [/usr/bin/tar]\n");
        _cleanup_free_ char *b =
                write_file(dir, "90-local.yaml",
                           "extend:\n  backup:\n    memory: {max: 2G}\n    users: [root]\n"
                           "    match:\n      exe: [/usr/bin/gzip]\n      units: [\"restic-*.service\"]\n");
        _cleanup_free_ char *text = NULL;
        const struct pw_job_class *c;

        ck_assert_int_eq(policy_load_path(&ctx, dir, &p, &d), 0);
        ck_assert_uint_eq(p.n_classes, 1);
        c = policy_find_class(&p, "backup");
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->memory_high, 512 * UINT64_C(1048576));       /* the first file's */
        ck_assert_uint_eq(c->memory_max, 2048 * UINT64_C(1048576));       /* the extension's */
        ck_assert_uint_eq(c->memory_high_floor, 100 * UINT64_C(1048576)); /* set once, kept */
        ck_assert_uint_eq(c->n_users, 1);
        ck_assert_uint_eq(c->match.exe.n, 2);
        ck_assert_str_eq(c->match.exe.v[1].text, "/usr/bin/gzip");
        ck_assert_str_eq(c->match.exe.v[1].source, "90-local.yaml");
        ck_assert_ptr_null(c->match.exe.v[0].source);
        ck_assert_uint_eq(c->match.units.n, 2);
        ck_assert_str_eq(c->extended, "90-local.yaml:2");
        policy_done(&p);
        diag_list_done(&d);

        /* What cannot be extended, or not so: a class no earlier file defines, an exe another class names (or
         * this one, twice), a memory.high below the floor the first file set, a mapping that is not one. */
        free(write_file(dir, "90-local.yaml",
                        "extend:\n  nosuch:\n    memory: {max: 1G}\n  backup:\n    memory: {high: 50M}\n"
                        "    match:\n      exe: [/usr/bin/tar]\n"));
        free(write_file(dir, "50-copy.yaml", "jobs:\n  copy:\n    match:\n      exe: [/usr/bin/rsync]\n"));
        free(write_file(dir, "95-more.yaml",
                        "extend:\n  copy:\n    match:\n      exe: [/usr/bin/rsync]\n  backup: 3\n"));
        p = (struct pw_policy){};
        ck_assert_int_eq(policy_load_path(&ctx, dir, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "90-local.yaml:2:3: error: extend: no job class 'nosuch' before this point"), "%s",
                      text);
        ck_assert_msg(strstr(text,
                             "90-local.yaml:7:13: error: /usr/bin/tar is matched by class 'backup' already "
                             "(10-shipped.yaml:7)"),
                      "%s", text);
        ck_assert_msg(strstr(text, "95-more.yaml:4:13: error: /usr/bin/rsync is matched by class 'copy' already"), "%s",
                      text);
        ck_assert_msg(strstr(text, "95-more.yaml:5:11: error: extend: 'backup' must be a mapping"), "%s", text);
        policy_done(&p);
        diag_list_done(&d);
        free(text);
        text = NULL;

        /* The floor the first file set stays, and must still fit the new memory.high. */
        free(write_file(dir, "90-local.yaml", "extend:\n  backup:\n    memory: {high: 50M}\n"));
        {
                _cleanup_free_ char *more = path_join(dir, "95-more.yaml");

                ck_assert_int_eq(unlink(more), 0);
        }
        p = (struct pw_policy){};
        d = (struct diag_list){};
        ck_assert_int_eq(policy_load_path(&ctx, dir, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "memory_high_floor (100 MiB) is above memory.high (50 MiB)"), "%s", text);
        policy_done(&p);
        diag_list_done(&d);
        tmpdir_cleanup(dir);
}
END_TEST

START_TEST(test_policy_file_errors) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *missing = path_join(dir, "missing.yaml");
        _cleanup_free_ char *fifo = path_join(dir, "fifo.yaml");
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        ck_assert_int_eq(policy_load_path(&ctx, missing, &p, &d), -EINVAL);
        ck_assert_int_eq(policy_load_path(&ctx, fifo, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "missing.yaml: error: No such file or directory"), "%s", text);
        ck_assert_msg(strstr(text, "fifo.yaml: error: not a regular file"), "%s", text);
        diag_list_done(&d);
        policy_done(&p);
        tmpdir_cleanup(dir);
}
END_TEST

/* Like sudoers: files not owned by root, or writable by others, are refused when running as root. */
START_TEST(test_policy_ownership) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *f = write_file(dir, "a.yaml", "jobs: {}\n");
        _cleanup_free_ char *text = NULL;

        ctx.check_owner = true;
        ck_assert_int_eq(chmod(f, 0666), 0);
        ck_assert_int_eq(policy_load_path(&ctx, f, &p, &d), -EINVAL);
        if (geteuid() == 0) {
                ck_assert_int_eq(chmod(f, 0620), 0);
                ck_assert_int_eq(policy_load_path(&ctx, f, &p, &d), -EINVAL);
                ck_assert_int_eq(chmod(f, 0644), 0);
                ck_assert_int_eq(policy_load_path(&ctx, f, &p, &d), 0);
                ck_assert_int_eq(chown(f, 1, 1), 0);
        } else
                ck_assert_int_eq(chmod(f, 0644), 0);
        ck_assert_int_eq(policy_load_path(&ctx, f, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "a.yaml: error: file is writable by others (mode 0666): refusing it"), "%s", text);
        ck_assert_msg(strstr(text, ", not root: refusing it (chown root)"), "%s", text);
        if (geteuid() == 0)
                ck_assert_msg(strstr(text, "writable by its group (mode 0620)"), "%s", text);
        /* Without the check (not root), the same file is fine. */
        ctx.check_owner = false;
        diag_list_done(&d);
        ck_assert_int_eq(policy_load_path(&ctx, f, &p, &d), 0);
        policy_done(&p);
        diag_list_done(&d);
        tmpdir_cleanup(dir);
}
END_TEST

struct policy_run {
        const char *path; /* a directory, or the name of text */
        const char *text;
        struct fail_alloc_ref ref;
};

/* Parses run's text, or loads its directory; everything freed. */
static int policy_run(void *data) {
        struct policy_run *run = data;
        struct policy_context ctx = test_context();
        struct source src = { .path = (char *) run->path, .text = (char *) run->text };
        struct pw_policy p = {};
        struct diag_list d = {};
        int r;

        ctx.resolve_users = false; /* NSS keeps caches: not this test's business */
        if (run->text) {
                src.size = strlen(run->text);
                r = policy_parse_source(&ctx, &src, &p, &d);
        } else
                r = policy_load_path(&ctx, run->path, &p, &d);
        r = fail_alloc_same(&run->ref, r, digest_diags(digest_policy(DIGEST_INIT, &p), &d));
        policy_done(&p);
        diag_list_done(&d);
        return r;
}

/* Memory running out anywhere while parsing gives -ENOMEM: not an abort, a crash, a leak or a wrong result. */
START_TEST(test_policy_enomem) {
        static const char valid[] =
                "jobs:\n"
                "  backup:\n"
                "    memory: {high: 256M, max: 2G, swap_max: 0}\n"
                "    cpu: {weight: 50}\n"
                "    io: [{device: /, write_bps: 80M/s, read_iops: 1000}]\n"
                "    under_pressure: {memory_high_floor: 64M, freeze: true, freeze_max: 5s}\n"
                "    users: [root, \"1000\"]\n"
                "  copy: {}\n"
                "protect:\n"
                "  db: {unit: postgresql.service, memory: {min: 25%, low: auto, swap: deny}}\n"
                "  web: {cgroup: /web.slice}\n";
        /* Errors at every level: the YAML reader, unknown keys, values, entries, cross-field checks. */
        static const char invalid[] =
                "jobs:\n"
                "  a:\n"
                "    memroy: {high: 1G}\n"
                "    cpu: {weight: -1}\n"
                "    io: [{device: /, read_bps: 0}, {write_iops: 5}]\n"
                "    users: [root, root, \"a b\"]\n"
                "  b/c: {}\n"
                "  d: {memory: {high: 1G, max: 512M}, under_pressure: {io_floor: max}}\n"
                "  e:\t{}\n"
                "protect:\n"
                "  p: {unit: x, cgroup: /x}\n"
                "  q: {cgroup: /q, memory: {min: 2G, low: 1G}}\n"
                "  r: {cgroup: /q}\n"
                "socket: /run/x\n";

        /* Failures at many points gave -ENOMEM (the exact numbers depend on libc). */
        ck_assert_uint_gt(fail_alloc_each(policy_run, &(struct policy_run){ .path = "d/v.yaml", .text = valid }, 0),
                          50);
        ck_assert_uint_gt(fail_alloc_each(policy_run, &(struct policy_run){ .path = "d/i.yaml", .text = invalid },
                                          -EINVAL),
                          50);
}
END_TEST

START_TEST(test_policy_load_enomem) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *fifo = path_join(dir, "c.yaml");

        /* Errors in two ways: a name defined twice, and a file that is not a regular file. */
        free(write_file(dir, "a.yaml", "jobs: {backup: {memory: {high: 1G}}}\n"));
        free(write_file(dir, "b.yaml", "jobs: {backup: {}}\nprotect: {db: {cgroup: /db}}\n"));
        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        ck_assert_uint_gt(fail_alloc_each(policy_run, &(struct policy_run){ .path = dir }, -EINVAL), 10);
        tmpdir_cleanup(dir);
}
END_TEST

/* Every file shipped in conf/ is valid. */
START_TEST(test_policy_conf_examples) {
        static const char *const files[] = { "conf/policies.d", "conf/examples/database.yaml",
                                             "conf/examples/io-limits.yaml", "conf/examples/everything.yaml" };
        struct policy_context ctx = test_context();

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *path = path_join(TOP_SRCDIR, files[i]);
                struct pw_policy p = {};
                struct diag_list d = {};
                _cleanup_free_ char *text = NULL;
                int r = policy_load_path(&ctx, path, &p, &d);

                text = diag_to_string(&d);
                ck_assert_msg(r == 0, "%s:\n%s", files[i], text);
                ck_assert_uint_gt(p.n_classes + p.n_protects, 0);
                policy_done(&p);
                diag_list_done(&d);
        }
}
END_TEST

/* ---- limits ---------------------------------------------------------------- */

/* A text built with stdio. */
struct gen {
        char *text;
        size_t size;
        FILE *f;
};

static FILE *gen_open(struct gen *g) {
        *g = (struct gen){};
        g->f = open_memstream(&g->text, &g->size);
        ck_assert_ptr_nonnull(g->f);
        return g->f;
}

static char *gen_close(struct gen *g) {
        ck_assert_int_eq(fclose(g->f), 0);
        return g->text;
}

/* "jobs:" and n classes, each "  cNNN: BODY". */
static char *gen_classes(size_t first, size_t n, const char *body) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n", f);
        for (size_t i = first; i < first + n; i++)
                fprintf(f, "  c%03zu: %s\n", i, body);
        return gen_close(&g);
}

/* 256 job classes are fine; the 257th is refused there, and the rest of jobs: is not read. */
START_TEST(test_policy_max_classes) {
        _cleanup_free_ char *ok = gen_classes(0, PW_MAX_CLASSES, "{}");
        _cleanup_free_ char *over = gen_classes(0, PW_MAX_CLASSES + 50, "{}");
        struct parse_result res;

        parse_policy(ok, &res);
        ck_assert_msg(res.r == 0, "%s", res.errors);
        ck_assert_uint_eq(res.policy.n_classes, PW_MAX_CLASSES);
        parse_result_done(&res);

        parse_policy(over, &res);
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_msg(has_diag(&res.diags, 2 + PW_MAX_CLASSES, 3,
                               "more than 256 job classes in the policy (the rest of jobs: is not read)"),
                      "%s", res.errors);
        ck_assert_uint_eq(res.diags.n_errors, 1);
        parse_result_done(&res);
}
END_TEST

/* The limit is the whole policy's: classes of the files read before count. */
START_TEST(test_policy_max_classes_across_files) {
        _cleanup_free_ char *a = gen_classes(0, 200, "{}"), *b = gen_classes(200, 60, "{}");
        struct source sa = { .path = (char *) "a.yaml", .text = a, .size = strlen(a) };
        struct source sb = { .path = (char *) "b.yaml", .text = b, .size = strlen(b) };
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};

        ck_assert_int_eq(policy_parse_source(&ctx, &sa, &p, &d), 0);
        ck_assert_int_eq(policy_parse_source(&ctx, &sb, &p, &d), -EINVAL);
        ck_assert(has_diag(&d, 2 + 56, 3, "more than 256 job classes in the policy"));
        ck_assert_uint_eq(p.n_classes, PW_MAX_CLASSES);
        policy_done(&p);
        diag_list_done(&d);
}
END_TEST

START_TEST(test_policy_max_protects) {
        struct parse_result res;
        struct gen g;
        FILE *f = gen_open(&g);
        _cleanup_free_ char *text = NULL;

        fputs("protect:\n", f);
        for (size_t i = 0; i < PW_MAX_PROTECTS + 1; i++)
                fprintf(f, "  p%03zu: {cgroup: /p%03zu}\n", i, i);
        text = gen_close(&g);
        parse_policy(text, &res);
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_msg(has_diag(&res.diags, 2 + PW_MAX_PROTECTS, 3,
                               "more than 256 protected applications in the policy (the rest of protect: is not read)"),
                      "%s", res.errors);
        ck_assert_uint_eq(res.diags.n_errors, 1);
        ck_assert_uint_eq(res.policy.n_protects, PW_MAX_PROTECTS);
        parse_result_done(&res);
}
END_TEST

/* A block list of n items "- PREFIX<index>SUFFIX" under "jobs: c: KEY:" (items at column strlen(indent) + 3). */
static char *gen_class_list(const char *key, const char *indent, size_t n, const char *prefix, const char *suffix) {
        struct gen g;
        FILE *f = gen_open(&g);

        fprintf(f, "jobs:\n  c:\n    %s:\n", key);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s- %s%zu%s\n", indent, prefix, i, suffix);
        return gen_close(&g);
}

/* Lists of a job class: past their limit, an error at the first entry too many, and the rest is not read. */
START_TEST(test_policy_max_lists) {
        static const struct {
                const char *key, *indent, *prefix, *suffix;
                size_t max;
                const char *needle;
        } cases[] = {
                { "users", "      ", "", "", PW_MAX_USERS, "more than 64 users in a job class" },
                { "io", "      ", "{device: /dev/null", ", read_bps: 1M}", PW_MAX_IO,
                  "more than 16 io entries in a job class" },
                { "match:\n      exe", "        ", "/usr/bin/x", "", PW_MAX_MATCH,
                  "more than 64 entries in match.exe" },
                { "match:\n      units", "        ", "u", ".service", PW_MAX_MATCH,
                  "more than 64 entries in match.units" },
                { "match:\n      cmdline", "        ", "'x ", "'", PW_MAX_MATCH,
                  "more than 64 entries in match.cmdline" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned first = strchr(cases[i].key, '\n') ? 5 : 4, column = (unsigned) strlen(cases[i].indent) + 3;
                unsigned limit_line = first + (unsigned) cases[i].max;
                _cleanup_free_ char *ok =
                        gen_class_list(cases[i].key, cases[i].indent, cases[i].max, cases[i].prefix, cases[i].suffix);
                _cleanup_free_ char *over = gen_class_list(cases[i].key, cases[i].indent, cases[i].max + 5,
                                                           cases[i].prefix, cases[i].suffix);
                struct parse_result res;

                parse_policy(ok, &res);
                ck_assert_msg(!strstr(res.errors, "more than"), "%s", res.errors);
                parse_result_done(&res);
                parse_policy(over, &res);
                ck_assert_int_eq(res.r, -EINVAL);
                ck_assert_msg(has_diag(&res.diags, limit_line, column, cases[i].needle), "%s", res.errors);
                /* The rest is not read. */
                for (size_t j = 0; j < res.diags.n; j++)
                        ck_assert_uint_le(res.diags.items[j].line, limit_line);
                parse_result_done(&res);
        }
}
END_TEST

/* The match entries of all classes together: the class that would pass the limit is refused. */
START_TEST(test_policy_max_match_total) {
        struct gen g;
        FILE *f = gen_open(&g);
        _cleanup_free_ char *text = NULL;
        struct parse_result res;
        size_t n = PW_MAX_MATCH_TOTAL / PW_MAX_MATCH + 1;

        fputs("jobs:\n", f);
        for (size_t c = 0; c < n; c++) {
                fprintf(f, "  c%02zu: {match: {exe: [", c);
                for (size_t i = 0; i < PW_MAX_MATCH; i++)
                        fprintf(f, "%s/x/%zu/%zu", i ? ", " : "", c, i);
                fputs("]}}\n", f);
        }
        text = gen_close(&g);
        parse_policy(text, &res);
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_msg(has_diag(&res.diags, 1 + (unsigned) n, 16,
                               "the job classes would have 1088 match entries in all, more than 1024"),
                      "%s", res.errors);
        ck_assert_uint_eq(res.diags.n_errors, 1);
        ck_assert_uint_eq(res.policy.n_classes, n - 1);
        parse_result_done(&res);
}
END_TEST

/* An executable or unit pattern named by two classes: found in the classes of earlier files, and of the same file. */
START_TEST(test_policy_match_conflicts) {
        static const char a[] =
                "jobs:\n"
                "  x:\n"
                "    match: {exe: [/usr/bin/a, /usr/bin/b], units: [u.service]}\n";
        static const char b[] =
                "jobs:\n"
                "  y:\n"
                "    match: {exe: [/usr/bin/b, /usr/bin/c], units: [u.service, v.service]}\n"
                "  z:\n"
                "    match: {exe: [/usr/bin/d], units: ['w*.service']}\n"
                "  w:\n"
                "    match: {exe: [/usr/bin/d, /usr/bin/a], units: ['w*.service']}\n";
        struct source sa = { .path = (char *) "a.yaml", .text = (char *) a, .size = strlen(a) };
        struct source sb = { .path = (char *) "b.yaml", .text = (char *) b, .size = strlen(b) };
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(policy_parse_source(&ctx, &sa, &p, &d), 0);
        ck_assert_int_eq(policy_parse_source(&ctx, &sb, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(d.n_errors == 5, "%s", text);
        ck_assert(has_diag(&d, 3, 19, "/usr/bin/b is matched by class 'x' already (a.yaml:3)"));
        ck_assert(has_diag(&d, 3, 52, "u.service is matched by class 'x' already (a.yaml:3)"));
        ck_assert(has_diag(&d, 7, 19, "/usr/bin/d is matched by class 'z' already (b.yaml:5)"));
        ck_assert(has_diag(&d, 7, 31, "/usr/bin/a is matched by class 'x' already (a.yaml:3)"));
        ck_assert(has_diag(&d, 7, 52, "w*.service is matched by class 'z' already (b.yaml:5)"));
        ck_assert_uint_eq(p.n_classes, 2);
        policy_done(&p);
        diag_list_done(&d);
}
END_TEST

/* Names looked up outside the file (NSS, sysfs) are looked up once each, and at most PW_MAX_LOOKUPS of them per
 * file: past that, -E2BIG. */
START_TEST(test_policy_lookups) {
        struct policy_context ctx = test_context();
        struct source src = { .path = (char *) "t.yaml", .text = (char *) "", .size = 0 };
        struct diag_list d = {};
        struct device_info di;
        struct pstate st;
        char name[64];

        ctx.resolve_users = true;
        pstate_init(&st, &ctx, &src, &d);
        for (unsigned i = 0; i < PW_MAX_LOOKUPS - 1; i++) {
                snprintf(name, sizeof(name), "pagewarden-no-such-user-%u", i);
                ck_assert_int_eq(pstate_account_known(&st, name, false), 0);
        }
        ck_assert_int_eq(pstate_account_known(&st, "root", false), 1);
        ck_assert_uint_eq(st.n_lookups, PW_MAX_LOOKUPS);
        /* Full: names seen before are still answered, numeric ids need no lookup, new names are refused. */
        ck_assert_int_eq(pstate_account_known(&st, "pagewarden-no-such-user-7", false), 0);
        ck_assert_int_eq(pstate_account_known(&st, "root", false), 1);
        ck_assert_int_eq(pstate_account_known(&st, "1000", false), 1);
        ck_assert_int_eq(pstate_account_known(&st, "root", true), -E2BIG); /* a group is another name */
        ck_assert_int_eq(pstate_account_known(&st, "daemon", false), -E2BIG);
        ck_assert_int_eq(pstate_device_resolve(&st, "/", &di), -E2BIG);
        ck_assert_uint_eq(st.n_lookups, PW_MAX_LOOKUPS);
        ck_assert(!st.oom);
        pstate_done(&st);
        ck_assert_uint_eq(d.n_errors, 0);
        diag_list_done(&d);
}
END_TEST

/* The same user in every class is looked up once; different ones past the limit are errors. */
START_TEST(test_policy_lookups_in_policy) {
        struct gen g;
        FILE *f = gen_open(&g);
        _cleanup_free_ char *same = gen_classes(0, 200, "{users: [pagewarden-no-such-user]}"), *text = NULL;
        struct parse_result res;

        parse_policy(same, &res);
        ck_assert_uint_eq(res.diags.n_errors, 200);
        ck_assert_ptr_null(strstr(res.errors, "more than 256"));
        parse_result_done(&res);

        /* 260 different names: 256 unknown users, then 4 that are not looked up. */
        fputs("jobs:\n", f);
        for (size_t c = 0; c < 5; c++) {
                fprintf(f, "  c%zu:\n    users:\n", c);
                for (size_t i = 0; i < 52; i++)
                        fprintf(f, "      - pagewarden-no-such-user-%zu\n", c * 52 + i);
        }
        text = gen_close(&g);
        parse_policy(text, &res);
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_uint_eq(res.diags.n_errors, 260);
        ck_assert_msg(strstr(res.errors, "test.yaml: ... and 160 more errors"), "%s", res.errors);
        parse_result_done(&res);
}
END_TEST

/* Files larger than 1 MiB are refused before they are read. */
START_TEST(test_policy_file_too_large) {
        char *dir = tmpdir_new();
        struct policy_context ctx = test_context();
        struct pw_policy p = {};
        struct diag_list d = {};
        _cleanup_free_ char *big = malloc(YTREE_MAX_FILE_SIZE + 2), *path = NULL, *path2 = NULL, *text = NULL;

        ck_assert_ptr_nonnull(big);
        memset(big, '#', YTREE_MAX_FILE_SIZE);
        big[YTREE_MAX_FILE_SIZE - 1] = '\n';
        big[YTREE_MAX_FILE_SIZE] = '\0';
        path = write_file(dir, "exactly.yaml", big); /* 1 MiB of comments: fine */
        ck_assert_int_eq(policy_load_path(&ctx, path, &p, &d), 0);
        memcpy(big + YTREE_MAX_FILE_SIZE - 1, "#\n", 3);
        path2 = write_file(dir, "over.yaml", big);
        ck_assert_int_eq(policy_load_path(&ctx, path2, &p, &d), -EINVAL);
        text = diag_to_string(&d);
        ck_assert_msg(strstr(text, "over.yaml: error: file is larger than 1 MiB (1048576 bytes)\n"), "%s", text);
        policy_done(&p);
        diag_list_done(&d);
        tmpdir_cleanup(dir);
}
END_TEST

/* ---- adversarial files: bounded time, memory and output ---------------------- */

static uint64_t cpu_usec(void) {
        return now_usec(CLOCK_PROCESS_CPUTIME_ID);
}

/* What the tests assert, generous for a loaded machine and a sanitizer build; the figures printed are what it
 * takes (pagewardenctl check and a reload should take at most 100 ms for any file under 1 MiB). */
#define TIME_BOUND_USEC (2 * 1000000)

static char *adv_nested(void) {
        char *s = malloc(100000 + 1);

        ck_assert_ptr_nonnull(s);
        memset(s, '[', 100000);
        s[100000] = '\0';
        return s;
}

/* One line of 99 KB, a duplicate key every 6 bytes. */
static char *adv_one_line(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("{jobs: {c: {", f);
        for (size_t i = 0; i < 99 * 1024 / 6 - 4; i++)
                fputs("a: 1, ", f);
        fputs("a: 1}}}\n", f);
        return gen_close(&g);
}

static char *adv_many_classes(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n", f);
        for (size_t i = 0; i < 90909; i++)
                fprintf(f, "  c%05zu: \n", i); /* 11 bytes: 1 MB in all */
        return gen_close(&g);
}

static char *adv_5000_errors(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n  c:\n", f);
        for (size_t i = 0; i < 5000; i++)
                fprintf(f, "    k%zu: 1\n", i);
        return gen_close(&g);
}

static char *adv_many_values(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs: [", f);
        while (g.size < YTREE_MAX_FILE_SIZE - 16) {
                fputs("1,", f);
                fflush(f);
        }
        fputs("1]\n", f);
        return gen_close(&g);
}

/* As many match entries as fit, long and alike (slow to compare), in classes most of which are refused. */
static char *adv_match(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n", f);
        for (size_t c = 0; c < PW_MAX_CLASSES && g.size < YTREE_MAX_FILE_SIZE - 8000; c++) {
                fprintf(f, "  c%zu:\n%s    match:\n      exe: [", c, c >= 7 ? "    cpu: {weight: 0}\n" : "");
                for (size_t i = 0; i < PW_MAX_MATCH; i++)
                        fprintf(f, "%s/opt/pppppppppppppppppppppppppppppppppppppppp/%zu-%zu", i ? "," : "", c, i);
                fputs("]\n      units: [", f);
                for (size_t i = 0; i < PW_MAX_MATCH; i++)
                        fprintf(f, "%su%zu-%zu.service", i ? "," : "", c, i);
                fputs("]\n", f);
                fflush(f);
        }
        return gen_close(&g);
}

/* Every user unknown, every name different: each one a lookup. */
static char *adv_users(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n", f);
        for (size_t c = 0; c < PW_MAX_CLASSES; c++) {
                fprintf(f, "  c%zu:\n    users: [", c);
                for (size_t i = 0; i < PW_MAX_USERS; i++)
                        fprintf(f, "%snouser%zu-%zu", i ? "," : "", c, i);
                fputs("]\n    match: {exe: [/x], user: [", f);
                for (size_t i = 0; i < PW_MAX_MATCH; i++)
                        fprintf(f, "%snomatch%zu-%zu", i ? "," : "", c, i);
                fputs("]}\n", f);
        }
        return gen_close(&g);
}

/* Every class with all the io entries it may have, on devices that do not
 * exist (each a warning and a lookup), and one error at the end. */
static char *adv_io(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n", f);
        for (size_t c = 0; c < PW_MAX_CLASSES; c++) {
                fprintf(f, "  c%zu:\n    io:\n", c);
                for (size_t i = 0; i < PW_MAX_IO; i++)
                        fprintf(f, "      - {device: /%zu, read_bps: 1M}\n", i);
        }
        fputs("  bad: 5\n", f);
        return gen_close(&g);
}

/* A class with a name of half a megabyte, quoted in the message of each of its errors. */
static char *adv_long_name(void) {
        struct gen g;
        FILE *f = gen_open(&g);

        fputs("jobs:\n  ", f);
        for (size_t i = 0; i < 500000; i++)
                fputc('n', f);
        fputs(":\n", f);
        for (size_t i = 0; i < 20000; i++)
                fprintf(f, "    k%zu: 1\n", i);
        return gen_close(&g);
}

static const struct {
        const char *what;
        char *(*generate)(void);
        /* clang-format off */
} adversarial[] = {
        { "100,000 nested '['", adv_nested },
        { "a 99 KB line of duplicate keys", adv_one_line },
        { "90,909 classes", adv_many_classes },
        { "5,000 unknown keys", adv_5000_errors },
        { "1 MiB of '1,'", adv_many_values },
        { "long match entries", adv_match },
        { "unknown users", adv_users },
        { "io entries", adv_io },
        { "a 500 KB class name", adv_long_name },
};
/* clang-format on */

START_TEST(test_policy_adversarial) {
        _cleanup_free_ char *text = adversarial[_i].generate();
        struct policy_context ctx = test_context();
        struct parse_result res;
        uint64_t t0, t;

        ck_assert_uint_le(strlen(text), YTREE_MAX_FILE_SIZE);
        t0 = cpu_usec();
        parse_policy_ctx(&ctx, text, &res);
        t = cpu_usec() - t0;
        fprintf(stderr, "policy: %s (%zu bytes): %.1f ms of CPU, %zu errors, %zu bytes of messages\n",
                adversarial[_i].what, strlen(text), (double) t / 1000, res.diags.n_errors, strlen(res.errors));
        ck_assert_int_eq(res.r, -EINVAL);
        ck_assert_uint_le(res.diags.n, DIAG_MAX_PER_FILE);
        ck_assert_uint_lt(strlen(res.errors), DIAG_MAX_PER_FILE * (DIAG_MAX_MESSAGE + 3 * DIAG_LINE_WINDOW));
        ck_assert_uint_lt(t, TIME_BOUND_USEC);
        parse_result_done(&res);
}
END_TEST

Suite *policy_suite(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_policy_full);
        tcase_add_test(tc, test_policy_defaults);
        tcase_add_loop_test(tc, test_policy_errors, 0, ELEMENTSOF(error_cases));
        tcase_add_test(tc, test_policy_all_errors);
        tcase_add_test(tc, test_policy_absent_device);
        tcase_add_test(tc, test_policy_error_format);
        tcase_add_test(tc, test_policy_empty_sections);
        tcase_add_test(tc, test_policy_duplicates_across_files);
        tcase_add_test(tc, test_policy_file_errors);
        tcase_add_test(tc, test_policy_ownership);
        tcase_add_test(tc, test_policy_conf_examples);
        tcase_add_test(tc, test_policy_enomem);
        tcase_add_test(tc, test_policy_load_enomem);
        suite_add_tcase(s, tc);

        tc = tcase_create("limits");
        tcase_add_test(tc, test_policy_max_classes);
        tcase_add_test(tc, test_policy_max_classes_across_files);
        tcase_add_test(tc, test_policy_max_protects);
        tcase_add_test(tc, test_policy_max_lists);
        tcase_add_test(tc, test_policy_max_match_total);
        tcase_add_test(tc, test_policy_match_conflicts);
        tcase_add_test(tc, test_policy_lookups);
        tcase_add_test(tc, test_policy_extend);
        tcase_add_test(tc, test_policy_lookups_in_policy);
        tcase_add_test(tc, test_policy_file_too_large);
        tcase_add_loop_test(tc, test_policy_adversarial, 0, ELEMENTSOF(adversarial));
        suite_add_tcase(s, tc);
        return s;
}
