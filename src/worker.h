/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A thread for the engine's blocking work.  Writing memory.reclaim reclaims
 * synchronously in the writer's context and can take a while: it must never
 * stall the event loop, which serves the control socket and the watchdog.
 * Results come back to the loop through a pipe.
 */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "cgroup.h"

struct worker;

typedef void (*worker_done_fn)(void *userdata, uint64_t job_id, int r, const struct cgroup_release *rel);

int worker_new(sd_event *event, struct cgroup_engine *engine, worker_done_fn done, void *userdata,
               struct worker **ret);
/* Queues the release of a job's slot (cgroup_job_release). */
int worker_release(struct worker *w, uint64_t job_id, const char *path);
/* Stops the thread after its current task; queued tasks are dropped (the
 * next start adopts those slots and releases them then). */
struct worker *worker_free(struct worker *w);
static inline void worker_freep(struct worker **w) {
        worker_free(*w);
}
