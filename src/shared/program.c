/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "program.h"
#include "util.h"

/* Where env(1) finds an interpreter named by "#!/usr/bin/env NAME": the PATH a service gets. */
#define ENV_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void program_info_done(struct program_info *p) {
        free(p->target);
        free(p->interpreter);
        free(p->interpreter_real);
        free(p->interpreter_arg);
        for (size_t i = 0; i < PROGRAM_SHARED_NAMES; i++)
                free(p->shared[i]);
        *p = (struct program_info){};
}

char *program_name_path(const char *path) {
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = NULL, *real = NULL;
        char *ret = NULL;

        if (!slash)
                return NULL;
        dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!dir)
                return NULL;
        real = realpath(dir, NULL);
        if (!real || asprintf(&ret, "%s/%s", streq(real, "/") ? "" : real, slash + 1) < 0)
                return NULL;
        return ret;
}

/* path resolved in *ret, NULL if it cannot be (missing); -ENOMEM, not taken for missing. */
static int resolve(const char *path, char **ret) {
        *ret = realpath(path, NULL);
        return !*ret && errno == ENOMEM ? -ENOMEM : 0;
}

/* NAME as env(1) would find it in ENV_PATH, resolved, in *ret (NULL: not found); -ENOMEM. */
static int env_find(const char *name, char **ret) {
        _cleanup_free_ char *dirs = strdup(ENV_PATH);
        char *save = NULL;

        *ret = NULL;
        if (!dirs)
                return -ENOMEM;
        for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *p = NULL;

                if (asprintf(&p, "%s/%s", d, name) < 0)
                        return -ENOMEM;
                if (access(p, X_OK) == 0)
                        return resolve(p, ret);
        }
        return 0;
}

/* The "#!" line of a script: the interpreter, and the rest of the line (trimmed) as its one argument. */
static int read_shebang(const char *path, struct program_info *p) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        char line[256];
        ssize_t n;
        char *s, *end, *arg;

        if (fd < 0)
                return -errno;
        n = read(fd, line, sizeof(line) - 1);
        if (n < 0)
                return -errno;
        line[n] = '\0';
        if (n < 2 || line[0] != '#' || line[1] != '!')
                return 0; /* not a script */
        line[strcspn(line, "\n")] = '\0';
        s = line + 2 + strspn(line + 2, " \t");
        end = s + strcspn(s, " \t");
        arg = end + strspn(end, " \t");
        *end = '\0';
        for (char *t = arg + strlen(arg); t > arg && (t[-1] == ' ' || t[-1] == '\t'); t--)
                t[-1] = '\0';
        if (!*s)
                return 0;
        p->kind = PROGRAM_SCRIPT;
        p->interpreter = strdup(s);
        if (!p->interpreter)
                return -ENOMEM;
        {
                const char *base = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
                int r;

                if (streq(base, "env") && *arg && *arg != '-' && !strpbrk(arg, " \t")) {
                        /* "#!/usr/bin/env python3": env executes python3 with the script as its first argument. */
                        r = env_find(arg, &p->interpreter_real);
                        p->interpreter_arg = strdup("");
                } else {
                        r = resolve(s, &p->interpreter_real);
                        p->interpreter_arg = strdup(arg);
                }
                if (r < 0)
                        return r;
        }
        return p->interpreter_arg ? 0 : -ENOMEM;
}

/* The other links in path's directory to the same target. */
/* The other links in path's directory to the same file (target, as st): one stat(2) each, so that a policy of
 * many exe: links costs milliseconds, not a realpath() of every link of /usr/bin each. */
