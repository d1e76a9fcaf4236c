/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What a name may be: a job class's or protected application's name (it
 * becomes a cgroup directory name), a cgroup path, a unit name or pattern,
 * a user or group name.  Pure checks, shared by the policy's parsers, the
 * control protocol, the daemon (a cgroup or unit name read from the
 * kernel or from PID 1 is checked as a policy's would be) and ctl.
 *
 * Errors: none; each check returns NULL when the name is valid, else a
 * sentence saying why not (a static string).
 */

#define POLICY_NAME_MAX 64

const char *policy_name_problem(const char *name);
const char *policy_cgroup_path_problem(const char *path);
const char *policy_unit_name_problem(const char *unit);
/* The same for a unit name with glob characters (* ? [ ]). */
const char *policy_unit_pattern_problem(const char *pattern);
const char *policy_user_name_problem(const char *name); /* a user or group name, or a numeric id */
