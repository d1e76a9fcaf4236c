/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common.h"
#include "fail-alloc.h"
#include "yamltree.h"

struct tree_result {
        int r;
        struct ynode *root;
        struct diag_list diags;
};

static void parse_tree(const char *text, size_t size, struct tree_result *ret) {
        struct source src = { .path = (char *) "t.yaml", .text = (char *) text, .size = size };

        *ret = (struct tree_result){};
        ret->r = ytree_parse(&src, &ret->diags, &ret->root);
}

static void tree_result_done(struct tree_result *t) {
        ynode_free(t->root);
        diag_list_done(&t->diags);
}

START_TEST(test_tree_positions) {
        static const char text[] = "jobs:\n  backup:\n    memory: {high: 1G}\n    list: [a, \"b\"]\n";
        struct tree_result t;
        const struct ynode *jobs, *backup, *memory;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, 0);
        ck_assert_uint_eq(t.diags.n, 0);
        ck_assert_int_eq(t.root->type, YNODE_MAP);
        jobs = t.root->children[1];
        ck_assert_int_eq(jobs->type, YNODE_MAP);
        ck_assert_str_eq(jobs->children[0]->value, "backup");
        ck_assert_uint_eq(jobs->children[0]->line, 2);
        ck_assert_uint_eq(jobs->children[0]->column, 3);
        backup = jobs->children[1];
        memory = backup->children[1];
        ck_assert_int_eq(memory->type, YNODE_MAP);
        ck_assert_str_eq(memory->children[1]->value, "1G");
        ck_assert_uint_eq(memory->children[1]->line, 3);
        ck_assert_uint_eq(memory->children[1]->column, 20);
        ck_assert(backup->children[3]->children[0]->plain);
        ck_assert(!backup->children[3]->children[1]->plain);
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_empty) {
        static const char *const texts[] = { "", "# only a comment\n", "\n\n", "---\n" };
        struct tree_result t;

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                parse_tree(texts[i], strlen(texts[i]), &t);
                ck_assert_int_eq(t.r, 0);
                ck_assert_ptr_null(t.root);
                tree_result_done(&t);
        }
}
END_TEST

START_TEST(test_tree_anchor_alias) {
        static const char text[] = "a: &x {b: 1}\nc: *x\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, 4, "anchors ('&x') are not allowed"));
        ck_assert(has_diag(&t.diags, 2, 4, "aliases ('*x') are not allowed"));
        tree_result_done(&t);
}
END_TEST

