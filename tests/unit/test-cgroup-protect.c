/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-protect.c: the protection ledger on cgroup files, over a fake tree
 * (system.slice with two services): memory.min raised on a protected cgroup
 * and on its ancestors to cover their children, swap denied, each request's
 * result (a unit entry is not a cgroup's, a missing cgroup is -ENOENT), and
 * every original given back at the end, but never to a cgroup made again
 * under the same name (pinned by its inode number).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "fake-daemon.h"

#define M (UINT64_C(1) << 20)

struct fixture {
        char *dir;
        struct cgroup_engine *e;
        struct ledger l; /* a backend's: the engine only does its I/O */
};

static void service(const char *dir, const char *name, const char *min) {
        _cleanup_free_ char *cgroup = NULL, *min_file = NULL;
        const char *files[] = { min_file, "memory.low=0\n", "memory.swap.max=max\n", NULL };

        ck_assert_int_ge(asprintf(&cgroup, "system.slice/%s", name), 0);
        ck_assert_int_ge(asprintf(&min_file, "memory.min=%s", min), 0);
        files[0] = min_file;
        fake_cgroup_files(dir, cgroup, files);
}

static void fixture_init(struct fixture *f) {
        f->dir = tmpdir_new();
        free(write_file(f->dir, "system.slice/memory.min", "0\n"));
        free(write_file(f->dir, "system.slice/memory.low", "0\n"));
        free(write_file(f->dir, "system.slice/memory.swap.max", "max\n")); /* the host accounts swap */
        service(f->dir, "db.service", "1048576\n");
        service(f->dir, "cache.service", "0\n");
        ck_assert_int_eq(cgroup_engine_new(f->dir, "pagewarden.slice", false, &f->e), 0);
        ck_assert_int_eq(cgroup_protect_ledger_init(&f->l, NULL), 0);
}

static void fixture_done(struct fixture *f) {
        ledger_done(&f->l);
        cgroup_engine_free(f->e);
        tmpdir_cleanup(f->dir);
}

/* The text of a file of the tree, without its newline. */
static char *value(struct fixture *f, const char *file) {
        _cleanup_free_ char *path = path_join(f->dir, file);
        char *text = NULL;

        ck_assert_int_eq(read_full_file(path, 4096, &text, NULL), 0);
        text[strcspn(text, "\n")] = '\0';
        return text;
}

static void assert_value(struct fixture *f, const char *file, const char *want) {
        _cleanup_free_ char *got = value(f, file);

        ck_assert_msg(streq(got, want), "%s is \"%s\", want \"%s\"", file, got, want);
}

START_TEST(test_protect_and_withdraw) {
        struct fixture f;
        const struct ledger_request req[] = {
                { "/system.slice/db.service", 64 * M, 0, true },
                { NULL, 32 * M, 0, false }, /* a unit: entry, not a cgroup's */
                { "/system.slice/cache.service", 32 * M, 8 * M, false },
                { "/system.slice/gone.service", 16 * M, 0, false },
        };
        struct cgroup_protect_result res[4];

        fixture_init(&f);
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, req, 4, res), 0);
        ck_assert_int_eq(res[0].error, 0);
        ck_assert_uint_eq(res[0].min, 64 * M);
        ck_assert_int_eq(res[1].error, -EOPNOTSUPP);
        ck_assert_int_eq(res[2].error, 0);
        ck_assert_uint_eq(res[2].low, 8 * M);
        ck_assert_int_eq(res[3].error, -ENOENT);
        assert_value(&f, "system.slice/db.service/memory.min", "67108864");
        assert_value(&f, "system.slice/db.service/memory.swap.max", "0");
        assert_value(&f, "system.slice/cache.service/memory.swap.max", "max");
        /* The slice covers every child the policy names, there or not yet (one that appears is protected at
         * once), or the kernel would not give them what they have: 64 + 32 + 16 MiB. */
        assert_value(&f, "system.slice/memory.min", "117440512");
        ck_assert_uint_eq(res[0].effective_min, 64 * M);
        ck_assert_uint_eq(f.l.n, 3);
        /* Asked again, the same: nothing to change, and the originals kept are still the first ones. */
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, req, 4, NULL), 0);
        assert_value(&f, "system.slice/memory.min", "117440512");
        /* Withdrawn: every file as it was. */
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, NULL, 0, NULL), 0);
        assert_value(&f, "system.slice/db.service/memory.min", "1048576");
        assert_value(&f, "system.slice/db.service/memory.swap.max", "max");
        assert_value(&f, "system.slice/cache.service/memory.low", "0");
        assert_value(&f, "system.slice/memory.min", "0");
        ck_assert_uint_eq(f.l.n, 0);
        fixture_done(&f);
}
END_TEST

START_TEST(test_made_again) {
        struct fixture f;
        const struct ledger_request req[] = { { "/system.slice/db.service", 64 * M, 0, false } };
        _cleanup_free_ char *gone = NULL, *svc = NULL;

        fixture_init(&f);
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, req, 1, NULL), 0);
        assert_value(&f, "system.slice/db.service/memory.min", "67108864");
        /* The service restarts: its cgroup is removed and made again, with the kernel's default. */
        svc = path_join(f.dir, "system.slice/db.service");
        ck_assert_int_ge(asprintf(&gone, "%s.old", svc), 0);
        ck_assert_int_eq(rename(svc, gone), 0);
        service(f.dir, "db.service", "0\n");
        /* Withdrawn: the old cgroup's original (1 MiB) is not the new one's to get. */
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, NULL, 0, NULL), 0);
        assert_value(&f, "system.slice/db.service/memory.min", "0");
        assert_value(&f, "system.slice/memory.min", "0");
        fixture_done(&f);
}
END_TEST

START_TEST(test_bad_path) {
        struct fixture f;
        const struct ledger_request req[] = { { "/system.slice/../etc", 64 * M, 0, false } };
        struct cgroup_protect_result res[1] = {};

        fixture_init(&f);
        ck_assert_int_eq(cgroup_protect_set(f.e, &f.l, req, 1, res), -EINVAL);
        assert_value(&f, "system.slice/memory.min", "0");
        fixture_done(&f);
}
END_TEST

Suite *cgroup_protect_suite(void) {
        Suite *s = suite_create("cgroup-protect");
        TCase *tc = tcase_create("cgroup-protect");

        tcase_add_test(tc, test_protect_and_withdraw);
        tcase_add_test(tc, test_made_again);
        tcase_add_test(tc, test_bad_path);
        suite_add_tcase(s, tc);
        return s;
}
