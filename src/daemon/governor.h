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
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "settings.h"

#define GOVERNOR_MAX_IO 16

struct governor_class {
        /* Set by the caller from the policy (or left from before for a class
         * that left the policy). */
        char name[POLICY_NAME_MAX + 1];
        uint64_t configured_high, floor_high; /* UNITS_MAX: max */
        size_t n_io;
        struct {
                unsigned major, minor;
                uint64_t configured_rbps, configured_wbps; /* UNITS_MAX: no limit */
                uint64_t rbps, wbps;                       /* in force */
        } io[GOVERNOR_MAX_IO];
        uint64_t io_floor;
        bool freeze_allowed;
        uint64_t freeze_max_usec;

        /* Readings, set by the caller before each step. */
        unsigned jobs;
        uint64_t memory_current;

        /* The governor's state. */
        uint64_t high;              /* memory.high in force */
        bool frozen;
        uint64_t frozen_since, thawed_at;
        uint64_t last_action_usec;
        char last_action[192];
        unsigned n_tightened, n_relaxed, n_frozen;
};

struct governor {
        uint64_t window_usec, cooldown_usec;
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
        bool pressure;       /* a trigger fired or an early signal was seen */
        const char *why;     /* which group and reading, for the log */
        double psi_avg10;    /* the highest some avg10 of the protected groups, in % */
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
        uint64_t value;   /* SET_MEMORY_HIGH */
        char reason[160];
};

#define GOVERNOR_MAX_ACTIONS 64

void governor_init(struct governor *g, const struct pw_settings *s, uint64_t ram_bytes);
/* Resets a class to its configured limits (thawed) from the policy. */
void governor_class_init(struct governor_class *c, const struct pw_job_class *pc);

/*
 * One step: returns the number of actions written to actions (at most
 * max).  The class state is updated as if every action succeeded.
 */
size_t governor_step(struct governor *g, const struct governor_reading *r, struct governor_action *actions,
                     size_t max);

/* Every class has its configured limits and is thawed: nothing to undo. */
bool governor_at_rest(const struct governor *g);

const char *governor_action_name(enum governor_action_type t);
