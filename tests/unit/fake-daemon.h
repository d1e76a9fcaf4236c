/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's modules over a fake cgroup tree in a temporary directory, as
 * the request layer (api.h: requests.c, place-request.c, status.c) sees
 * them: a fake backend (class and protect paths, the job scan of the real
 * engine), the jobs adopted from the tree's labelled slots, the governor,
 * protection, observation, the history and the action log.  For the tests
 * of status.c and requests.c.  Failures are Check assertions.
 */

#include <stdbool.h>

#include "api.h"
#include "common.h"

struct fake_daemon {
        char *dir; /* the cgroup2 "mount" */
        sd_event *event;
        struct backend backend;
        struct pw_policy policy;
        struct classes classes;
        struct jobs jobs;
        struct history history;
        struct govern govern;
        struct protect protect;
        struct observe observe;
        struct action_log log;
        struct loop_stats loop;
        bool stopping;
        struct api api;
};

/* A cgroup's files below dir, "name=value" each (NULL-terminated). */
void fake_cgroup_files(const char *dir, const char *cgroup, const char *const *files);
/* A job's slot: a populated cgroup labelled as the engine labels it (label: its xattr's value). */
void fake_job_slot(const char *dir, const char *slot, const char *label);

/*
 * Starts the modules on the policy text over the tree tree() writes into
 * the new directory (NULL: an empty one); jobs are adopted from it.
 */
void fake_daemon_start(struct fake_daemon *d, const char *policy, void (*tree)(const char *dir));
void fake_daemon_stop(struct fake_daemon *d);
