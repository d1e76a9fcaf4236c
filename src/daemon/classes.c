/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "classes.h"
#include "device.h"
#include "log.h"

/* ---- the classes in force ---- */

static void live_done(struct classes *cl) {
        for (size_t i = 0; i < cl->n_live; i++)
                for (size_t k = 0; k < cl->live[i].c.n_io; k++)
                        free(cl->live[i].io[k].disk);
        cl->live = mfree(cl->live);
        cl->n_live = 0;
}

/* The policy's classes, their io entries where the load found their devices. */
static int live_make(struct classes *cl) {
        live_done(cl);
        cl->live = calloc(cl->policy->n_classes + 1, sizeof(*cl->live));
        if (!cl->live)
                return -ENOMEM;
        for (size_t i = 0; i < cl->policy->n_classes; i++) {
                const struct pw_job_class *pc = &cl->policy->classes[i];
                struct class_live *l = &cl->live[cl->n_live++];

                l->c = *pc;
                l->c.io = l->io;
                l->c.allocated_io = PW_MAX_IO;
                l->c.n_io = pc->n_io < PW_MAX_IO ? pc->n_io : PW_MAX_IO; /* the parser allows no more */
                for (size_t k = 0; k < l->c.n_io; k++) {
                        l->io[k] = pc->io[k];
                        l->io[k].disk = NULL;
                        if (pc->io[k].disk && !(l->io[k].disk = strdup(pc->io[k].disk)))
                                return -ENOMEM; /* live_done() frees what was copied */
                }
        }
        return 0;
}

const struct pw_job_class *classes_find(const struct classes *cl, const char *name) {
        for (size_t i = 0; i < cl->n_live; i++)
                if (streq(cl->live[i].c.name, name))
                        return &cl->live[i].c;
        return NULL;
}

static void apply_each(struct classes *cl) {
        for (size_t i = 0; i < cl->n_live; i++) {
                const struct pw_job_class *c = &cl->live[i].c;
                _cleanup_free_ char *path = backend_class_path(cl->backend, c->name);
                int r = backend_class_apply(cl->backend, c);

                if (r < 0)
                        action_log_add(cl->log, LOG_LEVEL_ERR, "Class %s: cannot apply its limits to /%s: %s", c->name,
                                       strempty(path), strerror(-r));
                else
                        log_debug("Class %s: limits applied to /%s", c->name, strempty(path));
        }
}

/* ---- io limits whose device comes and goes ---- */

/*
 * Resolves each io entry named by a path again.  One whose device is there
 * now gets its limits written; one whose device went (its fstab file system
 * unmounted, its path gone) waits for it again; one whose path now leads to
 * another disk (a disk plugged in again under a new number) follows it.
 */
void classes_devices_changed(struct classes *cl) {
        bool any = false;

        for (size_t i = 0; i < cl->n_live; i++) {
                struct pw_job_class *c = &cl->live[i].c;
                bool changed = false;

                for (size_t k = 0; k < c->n_io; k++) {
                        struct pw_io_limit *io = &c->io[k];
                        struct device_info di;
                        bool taken = false;
                        char *disk;
                        int r;

                        if (io->device[0] != '/')
                                continue; /* MAJ:MIN: nothing to resolve */
                        r = device_resolve(io->device, cl->ctx->sysfs, cl->ctx->mountinfo, cl->ctx->fstab, &di);
                        if (r < 0) {
                                if (!io->absent && (r == -ENOENT || r == -ENOMEDIUM)) {
                                        io->absent = true;
                                        io->disk = mfree(io->disk);
                                        io->major = io->minor = 0;
                                        changed = true;
                                        action_log_add(cl->log, LOG_LEVEL_WARNING,
                                                       "Class %s: '%s' is gone; its io limits wait for it", c->name,
                                                       io->device);
                                }
                                continue;
                        }
                        if (!io->absent && io->major == di.major && io->minor == di.minor)
                                continue;
                        for (size_t j = 0; j < c->n_io; j++)
                                taken = taken || (j != k && !c->io[j].absent && c->io[j].major == di.major &&
                                                  c->io[j].minor == di.minor);
                        if (taken) {
                                log_warning(
                                        "Class %s: '%s' is on disk %s (%u:%u), which another io entry names: "
                                        "left waiting",
                                        c->name, io->device, di.name, di.major, di.minor);
                                continue;
                        }
                        disk = strdup(di.name);
                        if (!disk)
                                continue; /* out of memory: the next event tries again */
                        free(io->disk);
                        io->disk = disk;
                        io->major = di.major;
                        io->minor = di.minor;
                        io->absent = false;
                        changed = true;
                        action_log_add(cl->log, LOG_LEVEL_INFO,
                                       "Class %s: '%s' is on disk %s (%u:%u): its io limits apply", c->name, io->device,
                                       di.name, di.major, di.minor);
                }
                if (changed) {
                        int r = backend_class_apply(cl->backend, c);

                        if (r < 0)
                                action_log_add(cl->log, LOG_LEVEL_ERR, "Class %s: cannot apply its io limits: %s",
                                               c->name, strerror(-r));
                        any = true;
                }
        }
        if (any && cl->devices_changed)
                cl->devices_changed(cl->userdata);
}

static void on_devices_changed(void *userdata) {
        classes_devices_changed(userdata);
}

/* Devices and mounts are watched while some io entry names its device by a path. */
static void devwatch_update(struct classes *cl) {
        bool need = false;

        for (size_t i = 0; i < cl->policy->n_classes && !need; i++)
                for (size_t k = 0; k < cl->policy->classes[i].n_io && !need; k++)
                        need = cl->policy->classes[i].io[k].device[0] == '/';
        if (!need || !cl->event)
                cl->devwatch = devwatch_free(cl->devwatch);
        else if (!cl->devwatch &&
                 devwatch_new(cl->event, cl->ctx->mountinfo, on_devices_changed, cl, &cl->devwatch) < 0)
                log_warning(
                        "Cannot watch devices and mounts: io limits of a device that appears apply at the next "
                        "reload");
}

/* A class that is not in the policy any more goes once it has no job. */
void classes_remove_if_unused(struct classes *cl, const char *class) {
        _cleanup_free_ char *path = NULL;
        int r;

        if ((cl->stopping && *cl->stopping) || policy_find_class(cl->policy, class) ||
            jobs_in_class(cl->jobs, class) > 0)
                return;
        path = backend_class_path(cl->backend, class);
        r = backend_class_remove(cl->backend, class);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Class %s left the policy; removing /%s failed: %m", class, strempty(path));
        else
                action_log_add(cl->log, LOG_LEVEL_INFO, "Class %s left the policy and has no job: /%s removed", class,
                               strempty(path));
}

void classes_apply(struct classes *cl) {
        if (live_make(cl) < 0) {
                live_done(cl);
                action_log_add(cl->log, LOG_LEVEL_ERR, "Out of memory: the job classes are not applied");
                return;
        }
        apply_each(cl);
        devwatch_update(cl);
}

void classes_done(struct classes *cl) {
        live_done(cl);
        cl->devwatch = devwatch_free(cl->devwatch);
}
