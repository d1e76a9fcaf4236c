/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "fail-alloc.h"
#include "log.h"

START_TEST(test_diag_caret_utf8) {
        struct source src = { .path = (char *) "f.yaml", .text = (char *) "a: 1\nname: \xc3\xa9t\xc3\xa9 x\n" };
        struct diag_list l = {};
        char *s;

        src.size = strlen(src.text);
        /* Column 12 is the character after "été ": one column per character, not per byte. */
        diag_add(&l, &src, 2, 11, "bad %s", "value");
        s = diag_to_string(&l);
        ck_assert_str_eq(s, "f.yaml:2:11: error: bad value\n    name: \xc3\xa9t\xc3\xa9 x\n              ^\n");
        free(s);
        diag_list_done(&l);
}
END_TEST

START_TEST(test_diag_whole_file_and_control) {
        struct source src = { .path = (char *) "g.yaml", .text = (char *) "x: \x1b[31m\n" };
        struct diag_list l = {};
        char *s;

        src.size = strlen(src.text);
        diag_add_path(&l, "/etc/x.yaml", "not a regular file");
        diag_add(&l, &src, 1, 4, "control");
        /* A line past the end of the file prints no source line. */
        diag_add(&l, &src, 9, 1, "late");
        s = diag_to_string(&l);
        /* The escape character is not copied to the terminal. */
        ck_assert_str_eq(s,
                         "/etc/x.yaml: error: not a regular file\n"
                         "g.yaml:1:4: error: control\n    x: ?[31m\n       ^\n"
                         "g.yaml:9:1: error: late\n");
        free(s);
        diag_list_done(&l);
        ck_assert_uint_eq(l.n, 0);
}
END_TEST

/* A file with thousands of errors keeps the first DIAG_MAX_PER_FILE; the others are counted, and said so. */
START_TEST(test_diag_cap_per_file) {
        struct source a = { .path = (char *) "a.yaml", .text = (char *) "x: 1\n", .size = 5 };
        struct source b = { .path = (char *) "b.yaml", .text = (char *) "y: 2\n", .size = 5 };
        struct diag_list l = {};
        char *s;

        ck_assert(diag_would_record(&l, &a));
        for (unsigned i = 0; i < 5000; i++)
                diag_add(&l, &a, 1, 1, "error %u", i);
        ck_assert(!diag_would_record(&l, &a));
        ck_assert(diag_would_record(&l, &b));
        diag_add(&l, &b, 1, 4, "in the next file");
        ck_assert(!l.oom);
        ck_assert_uint_eq(l.n_errors, 5001);
        ck_assert_uint_eq(l.n, DIAG_MAX_PER_FILE + 1);
        ck_assert(has_diag(&l, 1, 4, "in the next file"));
        s = diag_to_string(&l);
        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_nonnull(strstr(s, "a.yaml:1:1: error: error 99\n"));
        ck_assert_ptr_null(strstr(s, "error 100\n"));
        ck_assert_ptr_nonnull(strstr(s,
                                     "a.yaml: ... and 4900 more errors (at most 100 are shown per file)\n"
                                     "b.yaml:1:4: error: in the next file\n"));
        ck_assert_uint_lt(strlen(s), 100 * 100);
        free(s);
        diag_list_done(&l);
}
END_TEST

/* A file with 101 errors says "1 more error". */
START_TEST(test_diag_cap_one_more) {
        struct source a = { .path = (char *) "a.yaml", .text = (char *) "x: 1\n", .size = 5 };
        struct diag_list l = {};
        char *s;

        for (unsigned i = 0; i <= DIAG_MAX_PER_FILE; i++)
                diag_add(&l, &a, 1, 1, "e");
        s = diag_to_string(&l);
        ck_assert(endswith(s, "a.yaml: ... and 1 more error (at most 100 are shown per file)\n"));
        free(s);
        diag_list_done(&l);
}
END_TEST

/* count digits 0123456789... starting with first, in buf. */
static const char *digits(char *buf, unsigned first, size_t count) {
        for (size_t i = 0; i < count; i++)
                buf[i] = (char) ('0' + (first + i) % 10);
        buf[count] = '\0';
        return buf;
}

