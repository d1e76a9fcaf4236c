/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an exe: path is, on a fake tree laid out as Debian 12 has it: a
 * Python script (borg), a Perl wrapper that several names link to
 * (pg_dump, psql -> pg_wrapper), a script run through env, a binary, a
 * directory that is a link to another (/bin -> usr/bin), a missing name.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "program.h"

static char *tree(void) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *bin = NULL, *link = NULL, *python = NULL, *perl = NULL;

        /* The interpreters: python3 is a link to python3.11, as Debian has it. */
        free(write_file(dir, "usr/bin/python3.11",
                        "\x7f"
                        "ELF"));
        free(write_file(dir, "usr/bin/perl",
                        "\x7f"
                        "ELF"));
        ck_assert_int_ge(asprintf(&python, "%s/usr/bin/python3", dir), 0);
        ck_assert_int_eq(symlink("python3.11", python), 0);
        ck_assert_int_ge(asprintf(&perl, "%s/usr/bin/perl", dir), 0);
        ck_assert_int_ge(asprintf(&bin, "%s/usr/bin", dir), 0);

        {
                _cleanup_free_ char *text = NULL;

                ck_assert_int_ge(asprintf(&text, "#!%s\nfrom borg.archiver import main\n", python), 0);
                free(write_file(dir, "usr/bin/borg", text));
                text = mfree(text);
                ck_assert_int_ge(asprintf(&text, "#! %s -w  \nuse strict;\n", perl), 0);
                free(write_file(dir, "usr/share/postgresql-common/pg_wrapper", text));
        }
        free(write_file(dir, "usr/bin/envtool", "#!/usr/bin/env sh\necho hi\n"));
        free(write_file(dir, "usr/bin/restic",
                        "\x7f"
                        "ELF binary"));
        free(write_file(dir, "usr/bin/notes.txt", "#!/bin/sh\n"));
        for (const char *const *n = (const char *const[]){ "borg", "envtool", "restic", "python3.11", "perl", NULL };
             *n; n++) {
                _cleanup_free_ char *f = NULL;

                ck_assert_int_ge(asprintf(&f, "%s/%s", bin, *n), 0);
                ck_assert_int_eq(chmod(f, 0755), 0);
        }
        {
                _cleanup_free_ char *w = NULL;

                ck_assert_int_ge(asprintf(&w, "%s/usr/share/postgresql-common/pg_wrapper", dir), 0);
                ck_assert_int_eq(chmod(w, 0755), 0);
                for (const char *const *n = (const char *const[]){ "pg_dump", "psql", "pgbench", "createdb",
                                                                   "pg_basebackup", "clusterdb", NULL };
                     *n; n++) {
                        _cleanup_free_ char *l = NULL;

                        ck_assert_int_ge(asprintf(&l, "%s/%s", bin, *n), 0);
                        ck_assert_int_eq(symlink(w, l), 0);
                }
        }
        ck_assert_int_ge(asprintf(&link, "%s/bin", dir), 0);
        ck_assert_int_eq(symlink("usr/bin", link), 0);
        return dir;
}

static char *at(const char *dir, const char *name) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

START_TEST(test_program_inspect) {
        char *dir = tree();
        struct program_info p;
        _cleanup_free_ char *borg = at(dir, "usr/bin/borg"), *pg_dump = at(dir, "usr/bin/pg_dump"),
                            *restic = at(dir, "usr/bin/restic"), *missing = at(dir, "usr/bin/borgg"),
                            *notes = at(dir, "usr/bin/notes.txt"), *python = at(dir, "usr/bin/python3.11"),
                            *perl = at(dir, "usr/bin/perl"),
                            *wrapper = at(dir, "usr/share/postgresql-common/pg_wrapper");

        ck_assert_int_eq(program_inspect(borg, &p), 0);
        ck_assert_int_eq(p.kind, PROGRAM_SCRIPT);
        ck_assert(!p.link);
        ck_assert_str_eq(p.interpreter_real, python); /* what /proc/PID/exe shows, not python3 */
        ck_assert_str_eq(p.interpreter_arg, "");
        program_info_done(&p);

        ck_assert_int_eq(program_inspect(pg_dump, &p), 0);
        ck_assert_int_eq(p.kind, PROGRAM_SCRIPT);
        ck_assert(p.link);
        ck_assert_str_eq(p.target, wrapper);
        ck_assert_str_eq(p.interpreter_real, perl);
        ck_assert_str_eq(p.interpreter_arg, "-w"); /* "#! perl -w  ": one argument, trimmed */
        ck_assert_uint_eq(p.n_shared, 5);          /* psql, pgbench, createdb, pg_basebackup, clusterdb */
        ck_assert_ptr_nonnull(p.shared[0]);
        ck_assert_ptr_nonnull(p.shared[PROGRAM_SHARED_NAMES - 1]); /* the first few named */
        program_info_done(&p);

        ck_assert_int_eq(program_inspect(restic, &p), 0);
        ck_assert_int_eq(p.kind, PROGRAM_BINARY);
        ck_assert_uint_eq(p.n_shared, 0);
        program_info_done(&p);

        ck_assert_int_eq(program_inspect(missing, &p), 0);
        ck_assert_int_eq(p.kind, PROGRAM_MISSING);
        program_info_done(&p);

        ck_assert_int_eq(program_inspect(notes, &p), 0); /* not executable */
        ck_assert_int_eq(p.kind, PROGRAM_OTHER);
        program_info_done(&p);
        tmpdir_cleanup(dir);
}
END_TEST

