/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Finds the cgroup2 hierarchy and checks that it can do pagewarden's work:
 * the memory and io controllers must be available to it.  On a hybrid host
 * (controllers bound to cgroup v1 hierarchies) it says which hierarchy holds
 * them and how to boot instead.  Paths are parameters so that tests can use
 * recorded mountinfo files.
 *
 * Errors: negative errno with a message (see cgroup_discover()).
 */

#include <limits.h>
#include <stdbool.h>

struct cgroup_mount {
        char path[PATH_MAX]; /* where cgroup2 is mounted */
        bool psi;            /* pressure stall information is enabled */
};

/*
 * root: prefix for the files read below the mount ("" on a real host);
 * mountinfo: "/proc/self/mountinfo"; pressure_dir: "/proc/pressure".
 * Returns 0, or a negative errno with *ret_error set to a message that names
 * the cause and the remedy (the caller frees it): -ENOENT when no cgroup2 is
 * mounted, -ENODEV when memory or io is not available to it, -ENOMEM.
 */
int cgroup_discover(const char *root, const char *mountinfo, const char *pressure_dir, struct cgroup_mount *ret,
                    char **ret_error);
