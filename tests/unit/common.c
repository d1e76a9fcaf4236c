/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "proc.h"

struct policy_context test_context(void) {
        return (struct policy_context){
                .ram_bytes = TEST_RAM,
                .sysfs = "/sys",
                .mountinfo = "/proc/self/mountinfo",
                .check_owner = false,
                .resolve_users = true,
        };
}

char *tmpdir_new(void) {
        char *d = strdup("/tmp/pagewarden-test-XXXXXX");

        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(mkdtemp(d));
        return d;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

void tmpdir_cleanup(char *dir) {
        if (!dir)
                return;
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(dir);
}

char *write_file(const char *dir, const char *name, const char *text) {
        char *path = path_join(dir, name);
        FILE *f;

        ck_assert_ptr_nonnull(path);
        for (char *p = path + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fputs(text, f) >= 0, 1);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

void parse_policy_ctx(const struct policy_context *ctx, const char *text, struct parse_result *ret) {
        struct source src = { .path = (char *) "test.yaml", .text = (char *) text, .size = strlen(text) };

        *ret = (struct parse_result){};
        ret->r = policy_parse_source(ctx, &src, &ret->policy, &ret->diags);
        ret->errors = diag_to_string(&ret->diags);
        ck_assert_ptr_nonnull(ret->errors);
}

void parse_policy(const char *text, struct parse_result *ret) {
        struct policy_context ctx = test_context();

        parse_policy_ctx(&ctx, text, ret);
}

void parse_result_done(struct parse_result *res) {
        policy_done(&res->policy);
        diag_list_done(&res->diags);
        free(res->errors);
}

void parse_settings(const char *path, const char *text, struct settings_result *ret) {
        struct policy_context ctx = test_context();
        struct source src = { .path = (char *) path, .text = (char *) text, .size = strlen(text) };

        *ret = (struct settings_result){};
        ck_assert_int_eq(settings_init(&ret->s), 0);
        ret->r = settings_parse_source(&ctx, &src, &ret->s, &ret->diags);
        ret->errors = diag_to_string(&ret->diags);
        ck_assert_ptr_nonnull(ret->errors);
}

void settings_result_done(struct settings_result *res) {
        settings_done(&res->s);
        diag_list_done(&res->diags);
        free(res->errors);
}

bool has_diag(const struct diag_list *l, unsigned line, unsigned column, const char *needle) {
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].line == line && l->items[i].column == column && strstr(l->items[i].message, needle))
                        return true;
        return false;
}

int dead_pidfd(void) {
        pid_t child = fork();
        int fd;

        ck_assert_int_ge(child, 0);
        if (child == 0)
                _exit(0);
        fd = proc_pidfd_open(child);
        ck_assert_int_ge(fd, 0);
        waitpid(child, NULL, 0);
        return fd;
}

json_object *json_as_sent(json_object *o) {
        json_object *copy;

        ck_assert_ptr_nonnull(o);
        copy = json_tokener_parse(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        ck_assert_ptr_nonnull(copy);
        json_object_put(o);
        return copy;
}