static int find_shared(const char *path, const struct stat *target, struct program_info *p) {
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = slash && slash != path ? strndup(path, (size_t) (slash - path)) : strdup("/");
        DIR *d;
        struct dirent *de;
        int dfd, r = 0;

        if (!dir)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return errno == ENOMEM ? -ENOMEM : 0; /* else nothing to say */
        dfd = dirfd(d);
        while ((de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' || streq(de->d_name, slash + 1) ||
                    (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN))
                        continue;
                if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                        continue;
                if (fstatat(dfd, de->d_name, &st, 0) < 0 || st.st_dev != target->st_dev || st.st_ino != target->st_ino)
                        continue;
                if (p->n_shared < PROGRAM_SHARED_NAMES && !(p->shared[p->n_shared] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                p->n_shared++;
        }
        closedir(d);
        return r;
}

int program_inspect(const char *path, struct program_info *ret) {
        struct program_info p = {};
        struct stat st;
        int r = 0;

        if (lstat(path, &st) < 0) {
                *ret = p;
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        }
        p.link = S_ISLNK(st.st_mode);
        p.target = realpath(path, NULL);
        if (!p.target || stat(p.target, &st) < 0) {
                bool link = p.link; /* a dangling link, or a file gone since */

                r = errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
                program_info_done(&p);
                p.link = link;
                *ret = p;
                return r;
        }
        if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                p.kind = PROGRAM_OTHER;
        else {
                p.kind = PROGRAM_BINARY;
                r = read_shebang(p.target, &p);
        }
        if (r >= 0 && p.link)
                r = find_shared(path, &st, &p);
        if (r < 0) {
                program_info_done(&p);
                return r;
        }
        *ret = p;
        return 0;
}

bool program_runs_script(const struct program_info *p, const char *path, const char *exe, const char *const *argv,
                         size_t n) {
        size_t k = 1;
        const char *name, *base;
        _cleanup_free_ char *a = NULL, *b = NULL;

        if (p->kind != PROGRAM_SCRIPT || !p->interpreter_real || !exe || !streq(exe, p->interpreter_real))
                return false;
        if (p->interpreter_arg && p->interpreter_arg[0]) {
                if (n < 2 || !streq(argv[1], p->interpreter_arg))
                        return false;
                k = 2;
        }
        if (n <= k)
                return false;
        name = argv[k];
        if (streq(name, path))
                return true;
        /* The same name in a directory that is the same once resolved (/bin is /usr/bin on a merged /usr). */
        base = strrchr(path, '/');
        if (name[0] != '/' || !base || !endswith(name, base))
                return false;
        a = program_name_path(name);
        b = program_name_path(path);
        return a && b && streq(a, b);
}

/* "psql, pgbench, createdb, ..." */
static void shared_names(const struct program_info *p, char *buf, size_t len) {
        size_t off = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < PROGRAM_SHARED_NAMES && i < p->n_shared && p->shared[i]; i++) {
                int k = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", p->shared[i]);

                if (k < 0 || (size_t) k >= len - off)
                        return;
                off += (size_t) k;
        }
        if (p->n_shared > PROGRAM_SHARED_NAMES)
                snprintf(buf + off, len - off, ", ...");
}

const char *program_problem(const char *path, const struct program_info *p, char *buf, size_t len) {
        char names[256];

        switch (p->kind) {
        case PROGRAM_MISSING:
                snprintf(buf, len, "%s%s: the rule matches nothing until it is installed (a typo?)", path,
                         p->link ? " is a symbolic link to nothing" : " does not exist on this host");
                return buf;
        case PROGRAM_OTHER:
                snprintf(buf, len, "%s is not an executable file: the rule matches nothing", path);
                return buf;
        case PROGRAM_SCRIPT:
                if (!p->interpreter_real) {
                        snprintf(buf, len, "%s is a script for %s, which is not installed: the rule matches nothing",
                                 path, p->interpreter);
                        return buf;
                }
                return NULL;
        case PROGRAM_BINARY:
                if (!p->link || p->n_shared == 0)
                        return NULL;
                shared_names(p, names, sizeof(names));
                snprintf(buf, len,
                         "%s is a symbolic link to %s, which %zu other name%s in its directory link%s to as well (%s): "
                         "a process run by this name cannot be told from theirs, so the rule matches nothing; name "
                         "%s itself if every name is the same program, or use cmdline:",
                         path, p->target, p->n_shared, p->n_shared == 1 ? "" : "s", p->n_shared == 1 ? "s" : "", names,
                         p->target);
                return buf;
        }
        return NULL;
}

const char *program_note(const char *path, const struct program_info *p, char *buf, size_t len) {
        char names[256];

        if (!p->link || program_problem(path, p, buf, len))
                return NULL;
        if (p->n_shared > 0) {
                shared_names(p, names, sizeof(names));
                snprintf(buf, len,
                         "%s is a symbolic link to %s, a script run by %s that %zu other name%s in its directory "
                         "share%s (%s): matched by the name it is run as, just after its exec (not held at it, so "
                         "that theirs are not held either)",
                         path, p->target, p->interpreter_real, p->n_shared, p->n_shared == 1 ? "" : "s",
                         p->n_shared == 1 ? "s" : "", names);
                return buf;
        }
        snprintf(buf, len, "%s is a symbolic link to %s: matched as that %s", path, p->target,
                 p->kind == PROGRAM_SCRIPT ? "script" : "program");
        return buf;
}

bool program_holdable(const struct program_info *p) {
        return (p->kind == PROGRAM_BINARY || p->kind == PROGRAM_SCRIPT) && p->n_shared == 0;
}