/* The kernel's argument vector for a script: INTERPRETER [ARG] NAME-AS-EXECUTED ... */
START_TEST(test_program_runs_script) {
        char *dir = tree();
        struct program_info borg_info, pg_info;
        _cleanup_free_ char *borg = at(dir, "usr/bin/borg"), *borg_bin = at(dir, "bin/borg"),
                            *pg_dump = at(dir, "usr/bin/pg_dump"), *psql = at(dir, "usr/bin/psql"),
                            *python = at(dir, "usr/bin/python3.11"), *perl = at(dir, "usr/bin/perl");

        ck_assert_int_eq(program_inspect(borg, &borg_info), 0);
        ck_assert_int_eq(program_inspect(pg_dump, &pg_info), 0);

        ck_assert(program_runs_script(&borg_info, borg, python, (const char *const[]){ python, borg, "create" }, 3));
        /* Run as /bin/borg on a merged /usr: the same program. */
        ck_assert(program_runs_script(&borg_info, borg, python, (const char *const[]){ python, borg_bin, "list" }, 3));
        /* Another interpreter, or python running something else, or nothing after the interpreter. */
        ck_assert(!program_runs_script(&borg_info, borg, perl, (const char *const[]){ perl, borg }, 2));
        ck_assert(!program_runs_script(&borg_info, borg, python, (const char *const[]){ python, "-c", borg }, 3));
        ck_assert(!program_runs_script(&borg_info, borg, python, (const char *const[]){ python }, 1));
        ck_assert(!program_runs_script(&borg_info, borg, NULL, (const char *const[]){ python, borg }, 2));

        /* pg_dump through pg_wrapper: the link's own name, after the "-w" of its "#!" line. */
        ck_assert(program_runs_script(&pg_info, pg_dump, perl, (const char *const[]){ perl, "-w", pg_dump, "db" }, 4));
        /* psql shares the wrapper: not pg_dump. */
        ck_assert(!program_runs_script(&pg_info, pg_dump, perl, (const char *const[]){ perl, "-w", psql, "db" }, 4));
        ck_assert(!program_runs_script(&pg_info, pg_dump, perl, (const char *const[]){ perl, pg_dump }, 2));

        /* A binary is not run by an interpreter. */
        {
                struct program_info r;
                _cleanup_free_ char *restic = at(dir, "usr/bin/restic");

                ck_assert_int_eq(program_inspect(restic, &r), 0);
                ck_assert(!program_runs_script(&r, restic, restic, (const char *const[]){ restic, restic }, 2));
                program_info_done(&r);
        }
        program_info_done(&borg_info);
        program_info_done(&pg_info);
        tmpdir_cleanup(dir);
}
END_TEST

/* "#!/usr/bin/env sh": env runs sh with the script as its first argument. */
START_TEST(test_program_env) {
        char *dir = tree();
        struct program_info p;
        _cleanup_free_ char *envtool = at(dir, "usr/bin/envtool");
        _cleanup_free_ char *sh = realpath("/bin/sh", NULL);

        ck_assert_int_eq(program_inspect(envtool, &p), 0);
        ck_assert_int_eq(p.kind, PROGRAM_SCRIPT);
        ck_assert_str_eq(p.interpreter, "/usr/bin/env");
        ck_assert_ptr_nonnull(sh);
        ck_assert_str_eq(p.interpreter_real, sh);
        ck_assert_str_eq(p.interpreter_arg, "");
        ck_assert(program_runs_script(&p, envtool, sh, (const char *const[]){ "sh", envtool }, 2));
        program_info_done(&p);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *program_suite(void) {
        Suite *s = suite_create("program");
        TCase *tc = tcase_create("program");

        tcase_add_test(tc, test_program_inspect);
        tcase_add_test(tc, test_program_runs_script);
        tcase_add_test(tc, test_program_env);
        suite_add_tcase(s, tc);
        return s;
}
