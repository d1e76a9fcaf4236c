/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A thread for the engine's blocking writes.  Writing memory.reclaim, or a
 * memory.high below a cgroup's usage, reclaims synchronously in the
 * writer's context and can take seconds under pressure; writing a pid into
 * cgroup.procs waits for an RCU grace period (the kernel's cgroup migration
 * lock), milliseconds natively, tens under emulation: neither may stall the
 * event loop, which serves the control socket, the PSI triggers and the
 * watchdog.  Finished tasks come back to the loop through a pipe, in order,
 * each to the callback its submitter gave.  A backend may run more than one
 * (placements do not queue behind reclaim).
 *
 * Errors: negative errno when a task cannot be submitted (the caller does
 * it another way or reports it); a task's own failure goes to its callback.
 */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "cgroup.h"

struct worker_task;

/* Called on the event loop for a finished task; the task is freed after. */
typedef void (*worker_done_fn)(void *userdata, const struct worker_task *t);

enum worker_kind {
        WORKER_RELEASE, /* cgroup_job_release(path) */
        WORKER_WRITE,   /* cgroup_write_file(path, file, value) */
        WORKER_CLOSE,   /* close(fd): a PSI trigger's close waits for an RCU grace period */
        WORKER_ATTACH,  /* cgroup_job_attach(path, pid) for each of pids, in order */
        WORKER_ARM,     /* cgroup_psi_trigger(path, file, value): fd, the trigger, is the callback's */
        WORKER_CALL,    /* call(arg): work that is not the engine's (a reload's files read and parsed) */
};

struct worker_task {
        enum worker_kind kind;
        uint64_t job_id; /* RELEASE */
        int fd;          /* CLOSE; ARM: the trigger armed (-1: none) */
        uint64_t token;  /* ARM: the submitter's, to know what the trigger is for */
        pid_t *pids;     /* ATTACH: n_pids of them; moved: how many were written (r: 0 if any, else the first
                          * error, -ESRCH where none was there) */
        size_t n_pids, moved;
        char *path, *file, *value;
        uint64_t wake_usec;            /* WRITE: when the reason for it woke the daemon (0: none) */
        uint64_t start_usec, end_usec; /* CLOCK_MONOTONIC, around the work */
        int r;
        struct cgroup_release rel;
        void (*call)(void *arg);    /* CALL: run on the thread, then done on the loop */
        void (*dispose)(void *arg); /* CALL: frees arg when the loop never hears of it (the worker stopped) */
        void *arg;
        worker_done_fn done; /* NULL: nobody waits for it */
        void *userdata;
        struct worker_task *next;
};

struct worker;

int worker_new(sd_event *event, struct cgroup_engine *engine, struct worker **ret);
/* Each calls DONE (if not NULL) with USERDATA on the loop once the task has finished. */
int worker_release(struct worker *w, uint64_t job_id, const char *path, worker_done_fn done, void *userdata);
int worker_write(struct worker *w, const char *path, const char *file, const char *value, uint64_t wake_usec,
                 worker_done_fn done, void *userdata);
/* Writes each of pids (n > 0) into path's cgroup.procs on the thread. */
int worker_attach(struct worker *w, const char *path, const pid_t *pids, size_t n, worker_done_fn done, void *userdata);
/* Arms a PSI trigger on the thread: opens path's RESOURCE.pressure (resource "memory", "io") and writes spec into
 * it.  The first trigger on a cgroup makes the kernel start a thread for it (6.1's psimon), and waits for it.  DONE
 * owns t->fd (a trigger, or -1 with t->r the error); closed here if there is no DONE or the worker stops first. */
int worker_arm(struct worker *w, const char *path, const char *resource, const char *spec, uint64_t token,
               worker_done_fn done, void *userdata);
/* Runs call(arg) on the thread; done (not NULL) then has arg (t->arg), and owns it.  A task dropped by
 * worker_free() is given to dispose(arg) instead. */
int worker_call(struct worker *w, void (*call)(void *arg), void *arg, void (*dispose)(void *arg), worker_done_fn done,
                void *userdata);
/* Closes fd on the thread (it is the worker's from now, even on error: then closed here). */
int worker_close(struct worker *w, int fd, worker_done_fn done, void *userdata);
/* Stops the thread after its current task; queued tasks are dropped (the
 * next start adopts the slots and releases them then). */
struct worker *worker_free(struct worker *w);
static inline void worker_freep(struct worker **w) {
        worker_free(*w);
}
