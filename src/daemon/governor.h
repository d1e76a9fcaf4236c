/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The pressure governor: a pure state machine.  Given what the daemon read
 * (is a protected application under pressure, and why; each class's jobs,
 * usage and limits) it returns actions: lower a class's memory.high or
 * io.max, freeze or thaw it, or give it its room back.  It does no I/O, so
 * it is tested with synthetic and recorded traces.
 *
 * The ladder:
 *   1. Pressure while jobs run: each running class's memory.high drops to
 *      half of min(its current limit, its usage), never below its floor;
 *      its io limits halve, never below io_floor.
 *   2. Pressure that persists with every running class at its floors:
 *      classes that allow it are frozen, for at most freeze_max, then
 *      thawed (and not frozen again for as long).
 *   3. Calm (no signal, PSI avg10 below the release level) for the
 *      cooldown: thaw, then raise the limits step by step (a quarter of
 *      the way from floor to configured value each step) until they are
 *      back where the policy has them.
 * After each action the governor waits at least the PSI window before it
 * acts again, so it never oscillates faster than the kernel measures.
 *
 * What counts as pressure is decided here too: a PSI trigger, or an early
 * signal in two samples of a protected application's memory counters
 * (governor_early_signal); and how large an "auto" protection is
 * (governor_auto_estimate, governor_auto_share).  The daemon only reads the counters and applies
 * the actions (governor-run.c).
 *
 * Errors: none: pure functions of their arguments.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "settings.h"

/* What the protected applications suffered, summed up to a time. */
struct governor_harm {
        uint64_t usec, stall_usec, pages;
};

/* The protected applications' harm per second over some time: what an action must lower. */
struct governor_rates {
        uint64_t stall_usec; /* microseconds stalled per second, summed over the applications */
        uint64_t pages;      /* pages reclaimed from them per second */
};

struct governor_class {
        /* Set by the caller from the policy (or left from before for a class
         * that left the policy). */
        char name[POLICY_NAME_MAX + 1];
        uint64_t configured_high, floor_high; /* UNITS_MAX: max */
        size_t n_io;                          /* as many as the policy names */
        struct governor_io {
                unsigned major, minor;
                uint64_t configured_rbps, configured_wbps; /* UNITS_MAX: no limit */
                uint64_t rbps, wbps;                       /* in force */
                uint64_t rbps_before, wbps_before;         /* before the tightening being checked */
        } * io;
        uint64_t io_floor;
        bool freeze_allowed;
        uint64_t freeze_max_usec;

        /* Readings, set by the caller before each step. */
        unsigned jobs;
        uint64_t memory_current;

        /* The governor's state. */
        uint64_t high; /* memory.high in force */
        bool frozen;
        uint64_t frozen_since, thawed_at;
        uint64_t last_action_usec;
        char last_action[192];
        unsigned n_tightened, n_relaxed, n_frozen;
        unsigned n_unhelpful; /* actions undone because they did not help */

        /* The check of its last tightening (governor_step): did the protected applications' stall and
         * refaults fall? */
        uint64_t check_since;            /* 0: nothing to check; else when the first action of the sequence was taken */
        struct governor_harm check_from; /* the harm then */
        struct governor_rates before_rates; /* and its rate in the window before */
        uint64_t before_high;               /* its limits before that first action (it was thawed: a frozen class is not
                                             * tightened) */
        uint64_t hold_until;                /* an action that did not help: not tightened again before this */
};

struct governor {
        uint64_t window_usec, cooldown_usec;
        /* The protected applications' harm, summed since the governor started (governor_reading's stall_usec
         * and pages added up), and where it stood at two recent steps (for the rate before an action). */
        struct governor_harm harm, mark[2];
        uint32_t release; /* hundredths of a percent */
        uint64_t ram_bytes;
        bool under_pressure;
        uint64_t calm_since; /* 0: not calm */
        uint64_t pressure_since;
        struct governor_class *classes;
        size_t n_classes;
};

struct governor_reading {
        uint64_t now_usec;
        bool pressure;    /* a trigger fired or an early signal was seen, and the jobs can be its cause */
        const char *why;  /* which group and reading, for the log */
        double psi_avg10; /* the highest some avg10 of the protected groups, in % */
        /* What the protected applications suffered since the last step, summed: microseconds their tasks
         * stalled on memory (memory.pressure some total) and pages reclaimed from them (pgsteal: what they
         * lose, where refaults and major faults also count their recovery once relieved). */
        uint64_t stall_usec, pages;
};