/* The "billion laughs" document is refused at once, not expanded. */
START_TEST(test_tree_billion_laughs) {
        static const char text[] =
                "a: &a [x, x, x, x, x, x, x, x, x]\n"
                "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(t.diags.n >= 4);
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_two_documents) {
        static const char text[] = "a: 1\n---\nb: 2\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 2, 1, "more than one YAML document"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_tabs_and_bytes) {
        static const char text[] = "a:\n\tb: 1\nc: \"x\xff\"\nd: \"\x01\"\ne: ok\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 2, 1, "tab character"));
        ck_assert(has_diag(&t.diags, 3, 6, "invalid UTF-8"));
        ck_assert(has_diag(&t.diags, 4, 5, "control character"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_nul_and_overlong) {
        static const char text[] = "a: 1\nb: x\0y\nc: \xc0\xaf\n";
        struct tree_result t;

        parse_tree(text, sizeof(text) - 1, &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 2, 5, "NUL byte"));
        ck_assert(has_diag(&t.diags, 3, 4, "invalid UTF-8"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_escaped_nul) {
        static const char text[] = "a: \"x\\0y\"\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, 4, "NUL character"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_utf8_ok) {
        static const char text[] = "\xEF\xBB\xBF# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\na: b\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, 0);
        ck_assert_uint_eq(t.diags.n, 0);
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_duplicate_keys) {
        static const char text[] = "a: 1\nb: 2\na: 3\n";
        struct tree_result t;
        const struct ynode *k, *v;
        unsigned seen = 0;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 3, 1, "duplicate key 'a' (first given at line 1)"));
        YMAP_FOREACH(k, v, t.root, i) {
                seen++;
                if (streq(k->value, "a"))
                        ck_assert_str_eq(v->value, "1");
        }
        ck_assert_uint_eq(seen, 2);
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_complex_key) {
        static const char text[] = "? [a, b]\n: 1\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, 3, "mapping keys must be plain names"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_tags) {
        static const char text[] = "a: !!str 1\nb: !custom {c: 1}\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, 4, "tags ('tag:yaml.org,2002:str') are not allowed"));
        ck_assert(has_diag(&t.diags, 2, 4, "tags ('!custom') are not allowed"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_deep) {
        char text[4096];
        size_t n = 0;
        struct tree_result t;

        for (int i = 0; i < 200; i++)
                text[n++] = '[';
        for (int i = 0; i < 200; i++)
                text[n++] = ']';
        text[n] = '\0';
        parse_tree(text, n, &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, YTREE_MAX_DEPTH + 1, "nesting is too deep"));
        tree_result_done(&t);
}
END_TEST

static uint64_t cpu_usec(void) {
        return now_usec(CLOCK_PROCESS_CPUTIME_ID);
}

/* Any input under the size limit is read in a bounded time; this is the bound the tests assert, generous for a
 * loaded machine and a sanitizer build (the figures printed are a few milliseconds). */
#define TIME_BOUND_USEC (2 * 1000000)

/* Parses text[0..size), asserts that it took less than TIME_BOUND_USEC of CPU, and prints how long it took. */
static void parse_tree_timed(const char *what, const char *text, size_t size, struct tree_result *ret) {
        uint64_t t0 = cpu_usec(), t;

        parse_tree(text, size, ret);
        t = cpu_usec() - t0;
        fprintf(stderr, "yamltree: %s (%zu bytes): %.1f ms of CPU, %zu errors\n", what, size, (double) t / 1000,
                ret->diags.n_errors);
        ck_assert_uint_lt(t, TIME_BOUND_USEC);
}

/* A string of count copies of unit (count * strlen(unit) + 1 bytes, freed by the caller). */
static char *repeat(const char *unit, size_t count) {
        size_t len = strlen(unit);
        char *s = malloc(count * len + 1);

        ck_assert_ptr_nonnull(s);
        for (size_t i = 0; i < count; i++)
                memcpy(s + i * len, unit, len);
        s[count * len] = '\0';
        return s;
}

/*
 * 100,000 nested flow collections took 88 s to refuse (libyaml's cost grows
 * with the square of the depth of flow collections): reading stops at the
 * first level past the limit.  Block nesting too.
 */
START_TEST(test_tree_deep_adversarial) {
        static const struct {
                const char *unit;
                size_t count;
                unsigned column; /* of the first collection too deep */
        } cases[] = {
                { "[", 100000, YTREE_MAX_DEPTH + 1 },
                { "{a: ", 100000, 4 * YTREE_MAX_DEPTH + 1 },
                { "[{a: ", 100000, 5 * (YTREE_MAX_DEPTH / 2) + 1 },
                { "- ", 100000, 2 * YTREE_MAX_DEPTH + 1 },
        };
        struct tree_result t;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *text = repeat(cases[i].unit, cases[i].count), what[64];

                snprintf(what, sizeof(what), "%zu x '%s'", cases[i].count, cases[i].unit);
                parse_tree_timed(what, text, strlen(text), &t);
                ck_assert_int_eq(t.r, -EINVAL);
                ck_assert_msg(has_diag(&t.diags, 1, cases[i].column, "nesting is too deep: at most 32 levels"), "%s",
                              what);
                /* It stops there: nothing else about the rest of the file (the syntax error at its end). */
                ck_assert_uint_eq(t.diags.n_errors, 1);
                tree_result_done(&t);
                free(text);
        }
}
END_TEST

/* 32 levels are read; the 33rd is refused. */
START_TEST(test_tree_depth_limit) {
        char *open = repeat("[", YTREE_MAX_DEPTH + 1), *close = repeat("]", YTREE_MAX_DEPTH + 1), text[128];
        struct tree_result t;
        const struct ynode *n;
        unsigned depth = 0;

        snprintf(text, sizeof(text), "%.*s%.*s", YTREE_MAX_DEPTH, open, YTREE_MAX_DEPTH, close);
        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, 0);
        for (n = t.root; n && n->type == YNODE_SEQ; n = n->n_children ? n->children[0] : NULL)
                depth++;
        ck_assert_uint_eq(depth, YTREE_MAX_DEPTH);
        tree_result_done(&t);

        snprintf(text, sizeof(text), "%s%s", open, close);
        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, YTREE_MAX_DEPTH + 1, "nesting is too deep"));
        tree_result_done(&t);
        free(open);
        free(close);
}
END_TEST

