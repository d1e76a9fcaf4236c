/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the systemd backend (backend-systemd*.c): its state and the
 * helpers its files share for talking to systemd over the bus (the bus
 * layer, backend-systemd-bus.c, which the other three use and which uses
 * none of them).  Nothing outside the backend includes this; the rest of
 * the daemon sees backend.h.
 * Errors: negative errno; NoSuchUnit is -ENOENT.
 */

#include <systemd/sd-bus.h>

#include "backend.h"
#include "ledger.h"

#define BUS_TIMEOUT_USEC (UINT64_C(10) * 1000000)
#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

struct unit_limits;

#define SYSD_UNIT_LISTENERS 4

struct systemd_data {
        sd_bus *bus;
        char *prefix;             /* "pagewarden" for ROOT pagewarden.slice */
        struct ledger protection; /* keys: unit names (protect-units.state) */
        /* cgroup: entries inside units' delegated trees, on cgroupfs (protect.state). */
        struct ledger cgroup_protection;
        /* Placement of units by rule (backend-systemd-units.c). */
        char *units_state; /* where the units' own values are kept across restarts */
        struct unit_limits *saved;
        size_t n_saved, allocated_saved;
        sd_bus_slot *unit_new, *job_removed, *unit_changed;
        unsigned long unit_events; /* units' events heard so far */
        /* Who hears of units' events: placement by rule, protection of unit: entries. */
        struct {
                void (*fn)(void *userdata, const char *unit);
                void *userdata;
        } unit_listeners[SYSD_UNIT_LISTENERS];
        /* Jobs whose scope systemd is starting (backend-systemd.c), and the match that hears them end. */
        struct backend_placing *placings;
        sd_bus_slot *placings_match;
        /* Processes moved into jobs' scopes, not answered yet. */
        struct backend_attaching *attachings;
        /* Protected units' own MemoryMin, MemoryLow, MemorySwapMax and cgroup, asked of PID 1 without waiting
         * (backend-systemd-protect.c); how many answers are still to come; the protected units that wait for them. */
        struct sysd_own *owns;
        size_t n_owns, allocated_owns;
        unsigned n_owns_asked;
        char **protect_waiting;
        size_t n_protect_waiting, allocated_protect_waiting;
        /* What PID 1 said of units' cgroups (sysd_unit_cgroup_known). */
        struct sysd_unit_cg {
                char *unit;
                char *path;           /* NULL: it has none (it does not run) */
                unsigned long asking; /* asked without waiting (sysd_unit_cgroup_later), not answered: which ask */
        } * unit_cgs;
        size_t n_unit_cgs, allocated_unit_cgs;
        unsigned long cg_asks; /* asks sent so far (an answer counts only if it is the unit's latest) */
        /* Calls sent without waiting (sysd_call_later) and not answered yet, and who waits for them all. */
        unsigned n_later;
        struct sysd_waiter {
                void (*fn)(void *userdata);
                void *userdata;
        } * waiters;
        size_t n_waiters, allocated_waiters;
};

struct systemd_data *sysd_data(struct backend *b);

/* The D-Bus interface that carries a unit type's cgroup properties, or NULL. */
const char *sysd_unit_interface(const char *unit);
int sysd_bus_errno(const sd_bus_error *e, int r);
/* Whether the cgroup path (relative to the mount) is there now. */
bool sysd_cgroup_there(struct backend *b, const char *path);
/* The unit's cgroup (relative to the mount) from what PID 1 said before only: -ENOENT if it has none (it does not
 * run), -EAGAIN if it would have to be asked, -EINPROGRESS while it is asked (sysd_unit_cgroup_later). */
int sysd_unit_cgroup_known(struct backend *b, const char *unit, char **ret);
/* Keeps what PID 1 answered of a unit's ControlGroup ("" or "/": it has none). */
void sysd_unit_cgroup_keep(struct systemd_data *d, const char *unit, const char *cgroup);
/* The unit is being asked without waiting by ask number ask (0, or -ENOMEM); whether that ask is still its latest
 * (0: any). */
int sysd_unit_cgroup_asking(struct systemd_data *d, const char *unit, unsigned long ask);
bool sysd_unit_cgroup_is_asking(struct systemd_data *d, const char *unit, unsigned long ask);
/* An event of unit came: ask PID 1 again next time.  Whether something was kept of it. */
bool sysd_unit_cgroup_forget(struct systemd_data *d, const char *unit);
/* The unit's cgroup as sysd_unit_cgroup_known() has it; if PID 1 must be asked, asked without waiting (GetUnit, then
 * ControlGroup): -EINPROGRESS, and the units' listeners are told of the unit when its answer comes. */
