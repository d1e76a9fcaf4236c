/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The job classes in the kernel: each class of the running policy applied
 * through the backend (at start and at each reload), a class that left the
 * policy removed once it has no job, and the io limits whose device is
 * named by a path following that device: resolved again when the mounts or
 * the block devices change (devwatch.h), applied when it comes, waiting
 * while it is gone, following it to a new number.  Where such an entry's
 * device is now (disk, major, minor, absent) is this module's: the running
 * policy keeps what its load resolved and is never changed, and the rest of
 * the daemon (the governor, status, the backends through classes_apply())
 * takes a class as it is in force from classes_find().
 *
 * Errors: logged and recorded in the action log; a class whose limits
 * cannot be applied keeps what it had.
 */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "action-log.h"
#include "backend.h"
#include "devwatch.h"
#include "jobs.h"
#include "policy.h"

/* A class as it is in force: the policy's, with each io entry where its device is now. */
struct class_live {
        struct pw_job_class c;            /* a copy of the policy's class (its pointers the policy's); c.io is io */
        struct pw_io_limit io[PW_MAX_IO]; /* device and the limits as the policy has them; disk our own */
};

struct classes {
        sd_event *event; /* NULL: devices are not watched */
        struct backend *backend;
        struct pw_policy *policy;         /* the running one: a reload replaces what it holds, not where */
        const struct policy_context *ctx; /* where sysfs, mountinfo and fstab are */
        struct jobs *jobs;
        struct action_log *log;
        const bool *stopping; /* no class is removed while the daemon stops */
        /* Called after io limits followed their devices (the governor's io list follows them too). */
        void (*devices_changed)(void *userdata);
        void *userdata;
        struct devwatch *devwatch; /* while an io entry names its device by a path */
        struct class_live *live;   /* one per class of the policy, made again by classes_apply() */
        size_t n_live;
};

/* Takes the policy's classes as they are now (after a load or a reload: where their io devices are, as the
 * load resolved them), applies each, and watches devices while an io entry names one by a path. */
void classes_apply(struct classes *cl);
/* The class as it is in force now; NULL if the policy has none of that name (or it could not be copied: out of
 * memory at the last classes_apply()).  Valid until the next classes_apply() or classes_done(). */
const struct pw_job_class *classes_find(const struct classes *cl, const char *name);
/* Removes the cgroup of a class that is not in the policy any more and has no job (NULL policy: none is). */
void classes_remove_if_unused(struct classes *cl, const char *class);
/* Resolves each io entry named by a path again and applies what changed (devwatch's callback). */
void classes_devices_changed(struct classes *cl);
void classes_done(struct classes *cl);