/* At most YTREE_MAX_NODES nodes: a file of a million tiny values stops there, with bounded memory. */
START_TEST(test_tree_node_limit) {
        /* A list and YTREE_MAX_NODES - 1 values: the limit exactly. */
        char *items = repeat("1,", YTREE_MAX_NODES), *text;
        struct tree_result t;

        ck_assert_int_ge(asprintf(&text, "[%.*s]", 2 * (YTREE_MAX_NODES - 1) - 1, items), 0);
        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, 0);
        ck_assert_uint_eq(t.root->n_children, YTREE_MAX_NODES - 1);
        tree_result_done(&t);
        free(text);

        /* One more: refused at the value past the limit. */
        ck_assert_int_ge(asprintf(&text, "[%.*s]", 2 * YTREE_MAX_NODES - 1, items), 0);
        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 1, 2 * YTREE_MAX_NODES, "more than 65536 values, lists and mappings"));
        tree_result_done(&t);
        free(text);
        free(items);

        /* 1 MiB of them. */
        items = repeat("1,", YTREE_MAX_FILE_SIZE / 2 - 1);
        ck_assert_int_ge(asprintf(&text, "[%s", items), 0);
        parse_tree_timed("1 MiB of '1,'", text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert_uint_eq(t.diags.n_errors, 1);
        ck_assert(has_diag(&t.diags, 1, 2 * YTREE_MAX_NODES, "more than 65536"));
        tree_result_done(&t);
        free(text);
        free(items);
}
END_TEST

/* Duplicate keys are found by sorting, not by comparing each key with every other (quadratic: minutes for
 * 100,000 keys); each duplicate still names the first. */
