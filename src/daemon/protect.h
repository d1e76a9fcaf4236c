/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Protection of applications as the policy asks for it now: fixed sizes,
 * and the "auto" sizes the governor sets while jobs run (0 while none
 * runs).  The requests go to the backend, which applies them through the
 * protection ledger (ledger.h); the outcome of each entry is logged and
 * recorded.  Errors: negative errno.
 *
 * A cgroup: entry follows its cgroup: the directory it lives in (or, while
 * that is missing too, the nearest one that exists) is watched with
 * inotify, and when the cgroup or one of its missing ancestors is created
 * or removed, protection is applied again at once.  So a cgroup created
 * after the daemon started, or created again when its application
 * restarted, is protected the moment it appears, with no polling.
 */

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "backend.h"
#include "policy.h"

struct protect_auto {
        char *name; /* the protect entry */
        uint64_t bytes;
};

/* What was last logged of an entry's result: a result is logged when it changes, not at every apply. */
struct protect_reported {
        char *name; /* the protect entry */
        int error;  /* 0: in force */
};

struct protect_watch {
        struct protect *p;
        char *dir; /* below the cgroup2 mount, with a leading '/' ("/" the root) */
        ino_t ino; /* the directory watched: one made again at the same path is another */
        sd_event_source *source;
};

struct protect {
        sd_event *event; /* NULL: cgroups are not followed */
        struct backend *backend;
        struct action_log *log;
        struct protect_auto *autos;
        size_t n_autos, allocated_autos;
        const struct pw_policy *policy; /* of the last apply: applied again when a cgroup comes or goes */
        struct protect_watch *watches;
        size_t n_watches, allocated_watches;
        sd_event_source *again; /* the deferred apply */
        bool watches_stale;     /* a watched directory went away */
        bool watch_warned;
        struct protect_reported *reported;
        size_t n_reported, allocated_reported;
        /* Units of entries not in force because the unit does not run (yet): applied again when systemd
         * reports an event of one of them (it was loaded, its start job ended, its state changed). */
        char **waiting_units;
        size_t n_waiting_units, allocated_waiting_units;
        bool watching_units;
        char **fronts; /* protected units that are oneshot fronts (unit-front.h), as PID 1 answered */
        size_t n_fronts;
};

void protect_init(struct protect *p, sd_event *event, struct backend *backend, struct action_log *log);
void protect_done(struct protect *p);

/* The size an "auto" entry has now; 0 forgets every auto size. */
int protect_set_auto(struct protect *p, const char *name, uint64_t bytes);
void protect_clear_auto(struct protect *p);

/* Makes the protection in force what policy asks now, and follows its cgroups (policy must outlive p's use of it). */
int protect_apply(struct protect *p, const struct pw_policy *policy);
/* The memory.min and memory.low that pr should have in force now. */
void protect_wanted(const struct protect *p, const struct pw_protect *pr, uint64_t *ret_min, uint64_t *ret_low);
/*
 * Asks PID 1, without waiting, which units policy protects are oneshot
 * "fronts" with no process of their own (Debian's postgresql.service):
 * each is said once (a warning in the action log) and shown by status while
 * it does not run.  Call it before protect_apply() of the same policy (the
 * answers are matched against the policy applied when they come).
 */
void protect_find_fronts(struct protect *p, const struct pw_policy *policy);
bool protect_unit_is_front(const struct protect *p, const char *unit);

/* Gives every protected cgroup its original values back (restore_on_stop). */
int protect_withdraw(struct protect *p);