/* A long line is quoted as DIAG_LINE_WINDOW characters around the caret, "..." where it is cut. */
START_TEST(test_diag_line_window) {
        struct source src = { .path = (char *) "w.yaml" };
        struct diag_list l = {};
        char *s, expect[512], d[100];
        size_t n = 0;

        /* Line 1: "a: " then 0123456789 repeated, 99000 characters in all; line 2 is short. */
        src.text = malloc(100000);
        ck_assert_ptr_nonnull(src.text);
        n += (size_t) sprintf(src.text, "a: ");
        for (; n < 99000; n++)
                src.text[n] = (char) ('0' + (n - 3) % 10);
        n += (size_t) sprintf(src.text + n, "\nb: 2\n");
        src.size = n;

        diag_add(&l, &src, 1, 50004, "middle");
        diag_add(&l, &src, 1, 2, "near the start");
        diag_add(&l, &src, 1, 99000, "at the end");
        diag_add(&l, &src, 2, 4, "short line");
        s = diag_to_string(&l);
        ck_assert_ptr_nonnull(s);
        /* Column 50004 is digit (50003 - 3) % 10 = 0: 40 characters before it, 40 from it. */
        snprintf(expect, sizeof(expect), "w.yaml:1:50004: error: middle\n    ...%s...\n    %*s^\n", digits(d, 0, 80),
                 3 + 40, "");
        ck_assert_msg(strstr(s, expect), "got:\n%s", s);
        /* Near the start: the first 80 characters. */
        snprintf(expect, sizeof(expect), "w.yaml:1:2: error: near the start\n    a: %s...\n     ^\n", digits(d, 0, 77));
        ck_assert_msg(strstr(s, expect), "got:\n%s", s);
        /* At the end of the line: its last 80 characters. */
        snprintf(expect, sizeof(expect), "w.yaml:1:99000: error: at the end\n    ...%s\n    %*s^\n",
                 digits(d, (98920 - 3) % 10, 80), 3 + 79, "");
        ck_assert_msg(strstr(s, expect), "got:\n%s", s);
        ck_assert_ptr_nonnull(strstr(s, "w.yaml:2:4: error: short line\n    b: 2\n       ^\n"));
        ck_assert_uint_lt(strlen(s), 1000);
        free(s);
        free(src.text);
        diag_list_done(&l);
}
END_TEST

/* A long message (it quotes a value from the file) is cut, at a character's start. */
START_TEST(test_diag_long_message) {
        struct source src = { .path = (char *) "m.yaml", .text = (char *) "a: 1\n", .size = 5 };
        struct diag_list l = {};
        char value[20000];

        for (size_t i = 0; i + 2 < sizeof(value); i += 2)
                memcpy(value + i, "\xc3\xa9", 2); /* é */
        value[sizeof(value) - 2] = '\0';
        diag_add(&l, &src, 1, 1, "'%s': bad value", value);
        ck_assert_uint_eq(l.n, 1);
        ck_assert_uint_lt(strlen(l.items[0].message), DIAG_MAX_MESSAGE);
        ck_assert(endswith(l.items[0].message, "\xc3\xa9..."));
        diag_list_done(&l);
}
END_TEST

static ssize_t count_write(void *cookie, const char *buf, size_t size) {
        (*(size_t *) cookie)++;
        return (ssize_t) size;
}

