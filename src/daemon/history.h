/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Ended jobs and their end-of-job reports, so that `show` and `list --all`
 * can say what happened to last night's backup.  Bounded by a number and
 * an age (settings history_jobs and history_days), kept in a file that
 * survives a daemon restart and a reboot (written whole, atomically, at
 * each job's end).  A report is a JSON object, as `show` prints it.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct history {
        json_object *jobs; /* array of reports, oldest first */
        char *path;        /* NULL: not kept on disk */
        size_t max_jobs;
        uint64_t max_age_sec;
        bool save_warned; /* a write failed: said once */
};

/* Reads path if it is there (a damaged file is logged and set aside as path.bad, never fatal). */
int history_init(struct history *h, const char *path, size_t max_jobs, uint64_t max_age_sec);
void history_done(struct history *h);
/* New bounds (a reload): trimmed at once. */
void history_set_bounds(struct history *h, size_t max_jobs, uint64_t max_age_sec);
/* Takes report (a JSON object with "id", "uid" and "ended"); trims, then saves. */
int history_add(struct history *h, json_object *report);
/* By id; or by name: the newest of uid's jobs of that name, else the newest of that name.  Borrowed. */
json_object *history_find(const struct history *h, const char *id_or_name, uid_t uid);
