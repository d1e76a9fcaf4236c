/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "rules.h"
#include "util.h"

/* Where container managers put their containers: by default not ours to touch. */
static const char *const container_roots[] = {
        "machine.slice",            /* systemd-nspawn, machinectl, libvirt */
        "lxc.payload",              /* LXC */
        "kubepods",                 /* kubelet (cgroupfs driver) */
        "kubepods.slice", "docker", /* docker (cgroupfs driver) */
};
/* Scope names of container runtimes under the systemd driver. */
static const char *const container_scopes[] = { "docker-", "libpod-", "cri-containerd-", "crio-" };

static const struct pw_pattern *find_exact(const struct pw_patterns *p, const char *s) {
        for (size_t i = 0; s && i < p->n; i++)
                if (streq(p->v[i].text, s))
                        return &p->v[i];
        return NULL;
}

static const struct pw_pattern *find_glob(const struct pw_patterns *p, const char *s) {
        for (size_t i = 0; s && i < p->n; i++)
                if (fnmatch(p->v[i].text, s, 0) == 0)
                        return &p->v[i];
        return NULL;
}

/*
 * A unit's own cgroup on the host: a slice's from its name (a-b.slice is
 * a.slice/a-b.slice), any other unit's in system.slice, where systemd puts
 * system units.  Never a user's unit of that name, nor a container's.
 */
static int unit_cgroup(const char *unit, char *buf, size_t len) {
        size_t n = 0;

        buf[0] = '\0';
        if (!endswith(unit, ".slice") || streq(unit, "-.slice"))
                return snprintf(buf, len, "system.slice/%s", unit) < (int) len ? 0 : -ENAMETOOLONG;
        for (const char *d = strchr(unit, '-'); d; d = strchr(d + 1, '-')) {
                int k = snprintf(buf + n, len - n, "%s%.*s.slice", n ? "/" : "", (int) (d - unit), unit);

                if (k < 0 || (size_t) k >= len - n)
                        return -ENAMETOOLONG;
                n += (size_t) k;
        }
        return snprintf(buf + n, len - n, "%s%s", n ? "/" : "", unit) < (int) (len - n) ? 0 : -ENAMETOOLONG;
}

static bool under_one(const char *u, const char *cgroup) {
        char path[PATH_MAX];

        if (u[0] == '/')
                return auth_path_under(cgroup, u + 1);
        return unit_cgroup(u, path, sizeof(path)) >= 0 && auth_path_under(cgroup, path);
}

static bool under_matches(const struct pw_patterns *under, const char *cgroup) {
        for (size_t i = 0; i < under->n; i++)
                if (under_one(under->v[i].text, cgroup))
                        return true;
        return false;
}

/* The absolute under: path of c that cgroup is below, or NULL: where root named the source itself. */
static const char *under_absolute(const struct pw_job_class *c, const char *cgroup) {
        for (size_t i = 0; c && i < c->match.under.n; i++)
                if (c->match.under.v[i].text[0] == '/' && under_one(c->match.under.v[i].text, cgroup))
                        return c->match.under.v[i].text + 1;
        return NULL;
}

static bool user_matches(const struct pw_patterns *users, uid_t uid, const char *name) {
        char id[16];

        snprintf(id, sizeof(id), "%u", (unsigned) uid);
        return find_exact(users, id) || (name && find_exact(users, name));
}

static bool class_matches(const struct pw_job_class *c, const struct rules_process *p, struct rules_match *ret) {
        const struct pw_pattern *rule;
        const char *kind = "exe";

        rule = find_exact(&c->match.exe, p->exe);
        if (!rule) {
                rule = find_glob(&c->match.cmdline, p->cmdline);
                kind = "cmdline";
        }
        if (!rule)
                return false;
        if (c->match.user.n && !user_matches(&c->match.user, p->uid, p->user))
                return false;
        if (c->match.under.n && !under_matches(&c->match.under, p->cgroup))
                return false;
        *ret = (struct rules_match){ .class = c, .kind = kind, .rule = rule };
        return true;
}

bool rules_candidate(const struct pw_policy *policy, const char *exe, const char *cmdline) {
        for (size_t i = 0; i < policy->n_classes; i++)
                if (find_exact(&policy->classes[i].match.exe, exe) ||
                    find_glob(&policy->classes[i].match.cmdline, cmdline))
                        return true;
        return false;
}

