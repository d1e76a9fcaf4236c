/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pagewardenctl run: start a command inside a new job.  The command's
 * process is forked and held before exec until pagewardend has moved it
 * into the job's cgroup, so that the command never runs outside its job.
 *
 * Errors: as an exit status (see below), its messages printed here.
 */

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses of run besides the command's own, as env(1) and nice(1) use them. */
enum {
        CTL_RUN_NOT_RUN = 125,        /* pagewardenctl's own failure: the command was not run */
        CTL_RUN_CANNOT_EXECUTE = 126, /* found, but exec failed */
        CTL_RUN_NOT_FOUND = 127,
};

struct ctl_run_options {
        const char *socket;
        const char *class;
        const char *name; /* NULL: the daemon names the job */
        /* When the daemon is not running: run the command unmanaged (CTL_FALLBACK_YES), do not
         * (_NO), or as run_fallback in the settings file config says (_SETTING). */
        enum { CTL_FALLBACK_SETTING, CTL_FALLBACK_NO, CTL_FALLBACK_YES } fallback;
        const char *config;                                /* the settings file, for _SETTING */
        uint64_t memory_high, memory_max, memory_swap_max; /* --property: the job's own (0: the class's) */
        bool verbose;                                      /* print the job and the placement latency on stderr */
        char **argv;                                       /* the command and its arguments, NULL-terminated */
};

/*
 * Returns the command's exit status, or one of the statuses above.  When the
 * command is killed by a signal, pagewardenctl kills itself with the same
 * signal and does not return.  Prints its own messages on stderr.
 */
int ctl_run(const struct ctl_run_options *o);
