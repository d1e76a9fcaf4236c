/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Ended jobs and their end-of-job reports, so that `show` and `list --all`
 * can say what happened to last night's backup.  Bounded by a number and
 * an age (settings history_jobs and history_days), and per user: the
 * reports of a uid other than 0 hold at most a quarter of history_jobs (at
 * least 1), so that one user's flood of short jobs (placed by rule, say)
 * drops that user's own oldest reports, not root's or anyone else's; uid 0
 * is bounded by history_jobs and history_days alone.  Kept in a file that
 * survives a daemon restart and a reboot, one report a line (JSON lines,
 * after a header line): at most once a second on the event loop (the first
 * change after a write arms a one-shot timer; changes meanwhile only mark
 * the history dirty), and at history_done whatever is still pending, the
 * new reports are appended and synced (each report's text is made when it
 * is added, so that a thousand jobs ending together do not make the write
 * one long dispatch); the file is written whole, and
 * atomically, once it holds twice the reports kept (trimmed ones stay in it
 * until then: reading it trims them again), after new bounds, and when it
 * was not ours to append to.  A file of the former format (one JSON object)
 * is read, and written anew.  Served from memory.  A report
 * is a JSON object, as `show` prints it.  Functions return 0 or a negative
 * errno; a failed write is logged once, and the history then lives in
 * memory only.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

/* Changes within this time after the first are written together. */
#define HISTORY_SAVE_DELAY_USEC (UINT64_C(1) * 1000000)

struct history {
        json_object *jobs; /* array of reports, oldest first */
        char *path;        /* NULL: not kept on disk */
        size_t max_jobs;
        uint64_t max_age_sec;
        sd_event *event;             /* NULL: every change is written at once */
        sd_event_source *save_timer; /* armed while a write is pending */
        bool dirty;                  /* changed since the file was last written */
        bool save_warned;            /* a write failed: said once */
        size_t n_new;                /* the newest reports, not in the file yet */
        size_t lines_on_disk;        /* reports in the file (those trimmed since too) */
        bool rewrite;                /* the file is to be written whole at the next write */
        unsigned n_saves;            /* writes of the file attempted (for the tests) */
        unsigned n_rewrites;         /* of them, the file written whole (for the tests) */
};

/* Reads path if it is there (a damaged file is logged and set aside as path.bad, never fatal).  Takes a
 * reference on event, whose loop writes the file (NULL: written at each change). */
int history_init(struct history *h, sd_event *event, const char *path, size_t max_jobs, uint64_t max_age_sec);
/* Writes a pending change first (at a clean stop nothing is lost). */
void history_done(struct history *h);
/* New bounds (a reload): trimmed at once. */
void history_set_bounds(struct history *h, size_t max_jobs, uint64_t max_age_sec);
/* Takes report (a JSON object with "id", "uid" and "ended"); trims (the uid's own oldest first if it is over
 * its quota), then saves or arms the save. */
int history_add(struct history *h, json_object *report);
/* By id; or by name: the newest of uid's jobs of that name, else the newest of that name.  Borrowed. */
json_object *history_find(const struct history *h, const char *id_or_name, uid_t uid);
