/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Placement by rule, the decisions: which class's match: rule a process
 * or a unit matches (pagewarden.yaml(5)), and which processes are never
 * touched whatever the rules say.  Pure: the daemon reads the facts from
 * /proc and systemd (place-rules.c) and acts.
 *
 * A process matches a class when its executable is one of the class's
 * exe, or its command line (the arguments joined by single spaces)
 * matches one of its cmdline globs; and, where the class gives them, it
 * runs as one of user (its effective uid, by name or number) and its
 * cgroup is below one of under (a unit's own cgroup, system.slice/NAME, or
 * a cgroup path).  Classes are tried in policy order; the first that
 * matches wins.
 *
 * The daemon moves processes as root, so a rule must not be a way out of
 * what root put a process in (a pids jail, a service's MemoryMax or BPF
 * device and IP filters, a container): rules_excluded() takes a process
 * only from the root cgroup, a system unit (system.slice/NAME) or its own
 * user slice, and only where nothing between it and that unit confines it,
 * unless an absolute under: of the class names where it runs.
 *
 * Errors: none: pure decisions; rules_source() says a refusal with -EPERM
 * (and -ENAMETOOLONG for a path its buffer cannot hold).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy.h"

struct auth_protected; /* auth.h */

/* What is known of a process that executed a program. */
struct rules_process {
        pid_t pid, tgid, ppid;
        uid_t uid;           /* effective */
        const char *user;    /* its name, or NULL */
        const char *exe;     /* the program, as /proc/PID/exe names it (NULL: unknown) */
        const char *cmdline; /* its arguments joined by spaces (NULL: unknown) */
        const char *cgroup;  /* relative to the mount, "" for the root */
        bool kernel_thread;
        bool other_cgroup_ns; /* it lives in another cgroup namespace (a container) */
        bool one_uid;         /* its real, effective, saved and file system uids are all uid */
        /* What confines it between its cgroup and its source (rules_source()), as the daemon read it:
         * "pids.max 8 on /cage"; NULL for nothing. */
        const char *confined;
};

struct rules_match {
        const struct pw_job_class *class;
        const char *kind;              /* "exe", "cmdline" or "units" */
        const struct pw_pattern *rule; /* the entry that matched */
};

/* Whether any class could match a program with this exe or command line (user: and under: aside): the cheap
 * test made first, on what every exec costs to read.  needs_* say what is worth reading at all. */
bool rules_candidate(const struct pw_policy *policy, const char *exe, const char *cmdline);
bool rules_need_exe(const struct pw_policy *policy);
bool rules_need_cmdline(const struct pw_policy *policy);

/* The first class whose rules match p; false if none. */
bool rules_match_process(const struct pw_policy *policy, const struct rules_process *p, struct rules_match *ret);
/* The first class with a units: pattern that matches the unit's name. */
bool rules_match_unit(const struct pw_policy *policy, const char *unit, struct rules_match *ret);

/* What is never touched, and what the daemon knows to decide it. */
struct rules_exclusions {
        pid_t self;
        const char *job_root;                   /* the job tree: processes already in a job */
        const struct auth_protected *protected; /* the protected applications, or NULL */
        /* The policy whose units: rules place system units (NULL where the backend places none): their
         * processes are theirs, not exe: or cmdline: rules'. */
        const struct pw_policy *units;
};

/*
 * Where p may be taken from: the unit-level cgroup it runs in, whose
 * confinement (and that of every cgroup below it on p's path) the daemon
 * reads for rules_process.confined.  "" for the root cgroup (nothing to
 * read), system.slice/NAME for a system unit, user.slice/user-UID.slice/X
 * for a session, the user manager or a unit of UID's slice, when p runs as
 * UID (or as root) with all its uids.  -EPERM if none: a cgroup root made
 * elsewhere.  With an absolute under: of c naming where p runs, that path
 * is the source (root named it).
 */
int rules_source(const struct rules_process *p, const struct pw_job_class *c, char *buf, size_t len);

/*
 * Why p is never placed by a rule of class c, or NULL: pagewarden itself,
 * PID 1, kernel threads, a process already in a job, a protected
 * application's; one whose user c's users: does not list (root aside); one
 * in a container (another cgroup namespace, or below a container manager's
 * cgroups), from a cgroup that is not a source (rules_source()), or that
 * something confines there (p->confined), unless an absolute under: of c
 * names where it runs.
 */
const char *rules_excluded(const struct rules_exclusions *x, const struct rules_process *p,
                           const struct pw_job_class *c);

/* The arguments of /proc/PID/cmdline (NUL-separated, size bytes) joined by spaces, in place (args has room
 * for size + 1 bytes). */
void rules_join_cmdline(char *args, size_t size);
/*
 * The name of a job placed by rule (len: at least POLICY_NAME_MAX + 1), as
 * run's names are made: the program's file name (exe's, or the command
 * line's first word's), or for a script that an interpreter runs by its
 * path ("/usr/bin/python3 /usr/bin/borg create ..."), the script's; other
 * characters than letters, digits, '-' and '_' become '-'.  "rule" when
 * nothing is left, or it would be a number (that reads as a job's id).
 */
void rules_job_name(const char *exe, const char *cmdline, char *buf, size_t len);
/*
 * The path an exe: rule names a process by: its program (exe, from
 * /proc/PID/exe), or for a script that an interpreter runs by its path
 * (cmdline "/usr/bin/python3 /usr/bin/borg create ..."), the script's.
 */
void rules_program_path(const char *exe, const char *cmdline, char *buf, size_t len);
/* "rule exe /usr/bin/borg (backup.yaml:12)": how a job was placed, for status. */
int rules_describe(const struct rules_match *m, char *buf, size_t len);
