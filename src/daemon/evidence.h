/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Evidence of who evicts the protected applications: pure decisions over
 * the counters the observer reads (observe.c).  A window (two samples one
 * observation period apart) harms a protected application when pages were
 * reclaimed from it, or it refaulted or stalled on memory, beyond the
 * thresholds below.  A cgroup outside jobs and protection streamed in that
 * window when the page cache charged to it, or what it read and wrote,
 * reached EVIDENCE_STREAM_MIN: it is a suspect; so is one that streamed
 * in the window before when that one harmed no one (memory fills before
 * pages are taken from anyone: the losses follow the streaming that caused
 * them, maybe after the copy ended).  Consecutive harmful
 * windows make an episode, one JSON object with each application's losses
 * and each suspect's share, which the observer's history keeps and
 * `pagewardenctl suggest` prints.
 *
 * A protected application is never a suspect (its own growth is not
 * blamed on it), nor is a job: the observer does not offer them.
 *
 * No I/O.  Errors: negative errno (-ENOMEM).
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "governor.h"
#include "policy.h"

/* What harms an application in one window: pages reclaimed from it (its cache, or its anonymous memory
 * swapped out), evicted pages it needed again, time its tasks stalled on memory. */
#define EVIDENCE_LOST_MIN (UINT64_C(4) << 20)
#define EVIDENCE_REFAULTS_MIN 256
#define EVIDENCE_STALL_MIN_USEC (UINT64_C(100) * 1000)
/* What a suspect streamed in that window: page cache charged to it, or bytes read and written. */
#define EVIDENCE_STREAM_MIN (UINT64_C(16) << 20)
/* The suspects one window names (the largest), and one episode keeps; the programs named per suspect. */
#define EVIDENCE_WINDOW_SUSPECTS 8
#define EVIDENCE_EPISODE_SUSPECTS 8
#define EVIDENCE_PROGRAMS 3

/* A cgroup's cumulative counters: memory.stat file (a level, bytes), pgsteal and workingset_refault_file
 * (pages), io.stat rbytes and wbytes summed over its devices. */
struct evidence_counters {
        bool have_memory, have_io;
        uint64_t file, pgsteal, refault_file;
        uint64_t read, written;
};

/* What a cgroup did in one window, in bytes: page cache charged to it (what its cache grew by, plus what
 * was reclaimed from it meanwhile; nothing for a cache that only shrank), evicted file pages it needed
 * again, read, written. */
struct evidence_delta {
        uint64_t charged, refaulted, read, written;
};

struct evidence_harm {
        char name[POLICY_NAME_MAX + 1];
        uint64_t lost, refaults, stall_usec; /* bytes reclaimed, pages refaulted, microseconds */
};

/* A process of a suspect that has no unit of its own (a login session, a cgroup): read_bytes + write_bytes
 * of /proc/PID/io, since it started (named only from EVIDENCE_STREAM_MIN: not the session's su or shell). */
struct evidence_program {
        char exe[256];     /* the path an exe: rule would name (a script's, not its interpreter's) */
        char cmdline[160]; /* the first 159 bytes */
        int64_t uid;       /* effective */
        uint64_t bytes;
};

struct evidence_suspect {
        char cgroup[512]; /* "/system.slice/backup-db.service" */
        char unit[256];   /* "backup-db.service"; "" when it has no unit of its own a rule could name */
        int64_t uid;      /* the user slice it runs in, -1 for none */
        bool have_io;
        struct evidence_delta d;
        uint64_t first; /* the start of the window it streamed in (seconds since the epoch) */
        struct evidence_program programs[EVIDENCE_PROGRAMS];
        size_t n_programs;
};

/* The counters of memory.stat and io.stat contents (either may be NULL: not there). */
void evidence_counters_parse(const char *memory_stat, const char *io_stat, struct evidence_counters *ret);
/* prev to cur, page_size bytes a page: whether the cgroup streamed (EVIDENCE_STREAM_MIN).  A counter that
 * went down (the cgroup was made again) counts from 0. */
bool evidence_window(const struct evidence_counters *prev, const struct evidence_counters *cur, uint64_t page_size,
                     struct evidence_delta *ret);
/* What ranks suspects: the larger of the cache charged and the bytes read and written. */
uint64_t evidence_weight(const struct evidence_delta *d);
/* Whether an application's window prev to cur harmed it (*ret says how, name left to the caller). */
bool evidence_harmed(const struct governor_sample *prev, const struct governor_sample *cur, uint64_t page_size,
                     struct evidence_harm *ret);
/* Sorts suspects by weight, largest first; returns how many a window names (at most EVIDENCE_WINDOW_SUSPECTS). */
size_t evidence_rank(struct evidence_suspect *s, size_t n);
/* Adds a program to a suspect's list (the same exe and command line: the larger count; else the largest
 * EVIDENCE_PROGRAMS kept). */
void evidence_add_program(struct evidence_suspect *s, const struct evidence_program *p);

/*
 * Adds one harmful window, start to end (seconds since the epoch), to *episode (made, with id, when NULL):
 * each application's losses and each suspect's share are summed, a suspect's programs merged; an episode
 * keeps its EVIDENCE_EPISODE_SUSPECTS largest suspects.  The episode, as the history keeps it:
 *   {"id", "uid": 0, "started", "ended", "windows",
 *    "applications": [{"name", "lost_bytes", "refaults", "stall_us"}],
 *    "suspects": [{"cgroup", "unit" (or null), "uid" (or null), "charged_bytes", "refaulted_bytes",
 *                  "read_bytes", "written_bytes" (null without io.stat), "first", "last", "windows",
 *                  "programs": [{"exe", "cmdline", "uid", "bytes"}]}]}
 */
int evidence_episode_add(json_object **episode, uint64_t id, uint64_t start, uint64_t end,
                         const struct evidence_harm *apps, size_t n_apps, const struct evidence_suspect *s, size_t n);

/* What the observer does with a cgroup (path below the mount, "/system.slice/backup-db.service"). */
enum evidence_kind {
        EVIDENCE_SKIP,      /* PID 1's own (init.scope) */
        EVIDENCE_DESCEND,   /* a slice, a user's manager (user@UID.service), a cgroup with children */
        EVIDENCE_CANDIDATE, /* a unit, or a cgroup without children: its counters are read */
};
/*
 * A slice, a user's manager or a cgroup that has children is descended
 * into; a unit, or a cgroup without children, is a candidate: *unit (len
 * bytes) is then its name when a units: rule could name it (a system
 * service, not a user's, not one systemd-run named at random, run-*), else
 * "" (its processes are named instead).
 */
enum evidence_kind evidence_classify(const char *path, bool has_children, char *unit, size_t len);
/* The user a cgroup runs for (a user-UID.slice on its path), or -1. */
int64_t evidence_path_uid(const char *path);

/*
 * Each suspect over episodes (an array, oldest first): one entry per unit,
 * or per program and user for work without a unit (a login session's cgroup
 * changes at each login), or per cgroup; the largest max, largest first:
 *   [{"name", "unit", "uid", "cgroup" (the newest), "charged_bytes", "refaulted_bytes", "read_bytes",
 *     "written_bytes", "episodes", "windows", "first", "last", "programs": [...],
 *     "applications": [{"name", "lost_bytes", "refaults", "stall_us"}] (in the episodes it was in)}]
 */
json_object *evidence_summary(json_object *episodes, size_t max);