enum governor_action_type {
        GOV_SET_MEMORY_HIGH,
        GOV_SET_IO,
        GOV_FREEZE,
        GOV_THAW,
};

struct governor_action {
        enum governor_action_type type;
        struct governor_class *class;
        uint64_t value; /* SET_MEMORY_HIGH */
        bool relaxes;   /* SET_*: gives back toward the configured limit (else tightens) */
        char reason[160];
};

#define GOVERNOR_MAX_ACTIONS 64
/* How long after its first tightening the governor checks that it helped (windows): the protected applications'
 * stall or the rate at which they lose pages must have fallen by a quarter from the window before, or the class gets
 * its limits back at once and is not tightened again for the cooldown. */
#define GOVERNOR_CHECK_WINDOWS 4

/* ---- what counts as pressure, and what "auto" protects ---- */

/*
 * Early signals, per sampling window (the PSI window, 500 ms by default).
 * 256 pages are 1 MiB of 4 KiB pages: an application at rest reclaims,
 * refaults and faults in far less than that in half a second, while one
 * whose pages are being pushed out does far more; a PSI trigger fires only
 * once its tasks already stall.
 */
#define GOVERNOR_SIGNAL_PAGES 256
/* Swap growing by 1 MiB in a window: its anonymous memory is being swapped
 * out (smaller changes are swap slots freed and reused). */
#define GOVERNOR_SIGNAL_SWAP_BYTES (UINT64_C(1) << 20)
/* "auto" follows the application's growth in 4 MiB steps: each change
 * rewrites memory.min on it and every ancestor (a bus call per unit on a
 * systemd host), so it does not chase every page. */
#define GOVERNOR_AUTO_STEP (UINT64_C(4) << 20)
/* The reserve's default: a tenth of RAM, and at least this. */
#define GOVERNOR_RESERVE_MIN (UINT64_C(64) << 20)

/* A cgroup's I/O by device (io.stat rbytes + wbytes, cumulative), for the first GOVERNOR_IO_DEVICES devices
 * io.stat lists. */
#define GOVERNOR_IO_DEVICES 16
struct governor_io_use {
        size_t n;
        struct governor_io_dev {
                unsigned major, minor;
                uint64_t bytes;
        } dev[GOVERNOR_IO_DEVICES];
};

/* A protected application's counters, as the kernel has them (cumulative). */
struct governor_sample {
        uint64_t pgsteal;                 /* memory.stat pgsteal: its pages reclaimed */
        uint64_t refaults;                /* workingset_refault_anon + _file: evicted pages needed again */
        uint64_t majfaults;               /* memory.stat pgmajfault */
        uint64_t swap;                    /* memory.swap.current */
        uint64_t low_events;              /* memory.events low: reclaimed although below memory.low */
        uint64_t high_events, max_events; /* memory.events high, max: held at its own memory.high, memory.max */
        uint64_t current;                 /* memory.current */
        double some_avg10;                /* memory.pressure some avg10, in % */
        uint64_t some_total;              /* memory.pressure some total: microseconds its tasks stalled */
        /* What it uses (memory.stat, bytes): anonymous and shared memory (active_anon + inactive_anon: the
         * anonymous lists hold shmem too), file pages used more than once (active_file), and mlocked ones. */
        uint64_t anon, active_file, unevictable;
        struct governor_io_use io;
        /* How many governor windows since the previous sample of the same cgroup (0 or 1: one): with many
         * applications each is sampled every few windows, and the signals' thresholds, amounts per window, are
         * that many times larger. */
        unsigned windows;
};

/* What the running jobs did: their cgroups' counters summed (cumulative, but dirty). */
struct governor_jobs_sample {
        uint64_t current; /* memory.current */
        uint64_t pgfault; /* memory.stat pgfault */
        uint64_t dirty;   /* memory.stat file_dirty + file_writeback, bytes */
        struct governor_io_use io;
};

/* Adds x's devices to sum's (a device already there adds its bytes). */
void governor_io_use_add(struct governor_io_use *sum, const struct governor_io_use *x);

/*
 * Act only where acting helps: could the running jobs be the cause of what a protected application shows
 * between two samples (prev, cur: at least a window apart; jprev, jcur the jobs' at the same times)?  io:
 * the stall is on io.pressure (else on memory).  False, why saying what it is instead, when
 *   - the application is held by its own memory.high or memory.max (its memory.events high or max rose):
 *     limiting the jobs gives it nothing;
 *   - the jobs did nothing: no I/O, no page fault, nothing dirty, no memory charged;
 *   - io: the jobs did no I/O on a device the application did I/O on.
 * prev and cur may be NULL (the whole machine's trigger): only the jobs are looked at.
 */