int sysd_unit_cgroup_later(struct backend *b, const char *unit, char **ret);
/* Tells the listeners of an event of unit that is the backend's own (what it asked of the unit came). */
void sysd_units_tell(struct systemd_data *d, const char *unit);

/* A SetUnitProperties(unit, runtime=true, ...) message, its properties open. */
int sysd_new_set_properties(struct backend *b, const char *unit, sd_bus_message **ret);
int sysd_append_u64(sd_bus_message *m, const char *name, uint64_t v);
/* IOReadBandwidthMax, IOWriteBandwidthMax, IOReadIOPSMax, IOWriteIOPSMax: each reset, then one entry per disk. */
int sysd_append_io_all(sd_bus_message *m, const struct pw_io_limit *io, size_t n);
/* A class's limits as unit properties (MemoryHigh ... IO*Max, with accounting on). */
int sysd_append_class_properties(sd_bus_message *m, const struct pw_job_class *c);
int sysd_call(struct backend *b, sd_bus_message *m, sd_bus_message **ret_reply);
/* Sends m without waiting for PID 1: an error is logged when the answer comes (what names the call, a static
 * string); backend_ops.when_answered waits for every such call. */
int sysd_call_later(struct backend *b, sd_bus_message *m, const char *what);
/* An answer: 0, or PID 1's error as a negative errno (NoSuchUnit: -ENOENT) and its message. */
typedef void (*sysd_answer_fn)(struct backend *b, int r, const char *message, void *userdata);
/* As sysd_call_later, with done(b, r, message, userdata) called with the answer instead of logging an error; userdata
 * (NULL or malloc'ed) is freed with the call, answered or not (the bus closed first), and on an error here. */
int sysd_call_later_then(struct backend *b, sd_bus_message *m, const char *what, sysd_answer_fn done, void *userdata);
/* A reply, an error or not (sd_bus_message_is_method_error), to a call sent with sysd_call_later_reply. */
typedef void (*sysd_reply_fn)(struct backend *b, sd_bus_message *reply, void *userdata);
/* As sysd_call_later_then, for a call whose answer carries values: fn(b, reply, userdata). */
int sysd_call_later_reply(struct backend *b, sd_bus_message *m, const char *what, sysd_reply_fn fn, void *userdata);
/* backend_ops.when_answered: 1, and fn(userdata) once every call sent so far is answered; 0 if none waits. */
int sysd_when_answered(struct backend *b, void (*fn)(void *userdata), void *userdata);
/* The manager's method member(unit, mode), each argument left out when NULL, called later. */
int sysd_method_later(struct backend *b, const char *member, const char *unit, const char *mode);
/* Units matching a pattern (loaded ones): fn(name, description, active state). */
int sysd_list_units(struct backend *b, const char *pattern,
                    int (*fn)(struct backend *b, const char *name, const char *desc, const char *active, void *ud),
                    void *ud);

/* backend-systemd-protect.c: the backend_ops entries for protection, its ledger's key check, and its end. */
int sysd_protect_set(struct backend *b, const struct backend_protect *req, size_t n, struct cgroup_protect_result *res);
int sysd_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path);
bool sysd_protect_valid_key(const char *unit);
void sysd_protect_done(struct systemd_data *d);

/* backend-systemd-units.c: the backend_ops entries for units placed by rule. */
int sysd_units_init(struct backend *b, const char *state_dir);
void sysd_units_done(struct backend *b);
int sysd_units_find(struct backend *b, const char *const *patterns, size_t n,
                    void (*fn)(void *userdata, const char *unit), void *userdata);
int sysd_unit_apply(struct backend *b, const char *unit, const struct pw_job_class *c);
int sysd_unit_restore(struct backend *b, const char *unit);
/* Adds a listener of units' events (UnitNew, JobRemoved, a unit's state changing); -ENOSPC past SYSD_UNIT_LISTENERS. */
int sysd_units_watch(struct backend *b, void (*fn)(void *userdata, const char *unit), void *userdata);

/* backend-systemd-bus.c: one property of a unit, sent without waiting (sysd_call_later). */
int sysd_unit_set_memory_high(struct backend *b, const char *unit, uint64_t bytes);
int sysd_unit_set_io(struct backend *b, const char *unit, const struct pw_io_limit *io, size_t n);
int sysd_unit_freeze(struct backend *b, const char *unit, bool frozen);
