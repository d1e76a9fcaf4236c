/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "util.h"

bool auth_class_allows(const struct pw_job_class *c, uid_t uid, const char *user_name) {
        char id[16];

        if (uid == 0)
                return true;
        snprintf(id, sizeof(id), "%u", (unsigned) uid);
        for (size_t i = 0; i < c->n_users; i++)
                if (streq(c->users[i], id) || (user_name && streq(c->users[i], user_name)))
                        return true;
        return false;
}

bool auth_owns_process(const struct proc_ids *ids, uid_t uid) {
        if (uid == 0)
                return true;
        for (int i = 0; i < 4; i++)
                if (ids->uid[i] != uid)
                        return false;
        return true;
}

bool auth_path_under(const char *path, const char *top) {
        return !top[0] || path_under(path, top);
}

/* Whether a component of path is unit. */
static bool names_unit(const char *path, const char *unit) {
        size_t n = strlen(unit);

        for (const char *c = path; *c; c += strcspn(c, "/"), c += *c == '/')
                if (strcspn(c, "/") == n && memcmp(c, unit, n) == 0)
                        return true;
        return false;
}

bool auth_protected_holds(const struct auth_protected *x, const char *cgroup, char *name, size_t len) {
        for (size_t i = 0; x && i < x->n_cgroups; i++)
                if (auth_path_under(cgroup, x->cgroups[i])) {
                        snprintf(name, len, "/%s", x->cgroups[i]);
                        return true;
                }
        for (size_t i = 0; x && i < x->n_units; i++)
                if (names_unit(cgroup, x->units[i])) {
                        snprintf(name, len, "%s", x->units[i]);
                        return true;
                }
        return false;
}

void auth_protected_done(struct auth_protected *x) {
        for (size_t i = 0; i < x->n_cgroups; i++)
                free(x->cgroups[i]);
        for (size_t i = 0; i < x->n_units; i++)
                free(x->units[i]);
        free(x->cgroups);
        free(x->units);
        *x = (struct auth_protected){};
}

int auth_protected_copy(const struct pw_policy *p, struct auth_protected *ret) {
        struct auth_protected x = { .cgroups = calloc(p->n_protects + 1, sizeof(char *)),
                                    .units = calloc(p->n_protects + 1, sizeof(char *)) };

        if (!x.cgroups || !x.units)
                goto nomem;
        for (size_t i = 0; i < p->n_protects; i++) {
                const struct pw_protect *pr = &p->protects[i];

                if (pr->unit && !(x.units[x.n_units++] = strdup(pr->unit)))
                        goto nomem;
                if (pr->cgroup && !(x.cgroups[x.n_cgroups++] = strdup(pr->cgroup + 1)))
                        goto nomem;
        }
        *ret = x;
        return 0;
nomem:
        auth_protected_done(&x);
        return -ENOMEM;
}

/* Where a user other than root may take a process from. */
static bool source_allowed(const struct auth_caller *c, const char *cgroup) {
        char slice[64];

        if (!cgroup[0])
                return true; /* the root cgroup: no limit to escape */
        snprintf(slice, sizeof(slice), "user.slice/user-%u.slice", (unsigned) c->uid);
        if (auth_path_under(cgroup, slice))
                return true;
        for (size_t i = 0; i < c->n_own_jobs; i++)
                if (streq(cgroup, c->own_jobs[i]))
                        return true;
        return false;
}

bool auth_may_place(const struct auth_caller *c, pid_t pid, const struct proc_ids *ids, char *why, size_t len) {
        char prot[PATH_MAX];

        assert(c && ids && ids->cgroup && why);
        if (pid == 1)
                snprintf(why, len, "is PID 1");
        else if (pid == c->self || ids->tgid == c->self)
                snprintf(why, len, "is pagewardend itself");
        else if (ids->tgid != pid)
                snprintf(why, len, "is a thread of process %d: name the process", (int) ids->tgid);
        else if (ids->kernel_thread)
                snprintf(why, len, "is a kernel thread");
        else if (auth_protected_holds(c->protected, ids->cgroup, prot, sizeof(prot)))
                snprintf(why, len, "belongs to a protected application (%s)", prot);
        else if (!auth_owns_process(ids, c->uid))
                snprintf(why, len, "does not belong to uid %u", (unsigned) c->uid);
        else if (c->child_only && ids->ppid != c->pid)
                snprintf(why, len, "is not a child of the caller");
        else if (c->uid != 0 && !source_allowed(c, ids->cgroup))
                snprintf(why, len, "is in /%s: uid %u may only place processes from its own user slice or its own jobs",
                         ids->cgroup, (unsigned) c->uid);
        else
                return true;
        return false;
}
