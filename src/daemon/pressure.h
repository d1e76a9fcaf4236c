/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Reading pressure: PSI triggers (a file descriptor that wakes the loop
 * with POLLPRI when tasks stall for a given time within a window) and
 * samples of a protected application's memory counters.  Reading only: what
 * a sample means is the governor's decision (governor.h), and the triggers
 * exist only while the governor runs (governor-run.c).
 *
 * Errors: negative errno; -ENOENT/-ENODEV when the cgroup is gone.
 */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "cgroup.h"
#include "governor.h"
#include "worker.h"

/*
 * Arms a trigger on path's resource file ("memory" or "io": path/memory.pressure),
 * or with path NULL on the whole machine's (/proc/pressure/memory): it
 * fires when kind ("some" or "full") stalls reach stall_usec within
 * window_usec.  handler runs on the loop with userdata.
 */
int pressure_trigger_open(sd_event *event, struct cgroup_engine *e, const char *path, const char *resource,
                          const char *kind, uint64_t stall_usec, uint64_t window_usec, sd_event_io_handler_t handler,
                          void *userdata, int *ret_fd, sd_event_source **ret_source);
/* The same armed by the worker w (the loop does not wait for the kernel: see worker_arm); done gets the trigger
 * (t->fd, the callback's) and token, and watches it with pressure_trigger_watch. */
int pressure_trigger_arm(struct worker *w, const char *path, const char *resource, const char *kind,
                         uint64_t stall_usec, uint64_t window_usec, uint64_t token, worker_done_fn done,
                         void *userdata);
int pressure_trigger_watch(sd_event *event, int fd, sd_event_io_handler_t handler, void *userdata,
                           sd_event_source **ret_source);
void pressure_trigger_close(int *fd, sd_event_source **source);
/* The same, the close on the worker's thread: closing a trigger waits in the kernel (psi_trigger_destroy's
 * synchronize_rcu: 12 ms natively, far more under emulation), which the loop must not. */
void pressure_trigger_release(struct worker *w, int *fd, sd_event_source **source);
/* Stops (enabled false) or resumes its events; a resumed trigger first forgets what fired while it slept.
 * false: resumed, it is dead (its cgroup was removed meanwhile, perhaps made again under the same path). */
bool pressure_trigger_enable(int fd, sd_event_source *source, bool enabled);

/* The counters of a cgroup's memory.stat, memory.events, memory.pressure
 * and memory.swap.current / memory.current contents (any text may be NULL). */
void pressure_sample_parse(const char *stat, const char *events, const char *psi, const char *swap_current,
                           const char *current, struct governor_sample *ret);
/* Reads them from the cgroup at path (relative to the mount). */
int pressure_sample_read(struct cgroup_engine *e, const char *path, struct governor_sample *ret);
/* Only what a job's cost to the application is counted in (refaults, major faults: memory.stat; stall time:
 * memory.pressure): two files of the five; the rest of ret is 0. */
int pressure_cost_read(struct cgroup_engine *e, const char *path, struct governor_sample *ret);
/* io.stat's bytes (read + written) per device; none for NULL. */
void pressure_io_use_parse(const char *io_stat, struct governor_io_use *ret);
/* Reads them from the cgroup at path (none, and -ENOENT, without the io controller). */
int pressure_io_use_read(struct cgroup_engine *e, const char *path, struct governor_io_use *ret);
/* Adds the counters of the jobs' cgroup at path to sum: memory.current, memory.stat's pgfault, file_dirty and
 * file_writeback, io.stat.  Negative errno (sum unchanged) when memory.current cannot be read. */
int pressure_jobs_add(struct cgroup_engine *e, const char *path, struct governor_jobs_sample *sum);
