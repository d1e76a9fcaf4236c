/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "ctl-json.h"
#include "ctl-suggest.h"
#include "units.h"
#include "util.h"

#define VALUE_MAX 64

static const char *human(json_object *v, char buf[static VALUE_MAX]) {
        uint64_t u;

        if (!uint_value(v, &u))
                return NULL;
        units_format_human(u, buf, VALUE_MAX);
        return buf;
}

static uint64_t uint_or_0(json_object *v) {
        uint64_t u = 0;

        return uint_value(v, &u) ? u : 0;
}

static void when(json_object *v, char buf[static VALUE_MAX]) {
        struct tm tm;
        time_t t = (time_t) uint_or_0(v);

        if (t == 0 || !localtime_r(&t, &tm) || strftime(buf, VALUE_MAX, "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, VALUE_MAX, "-");
}

/* A user's name, or the number (a policy takes either). */
static void user_name(int64_t uid, char *buf, size_t len) {
        if (uid < 0 || uid > UINT32_MAX || !user_name_of((uid_t) uid, buf, len))
                snprintf(buf, len, "%" PRId64, uid);
}

/* The largest program of a suspect that has no unit, or NULL. */
static json_object *first_program(json_object *s) {
        json_object *p = field(s, "programs");

        if (!json_object_is_type(p, json_type_array))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(p); i++)
                if (str_field(json_object_array_get_idx(p, i), "exe"))
                        return json_object_array_get_idx(p, i);
        return NULL;
}

static bool in_session(const char *cgroup) {
        return cgroup && strstr(cgroup, "/user-") && strstr(cgroup, ".slice/");
}

/* A rule can take it from where it runs without an absolute under: path: a system unit, a user's slice. */
static bool plain_source(const char *cgroup) {
        return !cgroup || in_session(cgroup) || startswith(cgroup, "/system.slice/");
}

/* ---- the evidence ---- */

static void print_apps(FILE *f, json_object *apps) {
        const char *sep = "while ";

        if (!json_object_is_type(apps, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(apps); i++) {
                json_object *a = json_object_array_get_idx(apps, i);
                char lost[VALUE_MAX];

                fprintf(f, "%s%s lost %s of memory, refaulted %" PRIu64 " pages and stalled %" PRIu64 " ms", sep,
                        strempty(str_field(a, "name")), human(field(a, "lost_bytes"), lost) ?: "-",
                        uint_or_0(field(a, "refaults")), uint_or_0(field(a, "stall_us")) / 1000);
                sep = "; ";
        }
}

static void print_suspect(FILE *f, json_object *s) {
        char a[VALUE_MAX], b[VALUE_MAX], c[VALUE_MAX], first[VALUE_MAX], last[VALUE_MAX], user[64];
        json_object *prog = first_program(s);
        uint64_t episodes = uint_or_0(field(s, "episodes"));
        const char *cgroup = str_field(s, "cgroup");

        if (str_field(s, "unit"))
                fprintf(f, "%s", str_field(s, "unit"));
        else if (prog) {
                int64_t uid = json_object_get_int64(field(prog, "uid"));

                user_name(uid, user, sizeof(user));
                fprintf(f, "%s%s's %s (%s) in %s", user[strspn(user, "0123456789")] ? "" : "uid ", user,
                        str_field(prog, "exe"), strempty(str_field(prog, "cmdline")), cgroup ?: "-");
        } else
                fprintf(f, "%s (its processes had ended when it was looked at)", cgroup ?: "-");
        fprintf(f, ": charged %s of page cache (refaulted %s)", human(field(s, "charged_bytes"), a) ?: "-",
                human(field(s, "refaulted_bytes"), b) ?: "-");
        if (human(field(s, "read_bytes"), b) && human(field(s, "written_bytes"), c))
                fprintf(f, ", read %s and wrote %s", b, c);
        else if (prog && human(field(prog, "bytes"), c))
                fprintf(f, ", its process read and wrote %s", c);
        when(field(s, "first"), first);
        when(field(s, "last"), last);
        if (streq(first, last))
                fprintf(f, ", in %" PRIu64 " episode at %s,\n  ", episodes, first);
        else
                fprintf(f, ", in %" PRIu64 " episode%s from %s to %s,\n  ", episodes, episodes == 1 ? "" : "s", first,
                        last);
        print_apps(f, field(s, "applications"));
        fprintf(f, "\n");
}

/* ---- the policy ---- */

/* A YAML scalar for a flow sequence: as is when plain, else double-quoted. */
static void scalar(FILE *f, const char *s) {
        if (s[0] && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_", s[0]) &&
            s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._@+-")] == '\0') {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (; *s; s++)
                fprintf(f, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
        fputc('"', f);
}

/* Appends item to list (n entries) unless it is there. */
static void add_unique(const char **list, size_t *n, const char *item) {
        for (size_t i = 0; i < *n; i++)
                if (streq(list[i], item))
                        return;
        list[(*n)++] = item;
}

static void print_list(FILE *f, const char *key, const char **list, size_t n) {
        if (n == 0)
                return;
        fprintf(f, "      %s: [", key);
        for (size_t i = 0; i < n; i++) {
                fputs(i ? ", " : "", f);
                scalar(f, list[i]);
        }
        fputs("]\n", f);
}

static bool class_taken(json_object *classes, const char *name) {
        for (size_t i = 0; json_object_is_type(classes, json_type_array) && i < json_object_array_length(classes); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(classes, i)), name))
                        return true;
        return false;
}

/* A class name no class of the running policy has: unplaced, unplaced-2... */
static void class_name(json_object *classes, unsigned *next, char buf[static VALUE_MAX]) {
        do {
                if ((*next)++ == 0)
                        snprintf(buf, VALUE_MAX, "unplaced");
                else
                        snprintf(buf, VALUE_MAX, "unplaced-%u", *next);
        } while (class_taken(classes, buf));
}

static void print_class(FILE *f, const char *name, const char **units, size_t n_units, const char **exes, size_t n_exes,
                        const char **users, size_t n_users, const char *under) {
        fprintf(f, "  %s:\n    memory:\n      high: 256M          # all its jobs together: size it for the work\n",
                name);
        if (n_users > 0) {
                fprintf(f, "    users: [");
                for (size_t i = 0; i < n_users; i++) {
                        fputs(i ? ", " : "", f);
                        scalar(f, users[i]);
                }
                fprintf(f, "]\n");
        }
        fprintf(f, "    match:\n");
        print_list(f, "units", units, n_units);
        print_list(f, "exe", exes, n_exes);
        if (under)
                print_list(f, "under", &under, 1);
}

/* The policy file that places the suspects: one class for units and for work in system units and users'
 * sessions; one more per plain cgroup (an exe: rule takes from there only with an absolute under: path). */
static int print_policy(FILE *f, json_object *suspects, json_object *classes) {
        size_t n = json_object_array_length(suspects), n_units = 0, n_exes = 0, n_users = 0;
        _cleanup_free_ const char **units = calloc(n + 1, sizeof(char *));
        _cleanup_free_ const char **exes = calloc(n + 1, sizeof(char *));
        _cleanup_free_ char(*users)[64] = calloc(n + 1, sizeof(*users));
        _cleanup_free_ const char **user_list = calloc(n + 1, sizeof(char *));
        char name[VALUE_MAX];
        unsigned next = 0;
        bool any = false;

        if (!units || !exes || !users || !user_list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(suspects, i), *prog = first_program(s);
                int64_t uid;

                if (str_field(s, "unit"))
                        add_unique(units, &n_units, str_field(s, "unit"));
                else if (prog && plain_source(str_field(s, "cgroup"))) {
                        add_unique(exes, &n_exes, str_field(prog, "exe"));
                        uid = json_object_get_int64(field(prog, "uid"));
                        if (uid > 0) {
                                user_name(uid, users[i], sizeof(users[i]));
                                add_unique(user_list, &n_users, users[i]);
                        }
                }
        }
        fprintf(f,
                "# Work that streamed while protected applications lost memory (pagewardenctl suggest):\n"
                "# a job class for it.  Check it (pagewardenctl check FILE), put it in the policy\n"
                "# directory, reload; what it names is placed from its next run.\n"
                "jobs:\n");
        if (n_units + n_exes > 0) {
                class_name(classes, &next, name);
                print_class(f, name, units, n_units, exes, n_exes, user_list, n_users, NULL);
                any = true;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(suspects, i), *prog = first_program(s);
                const char *exe = prog ? str_field(prog, "exe") : NULL;
                int64_t uid = prog ? json_object_get_int64(field(prog, "uid")) : 0;
                const char *one_user;

                if (str_field(s, "unit") || !exe || plain_source(str_field(s, "cgroup")))
                        continue;
                if (uid > 0)
                        user_name(uid, users[i], sizeof(users[i]));
                one_user = users[i];
                class_name(classes, &next, name);
                print_class(f, name, NULL, 0, &exe, 1, &one_user, uid > 0, str_field(s, "cgroup"));
                any = true;
        }
        if (!any)
                fprintf(f, "  {}\n");
        return 0;
}

int ctl_print_suggest(FILE *f, json_object *resp, bool policy_only) {
        json_object *suspects = field(resp, "suspects"), *obs = field(resp, "observation");
        json_object *episodes = field(resp, "episodes");
        size_t n = json_object_is_type(suspects, json_type_array) ? json_object_array_length(suspects) : 0;
        size_t n_episodes = json_object_is_type(episodes, json_type_array) ? json_object_array_length(episodes) : 0;

        if (policy_only)
                return n > 0 ? print_policy(f, suspects, field(resp, "classes")) : 0;
        if (!is_true(field(obs, "on")))
                fprintf(f, "Observation is off: nothing is protected.\n");
        if (n == 0) {
                fprintf(f, "No unplaced work was seen streaming while a protected application lost memory");
                if (n_episodes > 0)
                        fprintf(f,
                                " (in %zu episode%s one did, with nothing else streaming: its own growth, or work "
                                "already in jobs)",
                                n_episodes, n_episodes == 1 ? "" : "s");
                fprintf(f, ".\n");
                return 0;
        }
        fprintf(f, "Unplaced work that streamed while protected applications lost memory (%zu episode%s kept):\n\n",
                n_episodes, n_episodes == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++)
                print_suspect(f, json_object_array_get_idx(suspects, i));
        fprintf(f, "\n");
        return print_policy(f, suspects, field(resp, "classes"));
}