/* stderr is unbuffered: printing must not write one character at a time (5000 errors took 240 s). */
START_TEST(test_diag_print_buffered) {
        struct source src = { .path = (char *) "p.yaml", .text = (char *) "    key: value\n", .size = 15 };
        struct diag_list l = {};
        size_t writes = 0;
        FILE *f = fopencookie(&writes, "w", (cookie_io_functions_t){ .write = count_write });

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(setvbuf(f, NULL, _IONBF, 0), 0);
        for (unsigned i = 0; i < 5000; i++)
                diag_add(&l, &src, 1, 10, "error %u", i);
        diag_print(&l, f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_uint_le(writes, 2);
        diag_list_done(&l);
}
END_TEST

static uint64_t cpu_usec(void) {
        return now_usec(CLOCK_PROCESS_CPUTIME_ID);
}

/* A 99 KB line with 16,000 errors (the reload path once took 3 GB and 22 s for it): bounded time and output. */
START_TEST(test_diag_many_errors_one_line) {
        struct source src = { .path = (char *) "big.yaml" };
        struct diag_list l = {};
        uint64_t t0, t;
        size_t n = 0;
        char *s;

        src.text = malloc(99 * 1024 + 1);
        ck_assert_ptr_nonnull(src.text);
        while (n + 6 < 99 * 1024)
                n += (size_t) sprintf(src.text + n, "a: 1, ");
        src.text[n] = '\0';
        src.size = n;
        t0 = cpu_usec();
        for (unsigned col = 1; col < n; col += 6)
                diag_add(&l, &src, 1, col, "duplicate key 'a' (first given at line 1)");
        s = diag_to_string(&l);
        t = cpu_usec() - t0;
        fprintf(stderr, "diag: %zu errors on a %zu-byte line: %.1f ms of CPU, %zu bytes of output\n", l.n_errors, n,
                (double) t / 1000, strlen(s));
        ck_assert_uint_gt(l.n_errors, 16000);
        ck_assert_uint_lt(strlen(s), 100 * 300);
        ck_assert_uint_lt(t, 2 * 1000000);
        free(s);
        free(src.text);
        diag_list_done(&l);
}
END_TEST

/* Two diagnostics; -EBADMSG if a lost one is not accounted for. */
static int add_diags(void *data) {
        struct source src = { .path = (char *) "f.yaml", .text = (char *) "a: 1\nb: 2\n", .size = 10 };
        struct diag_list l = {};
        bool whole;
        int r;

        /* No ck_assert() here: Check allocates to record a passed assertion. */
        diag_add(&l, &src, 2, 4, "bad %s", "value");
        r = diag_add_path(&l, "/etc/x.yaml", "not a regular file");
        /* A lost diagnostic leaves the other whole, and the list says it is incomplete. */
        whole = l.n == (l.oom ? 1u : 2u) && r == (l.oom ? -ENOMEM : -EINVAL);
        diag_list_done(&l);
        return whole && !l.oom ? r : -EBADMSG;
}

START_TEST(test_diag_enomem) {
        ck_assert_uint_ge(fail_alloc_each(add_diags, NULL, -EINVAL), 3); /* 3 under ASan, whose strdup is its own */
}
END_TEST

/* A command line's newline or escape sequence cannot forge a log line: it is written as \xNN. */
START_TEST(test_log_escape) {
        char plain[] = "Process 42 (rsync --server .) matches";
        char forged[] =
                "backup-agent\n2026-12-03T00:00:00 error: forged\x1b[31m\x7f\xc2\x9b"
                "32m \xc2\xa0"
                "caf\xc3\xa9";
        char *e;

        ck_assert_ptr_null(log_escape(plain));
        e = log_escape(forged);
        ck_assert_ptr_nonnull(e);
        /* a C1 CSI (U+009B) too; a no-break space and an é are text */
        ck_assert_str_eq(e,
                         "backup-agent\\x0a2026-12-03T00:00:00 error: forged\\x1b[31m\\x7f\\xc2\\x9b32m "
                         "\xc2\xa0"
                         "caf\xc3\xa9");
        free(e);
}
END_TEST

static int escape_forged(void *userdata) {
        char forged[] = "a\nb\tc\xc2\x9b";
        char *e = log_escape(forged);

        (void) userdata;
        if (!e) /* no memory: made harmless in place */
                return streq(forged, "a?b?c??") ? -ENOMEM : -EBADMSG;
        free(e);
        return 0;
}

START_TEST(test_log_escape_enomem) {
        ck_assert_uint_ge(fail_alloc_each(escape_forged, NULL, 0), 1);
}
END_TEST

Suite *diag_suite(void) {
        Suite *s = suite_create("diag");
        TCase *tc = tcase_create("format");

        tcase_add_test(tc, test_diag_caret_utf8);
        tcase_add_test(tc, test_diag_whole_file_and_control);
        tcase_add_test(tc, test_diag_cap_per_file);
        tcase_add_test(tc, test_diag_cap_one_more);
        tcase_add_test(tc, test_diag_line_window);
        tcase_add_test(tc, test_diag_long_message);
        tcase_add_test(tc, test_diag_print_buffered);
        tcase_add_test(tc, test_diag_many_errors_one_line);
        tcase_add_test(tc, test_diag_enomem);
        tcase_add_test(tc, test_log_escape);
        tcase_add_test(tc, test_log_escape_enomem);
        suite_add_tcase(s, tc);
        return s;
}
