/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <limits.h>
#include <string.h>

#include "policy-names.h"
#include "util.h"

const char *policy_name_problem(const char *name) {
        size_t len;

        assert(name);
        len = strlen(name);
        if (len == 0)
                return "name is empty";
        if (has_control_char(name))
                return "name contains a control character";
        if (strchr(name, '/'))
                return "name contains '/': names become cgroup directory names";
        if (streq(name, ".") || streq(name, ".."))
                return "'.' and '..' are not names";
        if (len > POLICY_NAME_MAX)
                return "name is longer than 64 characters";
        if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
              (name[0] >= '0' && name[0] <= '9')))
                return "name must start with a letter or a digit";
        if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != len)
                return "name may contain only letters, digits, '-' and '_'";
        return NULL;
}

const char *policy_cgroup_path_problem(const char *path) {
        const char *p = path;

        assert(path);
        if (path[0] != '/')
                return "cgroup path must start with '/' (relative to the cgroup2 mount)";
        if (streq(path, "/"))
                return "the root cgroup cannot be protected or used";
        if (strlen(path) >= PATH_MAX)
                return "cgroup path is too long";
        if (has_control_char(path))
                return "cgroup path contains a control character";
        while (*p == '/') {
                size_t n;

                p++;
                n = strcspn(p, "/");
                if (n == 0)
                        return "cgroup path has an empty component ('//' or a trailing '/')";
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return "cgroup path contains '.' or '..'";
                if (n > 255)
                        return "cgroup path has a component longer than 255 characters";
                p += n;
        }
        return NULL;
}

const char *policy_unit_name_problem(const char *unit) {
        static const char *const suffixes[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };
        size_t len;

        assert(unit);
        len = strlen(unit);
        if (len == 0 || len > 255)
                return "unit name must have 1 to 255 characters";
        if (strspn(unit, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.\\@-") != len)
                return "unit name contains a character systemd does not allow";
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (endswith(unit, suffixes[i]) && len > strlen(suffixes[i]))
                        return NULL;
        return "unit name needs a type suffix such as .service, .scope or .slice";
}

const char *policy_unit_pattern_problem(const char *pattern) {
        _cleanup_free_ char *plain = strdup(pattern);

        if (!plain)
                return "out of memory";
        /* As a unit name, each glob character standing for a letter. */
        for (char *c = plain; *c; c++)
                if (strchr("*?[]", *c))
                        *c = 'x';
        return policy_unit_name_problem(plain);
}

const char *policy_user_name_problem(const char *name) {
        size_t len;

        assert(name);
        len = strlen(name);
        if (len == 0 || len > 32)
                return "user name must have 1 to 32 characters";
        if (strspn(name, "0123456789") == len)
                return NULL; /* a numeric id */
        if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
                return "user name must start with a letter or '_'";
        if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
                return "user name contains a character that is not allowed";
        return NULL;
}
