/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pagewardenctl top: the daemon's status refreshed every interval, with the
 * jobs' memory and I/O rates.  On a terminal: a full screen (the alternate
 * screen, as top(1) and less(1) use it), cut to its size, that quits on q,
 * Ctrl-C or SIGTERM and leaves the terminal as it was.  With iterations, or
 * to a pipe: that many screens one after the other, plain.
 *
 * Errors: 0, or 1 after a message on stderr (no terminal and no count, or
 * the daemon cannot be asked).
 */

#include <stdbool.h>

struct ctl_top_options {
        const char *socket;
        double interval;     /* seconds between refreshes */
        unsigned iterations; /* screens to print, then exit; 0: until q (a terminal only) */
        bool full;           /* -l: cells not cut */
        bool no_legend;
};

/* 0 on q or after the iterations; 1 if it cannot run (said on stderr). */
int ctl_top(const struct ctl_top_options *o);