bool rules_need_exe(const struct pw_policy *policy) {
        for (size_t i = 0; i < policy->n_classes; i++)
                if (policy->classes[i].match.exe.n)
                        return true;
        return false;
}

bool rules_need_cmdline(const struct pw_policy *policy) {
        for (size_t i = 0; i < policy->n_classes; i++)
                if (policy->classes[i].match.cmdline.n)
                        return true;
        return false;
}

bool rules_match_process(const struct pw_policy *policy, const struct rules_process *p, struct rules_match *ret) {
        assert(policy && p && ret);
        for (size_t i = 0; i < policy->n_classes; i++)
                if (class_matches(&policy->classes[i], p, ret))
                        return true;
        return false;
}

bool rules_match_unit(const struct pw_policy *policy, const char *unit, struct rules_match *ret) {
        assert(policy && unit && ret);
        for (size_t i = 0; i < policy->n_classes; i++) {
                const struct pw_pattern *rule = find_glob(&policy->classes[i].match.units, unit);

                if (rule) {
                        *ret = (struct rules_match){ .class = &policy->classes[i], .kind = "units", .rule = rule };
                        return true;
                }
        }
        return false;
}

/* A component of the path is a container runtime's scope ("docker-ID.scope"). */
static bool has_container_scope(const char *path) {
        for (const char *c = path; c && *c; c = strchr(c, '/'), c = c ? c + 1 : NULL) {
                size_t n = strcspn(c, "/");

                for (size_t i = 0; i < ELEMENTSOF(container_scopes); i++)
                        if (startswith(c, container_scopes[i]) && n > 6 && strncmp(c + n - 6, ".scope", 6) == 0)
                                return true;
        }
        return false;
}

static bool in_container(const struct rules_process *p) {
        if (has_container_scope(p->cgroup))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(container_roots); i++)
                if (auth_path_under(p->cgroup, container_roots[i]))
                        return true;
        return false;
}

/* The first n components of path, into buf; false if path has fewer. */
static bool components(const char *path, unsigned n, char *buf, size_t len) {
        const char *c = path;

        for (unsigned i = 0; i < n; i++) {
                if (!*c)
                        return false;
                c += strcspn(c, "/");
                if (i + 1 < n && *c++ != '/')
                        return false;
        }
        return snprintf(buf, len, "%.*s", (int) (c - path), path) < (int) len;
}

int rules_source(const struct rules_process *p, const struct pw_job_class *c, char *buf, size_t len) {
        const char *named = under_absolute(c, p->cgroup);
        char slice[64];
        unsigned uid;
        int n = 0;

        assert(p && p->cgroup && buf && len > 0);
        if (named)
                return snprintf(buf, len, "%s", named) < (int) len ? 0 : -ENAMETOOLONG;
        if (!p->cgroup[0])
                return snprintf(buf, len, "%s", "") < (int) len ? 0 : -ENAMETOOLONG;
        if (startswith(p->cgroup, "system.slice/"))
                return components(p->cgroup, 2, buf, len) ? 0 : -EPERM;
        if (sscanf(p->cgroup, "user.slice/user-%u.slice/%n", &uid, &n) == 1 && n > 0 && p->one_uid &&
            (p->uid == 0 || p->uid == uid)) {
                snprintf(slice, sizeof(slice), "user.slice/user-%u.slice", uid);
                if (auth_path_under(p->cgroup, slice) && components(p->cgroup, 3, buf, len))
                        return 0;
        }
        return -EPERM;
}

/* Whether cgroup belongs to a system unit a units: rule names (a user manager's units are not the system's). */
static bool unit_managed(const struct pw_policy *policy, const char *cgroup) {
        static const char *const types[] = { ".service", ".scope", ".socket", ".mount", ".swap" };
        char unit[256];

        for (const char *c = cgroup; *c;) {
                size_t n = strcspn(c, "/");

                if (n < sizeof(unit)) {
                        struct rules_match m;

                        memcpy(unit, c, n);
                        unit[n] = '\0';
                        if (startswith(unit, "user@"))
                                return false;
                        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                                if (endswith(unit, types[i]) && rules_match_unit(policy, unit, &m))
                                        return true;
                }
                c += n + (c[n] == '/');
        }
        return false;
}

