/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's event loop, run here rather than by sd_event_loop() so that
 * each dispatch is timed: while one runs, the control socket, the PSI
 * triggers and the timers wait.  The longest dispatch and the number longer
 * than LOOP_SLOW_USEC are kept for `status` and the metrics, so that "the
 * loop never waits" is measured, not assumed.  loop_run returns the loop's
 * exit code (sd_event_exit's) or a negative errno.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* A dispatch longer than this is slow: a PSI window is 500 ms at the least, a request a few ms. */
#define LOOP_SLOW_USEC (UINT64_C(20) * 1000)
/* A new longest dispatch above this is logged (at most a few lines over a daemon's life). */
#define LOOP_LOG_USEC (UINT64_C(100) * 1000)

struct loop_stats {
        uint64_t dispatches;
        uint64_t slow;            /* dispatches longer than LOOP_SLOW_USEC */
        uint64_t longest_usec;    /* the longest dispatch */
        uint64_t longest_at_usec; /* when it ended, CLOCK_REALTIME; 0: no dispatch yet */
};

/* Counts one dispatch that took TOOK microseconds and ended at NOW (CLOCK_REALTIME); true if it is a new longest
 * above LOOP_LOG_USEC, which the caller logs. */
bool loop_stats_add(struct loop_stats *s, uint64_t took_usec, uint64_t now_usec);

/* Runs E until sd_event_exit(), timing every dispatch into S. */
int loop_run(sd_event *e, struct loop_stats *s);
