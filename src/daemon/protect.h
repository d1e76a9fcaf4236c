/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Protection of applications as the policy asks for it now: fixed sizes,
 * and the "auto" sizes the governor sets while jobs run (0 while none
 * runs).  The requests go to the backend, which applies them through the
 * protection ledger (ledger.h); the outcome of each entry is logged and
 * recorded.  Errors: negative errno.
 */

#include <stdint.h>

#include "actions.h"
#include "backend.h"
#include "policy.h"

struct protect_auto {
        char *name; /* the protect entry */
        uint64_t bytes;
};

struct protect {
        struct backend *backend;
        struct action_log *log;
        struct protect_auto *autos;
        size_t n_autos, allocated_autos;
};

void protect_init(struct protect *p, struct backend *backend, struct action_log *log);
void protect_done(struct protect *p);

/* The size an "auto" entry has now; 0 forgets every auto size. */
int protect_set_auto(struct protect *p, const char *name, uint64_t bytes);
void protect_clear_auto(struct protect *p);

/* Makes the protection in force what policy asks now. */
int protect_apply(struct protect *p, const struct pw_policy *policy);
/* Gives every protected cgroup its original values back (restore_on_stop). */
int protect_withdraw(struct protect *p);
