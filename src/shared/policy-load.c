/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loading policy files and directories safely: a file or a directory the
 * daemon reads must be root's and not writable by others, and so must every
 * directory above it (a sticky one aside); a directory's *.yaml files are
 * read in name order into one policy.  The parsing itself is policy.c's.
 */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "policy.h"
#include "util.h"
#include "yamltree.h"

/* 0, or -EINVAL (or -ENOMEM) when the context checks owners and this file or directory is unsafe. */
static int check_owner(const struct policy_context *ctx, const struct stat *st, const char *path, const char *what,
                       struct diag_list *diags) {
        int (*report)(struct diag_list *, const char *, const char *, ...) =
                ctx->owner_warns ? diag_warn_path : diag_add_path;
        const char *refusing = ctx->owner_warns ? "the daemon would refuse it" : "refusing it";

        if (!ctx->check_owner)
                return 0;
        if (st->st_uid != 0)
                return report(diags, path, "%s is owned by uid %u, not root: %s (chown root)", what,
                              (unsigned) st->st_uid, refusing);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return report(diags, path, "%s is writable by %s (mode %04o): %s (chmod go-w)", what,
                              (st->st_mode & S_IWOTH) ? "others" : "its group", (unsigned) (st->st_mode & 07777),
                              refusing);
        return 0;
}

/*
 * Every directory above path must be as safe as path itself: a policy in a
 * root-owned directory below one that a user may write is that user's (they
 * rename the directory and put their own in its place).  A sticky directory
 * (/tmp) is safe: others cannot rename what is not theirs there.
 */
static int check_ancestors(const struct policy_context *ctx, const char *path, struct diag_list *diags) {
        _cleanup_free_ char *copy = NULL, *dir = NULL;
        char *slash;

        if (!ctx->check_owner)
                return 0;
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        slash = strrchr(copy, '/');
        if (slash)
                *slash = '\0';
        dir = realpath(slash && copy[0] ? copy : slash ? "/" : ".", NULL);
        if (!dir)
                return errno == ENOMEM ? -ENOMEM : 0; /* opening the file reports a missing directory */
        for (;;) {
                struct stat st;

                if (stat(dir, &st) >= 0 &&
                    (st.st_uid != 0 || ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))))
                        return (ctx->owner_warns
                                        ? diag_warn_path
                                        : diag_add_path)(diags, path,
                                                         "directory %s above it is %s (mode %04o, uid %u): %s", dir,
                                                         st.st_uid != 0 ? "not owned by root" : "writable by others",
                                                         (unsigned) (st.st_mode & 07777), (unsigned) st.st_uid,
                                                         ctx->owner_warns ? "the daemon would refuse it"
                                                                          : "refusing it");
                slash = strrchr(dir, '/');
                if (!slash || slash == dir) {
                        if (streq(dir, "/"))
                                return 0;
                        dir[1] = '\0'; /* then "/" itself */
                        continue;
                }
                *slash = '\0';
        }
}

int policy_read_source(const struct policy_context *ctx, const char *path, struct source **ret,
                       struct diag_list *diags) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = NULL;
        struct source *s;
        struct stat st;
        size_t size;
        int r;

        assert(ctx);
        assert(path);
        assert(ret);
        assert(diags);
        *ret = NULL;
        /* O_NONBLOCK: a FIFO in the policy directory must not hang the daemon. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return diag_add_path(diags, path, "cannot open: %s", strerror(errno));
        if (fstat(fd, &st) < 0)
                return diag_add_path(diags, path, "cannot stat: %s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return diag_add_path(diags, path, "not a regular file");
        r = check_owner(ctx, &st, path, "file", diags);
        if (r >= 0)
                r = check_ancestors(ctx, path, diags);
        if (r < 0)
                return r;
        if (st.st_size > YTREE_MAX_FILE_SIZE)
                return diag_add_path(diags, path, "file is larger than 1 MiB (%d bytes)", YTREE_MAX_FILE_SIZE);
        r = read_full_fd(fd, YTREE_MAX_FILE_SIZE, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return diag_add_path(diags, path, "cannot read: %s", r == -EFBIG ? "file is too large" : strerror(-r));
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->path = strdup(path);
        if (!s->path) {
                free(s);
                return -ENOMEM;
        }
        s->text = TAKE_PTR(text);
        s->size = size;
        *ret = s;
        return 0;
}

static int load_file(const struct policy_context *ctx, const char *path, struct pw_policy *p, struct diag_list *diags) {
        struct source *src;
        int r;

        r = policy_read_source(ctx, path, &src, diags);
        if (r < 0)
                return r;
        r = policy_parse_source(ctx, src, p, diags);
        source_free(src);
        return r;
}

static int yaml_filter(const struct dirent *de) {
        return de->d_name[0] != '.' && endswith(de->d_name, ".yaml");
}

/* Every file of list, all of them even after errors (to report theirs too), but not after -ENOMEM. */
static int load_files(const struct policy_context *ctx, const char *dir, struct dirent **list, int n,
                      struct pw_policy *p, struct diag_list *diags) {
        int r = 0;

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = path_join(dir, list[i]->d_name);
                int k;

                if (!file)
                        return -ENOMEM;
                k = load_file(ctx, file, p, diags);
                if (k == -ENOMEM)
                        return k;
                if (k < 0)
                        r = k;
        }
        return r;
}

int policy_load_path(const struct policy_context *ctx, const char *path, struct pw_policy *p, struct diag_list *diags) {
        struct dirent **list = NULL;
        struct stat st;
        int n, r;

        assert(ctx);
        assert(path);
        assert(p);
        assert(diags);
        if (stat(path, &st) < 0)
                return diag_add_path(diags, path, "%s", strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return load_file(ctx, path, p, diags);
        r = check_owner(ctx, &st, path, "directory", diags);
        if (r < 0)
                return r;

        n = scandir(path, &list, yaml_filter, alphasort);
        if (n < 0 && errno == ENOMEM)
                return -ENOMEM;
        if (n < 0)
                return diag_add_path(diags, path, "cannot read directory: %s", strerror(errno));
        r = load_files(ctx, path, list, n, p, diags);
        for (int i = 0; i < n; i++)
                free(list[i]);
        free(list);
        return r;
}