bool governor_jobs_can_cause(const struct governor_sample *prev, const struct governor_sample *cur,
                             const struct governor_jobs_sample *jprev, const struct governor_jobs_sample *jcur, bool io,
                             char *why, size_t len);

/*
 * True when cur, taken cur->windows windows after prev, shows the application
 * losing its memory at least at the per-window rates of the signals; why then
 * says which counter and by how much.  A counter that went down (the cgroup
 * was created again) is no signal.
 */
bool governor_early_signal(const struct governor_sample *prev, const struct governor_sample *cur, char *why,
                           size_t len);

/*
 * "auto": how much an application needs, estimated while jobs run.  Without
 * the multi-generational LRU the kernel's own lists say it: a file page
 * read once (a scan, a report run once, a backup's read) stays on the
 * inactive list, a page used again is moved to the active one; so the
 * estimate is the application's anonymous memory plus its active file
 * pages (its working set), not all that is charged to it (after days of
 * uptime, mostly what it read once).  With MGLRU (lists_age false) a page
 * read with read() stays in its generation however often it is used, and
 * the lists say nothing: the estimate is all it has.  Either way, when it
 * refaults (it needed again pages it had lost: GOVERNOR_SIGNAL_PAGES in a
 * window) the estimate was too small, and becomes all it has.  The
 * estimate grows in GOVERNOR_AUTO_STEP steps and never shrinks while jobs
 * run; it is made anew when the governor starts again.
 */
enum governor_auto_source {
        GOVERNOR_AUTO_NONE,        /* not sampled yet */
        GOVERNOR_AUTO_WORKING_SET, /* anonymous + active file + unevictable */
        GOVERNOR_AUTO_USAGE,       /* memory.current: the LRU lists say nothing (MGLRU) */
        GOVERNOR_AUTO_REFAULTS,    /* memory.current: it refaulted, the working set was too small */
};

struct governor_auto {
        uint64_t want; /* the estimate */
        uint64_t gets; /* what it is given: want, or its share of what the reserve leaves (governor_auto_share) */
        enum governor_auto_source source;
};

/*
 * governor_early_signal for an application "auto" protects (a: its estimate, NULL for a fixed size): while it
 * holds more than auto gives it, the kernel reclaiming the rest (the pages it read once) is what auto chose,
 * not a loss, and its pages being reclaimed is no signal; its refaults, major faults and swap still are.
 */
bool governor_early_signal_auto(const struct governor_sample *prev, const struct governor_sample *cur,
                                const struct governor_auto *a, char *why, size_t len);
/* One window: the estimate from the application's counters now (cur) and one window before (prev, NULL at
 * the first sample).  True when want changed. */
bool governor_auto_estimate(struct governor_auto *a, const struct governor_sample *prev,
                            const struct governor_sample *cur, bool lists_age);
/* What protection may take: RAM less the reserve (for everything unprotected: the kernel, sshd, journald),
 * the floors of the classes that run jobs, and the fixed memory.min of the other entries; 0 if nothing. */
uint64_t governor_auto_available(uint64_t ram_bytes, uint64_t reserve, uint64_t floors, uint64_t fixed);
/* Each entry gets its want; when together they want more than available, each gets a share of available in
 * proportion to its want.  True when any gets changed. */
bool governor_auto_share(struct governor_auto *const *autos, size_t n, uint64_t available);
/* The reserve of a machine with ram_bytes of RAM: configured (not UNITS_MAX), or a tenth of RAM, at least
 * GOVERNOR_RESERVE_MIN. */
uint64_t governor_reserve(uint64_t configured, uint64_t ram_bytes);
const char *governor_auto_source_name(enum governor_auto_source s);

void governor_init(struct governor *g, const struct pw_settings *s, uint64_t ram_bytes);
/* A class at its configured limits (thawed), from the policy: -ENOMEM, or 0. */
int governor_class_init(struct governor_class *c, const struct pw_job_class *pc);
void governor_class_done(struct governor_class *c);

/*
 * One step: returns the number of actions written to actions (at most
 * max).  The class state is updated as if every action succeeded.
 */
size_t governor_step(struct governor *g, const struct governor_reading *r, struct governor_action *actions, size_t max);

/* Every class has its configured limits and is thawed: nothing to undo. */
bool governor_at_rest(const struct governor *g);
bool governor_class_at_rest(const struct governor_class *c);

const char *governor_action_name(enum governor_action_type t);
