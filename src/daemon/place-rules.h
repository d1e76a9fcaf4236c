/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Placement by rule, the wiring: bulk work the policy's match: rules name
 * is placed by the daemon itself (rules.c decides what matches).  Its
 * functions are autoplace_* (struct place_rules).
 *
 * Processes (both backends): exec events from the proc connector
 * (procevents.c), and one scan of /proc at start, at each reload and after
 * events were lost.  A matching process becomes a new job of its class,
 * together with any child it forked before it was placed; its later
 * children are born in the job.  A process whose parent matches too is
 * left to its parent's job.
 *
 * The proc connector reports an exec after it happened: a program matched
 * by its command line runs a few instructions (microseconds to
 * milliseconds, see make bench) outside its job.  A program an exe: rule
 * names is placed before its first instruction where exec permission
 * events can be used (execperm.c, CAP_SYS_ADMIN), else the same way.
 *
 * Units (systemd backend): every unit whose name a units: rule matches,
 * loaded or only a unit file, is given its class's limits at start and at
 * each reload, and so is a unit loaded later (UnitNew); one that has not
 * started has them from its first instruction.  While it runs it is a job
 * of its class (its cgroup stays systemd's).  A unit whose rule left the
 * policy gets its own values back, and so does every unit at a stop with
 * restore_on_stop.
 *
 * Any local user can make a process match a rule, so what rules do for
 * users other than root is bounded: at most AUTOPLACE_MAX_JOBS_PER_USER
 * jobs of a user at once (those placed over the socket count too), at most
 * AUTOPLACE_MAX_JOBS_PER_CLASS jobs placed by rule in a class, and at most
 * AUTOPLACE_RATE placements a second for all of them together (a burst of
 * AUTOPLACE_BURST); what is over is left where it runs, and said once a
 * minute.  Root's processes are never refused for another's flood.
 *
 * Errors are logged; placement by rule never stops the daemon.
 */

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "auth.h"
#include "backend.h"
#include "classes.h"
#include "execperm.h"
#include "jobs.h"
#include "policy.h"
#include "procevents.h"
#include "program.h"

#define AUTOPLACE_MAX_JOBS_PER_USER 64 /* as PLACE_MAX_JOBS_PER_USER over the socket */
#define AUTOPLACE_MAX_JOBS_PER_CLASS 1024
#define AUTOPLACE_RATE 20 /* placements a second for users other than root */
#define AUTOPLACE_BURST 40
#define AUTOPLACE_RESCAN_USEC (5 * 1000000ULL) /* between two scans of /proc after lost events */

struct place_rules {
        /* What it works with (owned by the manager). */
        sd_event *event;
        const struct pw_policy *policy;
        const struct classes *classes; /* the classes as they are in force: what a unit placed by rule gets */
        struct backend *backend;
        struct jobs *jobs;
        struct action_log *log;
        const char *procdir;

        struct procevents *events; /* while some class has exe: or cmdline: rules */
        struct execperm *perm;     /* while some class has exe: rules, where fanotify may be used */
        bool need_exe, need_cmdline;
        bool scanning;                   /* /proc is being scanned (not an exec event) */
        struct auth_protected protected; /* what rules leave alone, copied at the last update */
        uint64_t cgroup_ns;              /* the daemon's cgroup namespace (inode) */
        sd_event_source *rescan;         /* after lost events */
        DIR *scan_dir;                   /* a scan of /proc under way, a step a turn of the loop */
        bool lost_while_scanning;
        sd_event_source *scan_source;
        uint64_t rescanned_usec; /* when the last one ran (CLOCK_MONOTONIC) */
        uint64_t placed, lost;   /* for status */
        uint64_t refused;        /* over a bound, for status and the log */
        double tokens;           /* the users' rate: placements that may go now */
        uint64_t tokens_usec;    /* when tokens was last filled (CLOCK_MONOTONIC) */
        uint64_t refused_logged_usec;
        struct place_rules_unit { /* units given a class's limits */
                char *unit;
                char *class;
        } * units;
        size_t n_units, allocated_units;
        bool watching_units;
        struct place_rules_placing *placings; /* under way (the backend is making their jobs) */
        /* What each program exe: rules name is on this host (program.h), found at each update. */
        struct place_rules_program {
                char *path;
                struct program_info info;
        } * programs;
        size_t n_programs;
        bool unheld_scripts; /* some are scripts recognized at their interpreter's exec, not held at theirs */
};

void place_rules_init(struct place_rules *a);
/* After start and each reload: follow the policy's rules, and scan /proc once. */
void place_rules_update(struct place_rules *a);
/* The daemon stops: units get their own values back if restore is set. */
void place_rules_stop(struct place_rules *a, bool restore);
void place_rules_done(struct place_rules *a);
