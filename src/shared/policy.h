/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The policy: job classes and protected applications, read from policy
 * files (policies.d/ASTERISK.yaml).  Parsing validates everything and
 * resolves what can be resolved on this machine (percentages of RAM, io
 * devices, user names), so that a loaded policy is complete: every default
 * filled in, every size in bytes.  Also here: the machine context both
 * parsers use, the safe reading of a configuration file, and the name
 * checks of the policy language.  The daemon settings are in settings.h,
 * printing in policy-print.h.
 *
 * Functions return 0 on success, -EINVAL when the input had errors (they
 * are in the diag_list, with file, line and column), or another negative
 * errno for failures that are not the input's fault.  Out of memory is
 * always -ENOMEM, never an abort: then the policy may hold part of what
 * was parsed (free it with policy_done()) and the diagnostics may be
 * incomplete (diags->oom).
 */

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "policy-names.h"
#include "units.h"

/* What the parser needs to know about the machine; tests fake it. */
struct policy_context {
        uint64_t ram_bytes;    /* for percentages */
        const char *sysfs;     /* "/sys" */
        const char *mountinfo; /* "/proc/self/mountinfo" */
        const char *fstab;     /* "/etc/fstab": io devices on file systems it names that are not mounted */
        bool check_owner;      /* refuse files not owned by root or writable by others */
        bool owner_warns;      /* with check_owner: only warn (a file named to be validated, not loaded) */
        bool resolve_users;    /* look user and group names up (NSS) */
        bool check_programs;   /* warn of what cannot work on this host: exe: programs that cannot match
                                * (policy-programs.h), protected units that are oneshot fronts (unit-front.h) */
};

/* Fills ctx for this machine (RAM from sysinfo, real paths, owner check when root). */
int policy_context_default(struct policy_context *ctx);

struct pw_io_limit {
        char *device;                                        /* as written */
        unsigned major, minor;                               /* the whole disk it resolved to at the load */
        char *disk;                                          /* its kernel name */
        uint64_t read_bps, write_bps, read_iops, write_iops; /* UNITS_MAX: no limit */
        /* The device was not there at the load: major, minor and disk are unset, the limit waits for it.  The
         * daemon never changes a loaded policy: where the device is later is the daemon's classes.c's. */
        bool absent;
};

/* One entry of a match: list, with where it was written (for "placed by", and warnings). */
struct pw_pattern {
        char *text;
        unsigned line, column;
        char *source; /* the file that added it with extend:, NULL: the class's own */
};

struct pw_patterns {
        struct pw_pattern *v;
        size_t n, allocated;
};

/*
 * What the daemon places in a class by itself.  A unit whose name matches
 * units carries the class's limits while it runs; a process becomes a job
 * of the class when its executable is one of exe or its command line
 * matches one of cmdline, and, when given, it runs as one of user and
 * below one of under.
 */
struct pw_match {
        struct pw_patterns units;   /* unit name globs (fnmatch) */
        struct pw_patterns exe;     /* absolute paths */
        struct pw_patterns cmdline; /* globs over the arguments joined by spaces */
        struct pw_patterns user;    /* names or numeric ids */
        struct pw_patterns under;   /* unit names, or cgroup paths starting with '/' */
};

/* Limits each job of a class has on its own cgroup (UNITS_MAX: none). */
struct pw_job_limits {
        uint64_t memory_high, memory_max, memory_swap_max;
};

struct pw_job_class {
        char *name;
        char *source; /* file name (basename) and line, for messages */
        unsigned line;
        uint64_t memory_high, memory_max, memory_swap_max; /* the class: all its jobs together */
        struct pw_job_limits per_job;
        uint64_t cpu_weight;
        struct pw_io_limit *io;
        size_t n_io, allocated_io;
        uint64_t memory_high_floor, io_floor;
        bool memory_high_floor_set, io_floor_set; /* given in the policy, not defaults */
        bool freeze;
        uint64_t freeze_max_usec;
        char **users; /* names or numeric ids, as written */
        size_t n_users, allocated_users;
        struct pw_match match;
        char *extended; /* "FILE:LINE" of the last extend: of it, NULL: none */
};

/* The class has a match: section (rules the daemon applies itself). */
bool policy_class_matches(const struct pw_job_class *c);

enum pw_protect_mode {
        PW_PROTECT_UNSET,
        PW_PROTECT_BYTES,
        PW_PROTECT_AUTO,
};

struct pw_protect_size {
        enum pw_protect_mode mode;
        uint64_t bytes;
};

struct pw_protect {
        char *name;
        char *source;
        unsigned line;
        char *unit;   /* exactly one of unit and cgroup */
        char *cgroup; /* relative to the cgroup2 mount, starting with '/' */
        struct pw_protect_size min, low;
        bool swap_deny;
};

struct pw_policy {
        struct pw_job_class *classes;
        size_t n_classes, allocated_classes;
        struct pw_protect *protects;
        size_t n_protects, allocated_protects;
};

/*
 * Bounds on a policy, as documented in pagewarden.yaml(5), LIMITS.  Each is
 * far beyond what one machine needs; together with the bounds on a file
 * (yamltree.h) they keep checking any policy fast (the duplicate checks
 * compare an entry with the others of its kind), and the daemon's work per
 * program started (it looks through every match entry) small.
 */
#define PW_MAX_CLASSES 256      /* job classes in the whole policy (all its files) */
#define PW_MAX_PROTECTS 256     /* protected applications in the whole policy */
#define PW_MAX_IO 16            /* io entries of a job class: one per disk */
#define PW_MAX_USERS 64         /* users of a job class */
#define PW_MAX_MATCH 64         /* entries of each list of a job class's match: */
#define PW_MAX_MATCH_TOTAL 1024 /* match entries of all job classes together */
#define PW_MAX_LOOKUPS 256      /* different user, group and device names looked up per file */

/* Defaults of a job class, as documented in pagewarden.yaml(5). */
#define PW_DEFAULT_CPU_WEIGHT 100
#define PW_DEFAULT_MEMORY_HIGH_FLOOR (UINT64_C(64) << 20)
#define PW_DEFAULT_IO_FLOOR (UINT64_C(8) << 20)
#define PW_DEFAULT_FREEZE_MAX_USEC (UINT64_C(10) * 1000000)
#define PW_MIN_MEMORY_LIMIT (UINT64_C(1) << 20)

/* Parses one policy file's text, adding its entries to p (names must be new to p). */
int policy_parse_source(const struct policy_context *ctx, const struct source *src, struct pw_policy *p,
                        struct diag_list *diags);
/* Loads a policy file, or every *.yaml file of a directory (in name order). */
int policy_load_path(const struct policy_context *ctx, const char *path, struct pw_policy *p, struct diag_list *diags);

/* Reads a configuration file, refusing unsafe ones (see ctx->check_owner). */
int policy_read_source(const struct policy_context *ctx, const char *path, struct source **ret,
                       struct diag_list *diags);

void policy_done(struct pw_policy *p);
const struct pw_job_class *policy_find_class(const struct pw_policy *p, const char *name);
const struct pw_protect *policy_find_protect(const struct pw_policy *p, const char *name);
/* Same values (source positions are not compared). */
bool policy_equal(const struct pw_policy *a, const struct pw_policy *b);