const char *rules_excluded(const struct rules_exclusions *x, const struct rules_process *p,
                           const struct pw_job_class *c) {
        char source[PATH_MAX];

        assert(x && p && p->cgroup);
        if (p->pid == 1 || p->tgid == 1)
                return "it is PID 1";
        if (p->tgid == x->self)
                return "it is pagewardend";
        if (p->kernel_thread)
                return "it is a kernel thread";
        if (x->job_root && auth_path_under(p->cgroup, x->job_root))
                return "it is in a job already";
        if (auth_protected_holds(x->protected, p->cgroup, source, sizeof(source)))
                return "it belongs to a protected application";
        if (x->units && unit_managed(x->units, p->cgroup))
                return "its unit is placed by a units: rule, which has it already";
        if (c && !auth_class_allows(c, p->uid, p->user))
                return "its user is not in the class's users:";
        /* Where root named the place by path, the rule may take it from there whatever confines it. */
        if (under_absolute(c, p->cgroup))
                return NULL;
        if (p->other_cgroup_ns || in_container(p))
                return "it runs in a container";
        if (rules_source(p, c, source, sizeof(source)) < 0)
                return "it runs in a cgroup root made: rules take processes only from the root cgroup, system "
                       "units and their own user slice, or from below an absolute under: path";
        if (p->confined)
                return "something confines it where it runs (a limit or a BPF program), which the move would "
                       "undo: name the place with an absolute under: path to allow it";
        return NULL;
}

void rules_join_cmdline(char *args, size_t size) {
        while (size > 0 && args[size - 1] == '\0')
                size--;
        for (size_t i = 0; i < size; i++)
                if (args[i] == '\0')
                        args[i] = ' ';
        args[size] = '\0';
}

/* The file name of the n bytes at word (a path, or a name); *ret_n its length. */
static const char *file_name(const char *word, size_t n, size_t *ret_n) {
        const char *slash = memrchr(word, '/', n);
        const char *base = slash ? slash + 1 : word;

        *ret_n = n - (size_t) (base - word);
        return base;
}

/* Programs that run a script given by its path as their first argument (the kernel does so for "#!"). */
static bool interpreter(const char *name, size_t n) {
        static const char *const families[] = { "sh",   "bash", "dash", "ksh", "zsh", "python",
                                                "perl", "ruby", "node", "php", "lua", "tclsh" };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                size_t k = strlen(families[i]);

                /* python3, python3.11, perl5.36: a version may follow */
                if (n >= k && strncmp(name, families[i], k) == 0 && strspn(name + k, "0123456789.") >= n - k)
                        return true;
        }
        return false;
}

void rules_job_name(const char *exe, const char *cmdline, char *buf, size_t len) {
        const char *base = NULL;
        size_t n = 0;

        if (exe)
                base = file_name(exe, strlen(exe), &n);
        else if (cmdline) {
                const char *second = cmdline + strcspn(cmdline, " ");

                base = file_name(cmdline, (size_t) (second - cmdline), &n);
                second += strspn(second, " ");
                if (second[0] == '/' && interpreter(base, n))
                        base = file_name(second, strcspn(second, " "), &n);
        }
        snprintf(buf, len, "%.*s", (int) (n < POLICY_NAME_MAX ? n : POLICY_NAME_MAX), base ?: "");
        for (char *c = buf; *c; c++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", *c))
                        *c = '-';
        if (!buf[0] || policy_name_problem(buf) || buf[strspn(buf, "0123456789")] == '\0')
                snprintf(buf, len, "rule");
}

void rules_program_path(const char *exe, const char *cmdline, char *buf, size_t len) {
        const char *second = cmdline ? cmdline + strcspn(cmdline, " ") : NULL;
        size_t n = 0;
        const char *base = exe ? file_name(exe, strlen(exe), &n) : NULL;

        if (base && second && interpreter(base, n)) {
                /* "/usr/bin/python3 /usr/bin/borg create": the script; an option before it ("-u"), none */
                second += strspn(second, " ");
                if (second[0] == '/') {
                        snprintf(buf, len, "%.*s", (int) strcspn(second, " "), second);
                        return;
                }
        }
        snprintf(buf, len, "%s", strempty(exe));
}

int rules_describe(const struct rules_match *m, char *buf, size_t len) {
        int n = snprintf(buf, len, "rule %s %s (%s:%u)", m->kind, m->rule->text, m->rule->source ?: m->class->source,
                         m->rule->line);

        return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}
