/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What the control socket's requests act on (requests.c dispatches them,
 * place-request.c places processes, status.c says what is): the daemon's modules,
 * each named here by the manager when it wires them (manager.c), and the
 * one thing only the manager can do, a reload.  The request layer reads
 * and calls these modules and nothing above them: it does not know the
 * manager.
 *
 * Errors: none here; see each module.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "backend.h"
#include "classes.h"
#include "control.h"
#include "governor-run.h"
#include "history.h"
#include "jobs.h"
#include "loop.h"
#include "observe.h"
#include "policy.h"
#include "protect.h"

struct move;
struct status_text;

/* A reload is over: 0, in force as far as the backend's writes go; -EINVAL, the new configuration is invalid
 * (errors: its diagnostics as text) and the running one stays; -ESHUTDOWN, the daemon stopped first. */
typedef void (*api_reloaded_fn)(void *userdata, int r, const char *errors);

struct api {
        sd_event *event;
        struct backend *backend;
        const struct pw_policy *policy; /* the running policy: a reload replaces what it holds, not where */
        const struct classes *classes;  /* its classes as they are in force (io entries where their devices are) */
        struct jobs *jobs;
        struct history *history; /* ended jobs */
        struct govern *govern;
        struct protect *protect;
        struct observe *observe;
        struct action_log *log;
        const struct loop_stats *loop;
        uint64_t started_usec; /* the daemon's start, CLOCK_REALTIME */
        const bool *stopping;  /* no new work: the daemon stops */
        /* Loads the configuration again (manager_reload()), its files off the loop: done is called once it is
         * over (perhaps before reload returns 0; never if it returns a negative errno). */
        int (*reload)(void *userdata, api_reloaded_fn done, void *done_userdata);
        void *reload_userdata;
        struct control *control;       /* the socket the answers go to: control_new() sets it */
        struct move *moves;            /* move requests worked on in slices (place-request.c) */
        sd_event_source *figures;      /* the jobs' figures read again in the background (status.c) */
        struct status_text *jobs_text; /* status and list of many jobs, written in slices (status.c) */
        uint64_t status_gens;          /* how many such texts were begun */
};
