/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_check_program(), through the parser, on a fake tree: only a
 * context that asks looks at the programs (the daemon's own load does
 * not: it says it itself), every way a rule cannot match is a warning at
 * its entry, and memory running out while looking gives -ENOMEM, never a
 * warning lost or one too many.  tests/cli/check.sh checks the output.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "fail-alloc.h"

/* A tree of programs, and a policy (text, allocated) naming each, one per line from line 5 on. */
static char *tree(char **ret_text) {
        static const char *const names[] = {
                "bin/borg",      /* 5: a script, its interpreter there */
                "bin/pg_dump",   /* 6: a link to a script that other names share */
                "bin/bb-ls",     /* 7: a link to a binary that other names share */
                "bin/notes",     /* 8: not executable */
                "bin/borgg",     /* 9: does not exist */
                "bin/noint",     /* 10: its interpreter does not exist */
                "bin/envtool",   /* 11: env runs an interpreter that does not exist */
                "bin/dangling",  /* 12: a link to nothing */
                "interp/python3" /* 13: a binary */
        };
        char *dir = tmpdir_new(), *text = NULL;
        _cleanup_free_ char *python = path_join(dir, "interp/python3"), *script = NULL, *noint = NULL;
        FILE *f;
        size_t size;

        free(write_file(dir, "interp/python3",
                        "\x7f"
                        "ELF"));
        free(write_file(dir, "share/busybox",
                        "\x7f"
                        "ELF"));
        ck_assert_int_ge(asprintf(&script, "#!%s\nimport sys\n", python), 0);
        free(write_file(dir, "bin/borg", script));
        free(write_file(dir, "share/pg_wrapper", script));
        ck_assert_int_ge(asprintf(&noint, "#!%s/interp/ruby\n", dir), 0);
        free(write_file(dir, "bin/noint", noint));
        free(write_file(dir, "bin/envtool", "#!/usr/bin/env pagewarden-no-such-interpreter\n"));
        free(write_file(dir, "bin/notes", "#!/bin/sh\n"));
        for (const char *const *n = (const char *const[]){ "interp/python3", "share/busybox", "share/pg_wrapper",
                                                           "bin/borg", "bin/noint", "bin/envtool", NULL };
             *n; n++) {
                _cleanup_free_ char *p = path_join(dir, *n);

                ck_assert_int_eq(chmod(p, 0755), 0);
        }
        for (const char *const *n = (const char *const[]){ "pg_dump", "psql", "pgbench", "bb-ls", "bb-cat", "bb-echo",
                                                           "dangling", NULL };
             *n; n++) {
                _cleanup_free_ char *l = NULL, *target = path_join(dir, (*n)[0] == 'p'   ? "share/pg_wrapper"
                                                                        : (*n)[0] == 'b' ? "share/busybox"
                                                                                         : "share/nothing");

                ck_assert_int_ge(asprintf(&l, "%s/bin/%s", dir, *n), 0);
                ck_assert_int_eq(symlink(target, l), 0);
        }

        f = open_memstream(&text, &size);
        ck_assert_ptr_nonnull(f);
        fputs("jobs:\n  backup:\n    match:\n      exe:\n", f);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                fprintf(f, "        - %s/%s\n", dir, names[i]);
        ck_assert_int_eq(fclose(f), 0);
        *ret_text = text;
        return dir;
}

START_TEST(test_policy_check_programs) {
        _cleanup_free_ char *text = NULL;
        char *dir = tree(&text);
        struct policy_context ctx = test_context();
        struct parse_result res;

        /* Not asked (the daemon's load): nothing looked at, nothing said. */
        parse_policy_ctx(&ctx, text, &res);
        ck_assert_int_eq(res.r, 0);
        ck_assert_msg(res.diags.n_warnings == 0, "%s", res.errors);
        parse_result_done(&res);

        ctx.check_programs = true;
        parse_policy_ctx(&ctx, text, &res);
        ck_assert_int_eq(res.r, 0); /* valid: a policy may come before its programs */
        ck_assert_uint_eq(res.diags.n_errors, 0);
        ck_assert_msg(res.diags.n_warnings == 6, "%s", res.errors);
        ck_assert_msg(has_diag(&res.diags, 7, 11, "which 2 other names in its directory link to as well"), "%s",
                      res.errors);
        ck_assert_msg(has_diag(&res.diags, 8, 11, "is not an executable file"), "%s", res.errors);
        ck_assert_msg(has_diag(&res.diags, 9, 11, "does not exist on this host"), "%s", res.errors);
        ck_assert_msg(has_diag(&res.diags, 10, 11, "/interp/ruby, which is not installed"), "%s", res.errors);
        ck_assert_msg(has_diag(&res.diags, 11, 11, "which is not installed"), "%s", res.errors);
        ck_assert_msg(has_diag(&res.diags, 12, 11, "is a symbolic link to nothing"), "%s", res.errors);
        ck_assert(res.diags.items[0].warning);
        parse_result_done(&res);
        tmpdir_cleanup(dir);
}
END_TEST

struct programs_run {
        const char *text;
        struct fail_alloc_ref ref;
};

static int programs_run(void *data) {
        struct programs_run *run = data;
        struct policy_context ctx = test_context();
        struct source src = { .path = (char *) "rules.yaml", .text = (char *) run->text, .size = strlen(run->text) };
        struct pw_policy p = {};
        struct diag_list d = {};
        int r;

        ctx.check_programs = true;
        r = policy_parse_source(&ctx, &src, &p, &d);
        r = fail_alloc_same(&run->ref, r, digest_diags(digest_policy(DIGEST_INIT, &p), &d));
        policy_done(&p);
        diag_list_done(&d);
        return r;
}

/* Memory running out while looking at the programs: -ENOMEM, not a link taken for a dangling one, an interpreter
 * for a missing one, or a shared program for one of its own. */
START_TEST(test_policy_check_programs_enomem) {
        _cleanup_free_ char *text = NULL;
        char *dir = tree(&text);

        ck_assert_uint_gt(fail_alloc_each(programs_run, &(struct programs_run){ .text = text }, 0), 50);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *policy_programs_suite(void) {
        Suite *s = suite_create("policy-programs");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_policy_check_programs);
        tcase_add_test(tc, test_policy_check_programs_enomem);
        suite_add_tcase(s, tc);
        return s;
}