START_TEST(test_tree_duplicate_keys_many) {
        const size_t n = YTREE_MAX_NODES / 2 - 3; /* with the map and two more keys: just under the limit */
        char *text = malloc(n * 32 + 64), *p = text;
        struct tree_result t;

        ck_assert_ptr_nonnull(text);
        /* Long keys that differ only at their end: comparing them is as slow as it can be. */
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "key-common-prefix-%06zu: 1\n", i);
        p += sprintf(p, "key-common-prefix-%06zu: 2\n", (size_t) 7);
        p += sprintf(p, "key-common-prefix-%06zu: 3\n", (size_t) 7);
        parse_tree_timed("32,767 keys", text, (size_t) (p - text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert_uint_eq(t.diags.n_errors, 2);
        ck_assert(has_diag(&t.diags, (unsigned) n + 1, 1,
                           "duplicate key 'key-common-prefix-000007' (first given at line 8)"));
        ck_assert(has_diag(&t.diags, (unsigned) n + 2, 1, "(first given at line 8)"));
        ck_assert_str_eq(t.root->children[2 * 7 + 1]->value, "1");
        ck_assert(t.root->children[2 * n]->duplicate);
        ck_assert(t.root->children[2 * n + 2]->duplicate);
        tree_result_done(&t);

        /* 1 MiB of them (100,000 keys; minutes before): the keys read until the node limit are checked. */
        p = text = realloc(text, YTREE_MAX_FILE_SIZE + 64);
        ck_assert_ptr_nonnull(text);
        p += sprintf(p, "k-7: 1\n");
        for (size_t i = 0; (size_t) (p - text) + 32 < YTREE_MAX_FILE_SIZE; i++)
                p += sprintf(p, "k-%zu: 1\n", i);
        parse_tree_timed("1 MiB of keys", text, (size_t) (p - text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 9, 1, "duplicate key 'k-7' (first given at line 1)"));
        ck_assert(has_diag(&t.diags, YTREE_MAX_NODES / 2, 10, "more than 65536 values")); /* the value of line 32768 */
        ck_assert_uint_eq(t.diags.n_errors, 2);
        tree_result_done(&t);
        free(text);
}
END_TEST

/* Duplicates in a map that parsing did not finish are found too. */
START_TEST(test_tree_duplicate_keys_unfinished) {
        static const char text[] = "a:\n  b: 1\n  b: 2\n  c: [1, 2\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 3, 3, "duplicate key 'b' (first given at line 2)"));
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_syntax_error) {
        static const char text[] = "a: 1\nb: [1, 2\nc: 3\n";
        struct tree_result t;

        parse_tree(text, strlen(text), &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert_uint_eq(t.diags.n, 1);
        ck_assert(strstr(t.diags.items[0].message, "YAML syntax error"));
        ck_assert_uint_eq(t.diags.items[0].line, 3);
        tree_result_done(&t);
}
END_TEST

START_TEST(test_tree_too_large) {
        size_t size = YTREE_MAX_FILE_SIZE + 1;
        char *text = malloc(size + 1);
        struct tree_result t;

        ck_assert_ptr_nonnull(text);
        memset(text, '#', size);
        text[size] = '\0';
        parse_tree(text, size, &t);
        ck_assert_int_eq(t.r, -EINVAL);
        ck_assert(has_diag(&t.diags, 0, 0, "larger than"));
        tree_result_done(&t);
        free(text);
}
END_TEST

static uint64_t digest_tree(uint64_t h, const struct ynode *n) {
        if (!n)
                return digest_u64(h, UINT64_MAX);
        h = digest_u64(digest_u64(digest_u64(h, n->type), n->line), n->column);
        h = digest_u64(digest_u64(digest_str(h, n->value), n->plain), n->duplicate);
        for (size_t i = 0; i < n->n_children; i++)
                h = digest_tree(h, n->children[i]);
        return digest_u64(h, n->n_children);
}

struct tree_run {
        const char *text;
        struct fail_alloc_ref ref;
};

static int tree_run(void *data) {
        struct tree_run *run = data;
        struct source src = { .path = (char *) "t.yaml", .text = (char *) run->text, .size = strlen(run->text) };
        struct diag_list d = {};
        struct ynode *root;
        int r;

        r = ytree_parse(&src, &d, &root);
        r = fail_alloc_same(&run->ref, r, digest_diags(digest_tree(DIGEST_INIT, root), &d));
        ynode_free(root);
        diag_list_done(&d);
        return r;
}

/* Memory running out anywhere gives -ENOMEM and no tree (then root is NULL: nothing leaks). */
START_TEST(test_tree_enomem) {
        static const char good[] = "a: {b: [1, \"2\", {c: d}]}\nlist:\n  - x\n  - y: z\n";
        static const char bad[] = "a: 1\na: 2\nb: &x [1]\nc: *x\nd:\t!!str e\n";

        ck_assert_uint_gt(fail_alloc_each(tree_run, &(struct tree_run){ .text = good }, 0), 10);
        ck_assert_uint_gt(fail_alloc_each(tree_run, &(struct tree_run){ .text = bad }, -EINVAL), 10);
}
END_TEST

Suite *yamltree_suite(void) {
        Suite *s = suite_create("yamltree");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_tree_positions);
        tcase_add_test(tc, test_tree_empty);
        tcase_add_test(tc, test_tree_anchor_alias);
        tcase_add_test(tc, test_tree_billion_laughs);
        tcase_add_test(tc, test_tree_two_documents);
        tcase_add_test(tc, test_tree_tabs_and_bytes);
        tcase_add_test(tc, test_tree_nul_and_overlong);
        tcase_add_test(tc, test_tree_escaped_nul);
        tcase_add_test(tc, test_tree_utf8_ok);
        tcase_add_test(tc, test_tree_duplicate_keys);
        tcase_add_test(tc, test_tree_complex_key);
        tcase_add_test(tc, test_tree_tags);
        tcase_add_test(tc, test_tree_deep);
        tcase_add_test(tc, test_tree_deep_adversarial);
        tcase_add_test(tc, test_tree_depth_limit);
        tcase_add_test(tc, test_tree_node_limit);
        tcase_add_test(tc, test_tree_duplicate_keys_many);
        tcase_add_test(tc, test_tree_duplicate_keys_unfinished);
        tcase_add_test(tc, test_tree_syntax_error);
        tcase_add_test(tc, test_tree_too_large);
        tcase_add_test(tc, test_tree_enomem);
        suite_add_tcase(s, tc);
        return s;
}
