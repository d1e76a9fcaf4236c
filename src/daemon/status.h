/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What `pagewardenctl status`, `list` and `show` show: JSON built from the
 * policy and from what the kernel has now (read through the engine).  The
 * fields are documented in pagewardenctl(8).
 *
 * A job's figures (its processes, memory, I/O, whether it is frozen) are
 * read when asked while there are at most STATUS_READ_ALL_JOBS jobs (and
 * always for `show`); with more, status answers at once with the figures
 * it has, each job saying how old they are, and reads those older than
 * STATUS_FIGURES_FRESH_USEC again in the background, in slices of
 * STATUS_SLICE_USEC at the loop's idle priority; past STATUS_SLICED_JOBS
 * jobs, the jobs' text itself is written in such slices (status_answer()):
 * a status of thousands of jobs holds neither the loop nor the client for
 * seconds.
 *
 * Errors: none to the caller: a file that cannot be read shows as null or
 * as missing; out of memory may leave a field out.
 */

#include <json-c/json.h>

#include "api.h"

#define STATUS_READ_ALL_JOBS 32
#define STATUS_FIGURES_FRESH_USEC (UINT64_C(5) * 1000000)
#define STATUS_SLICE_USEC (UINT64_C(5) * 1000)
/* Past this many jobs, status and list are answered later, their jobs written in slices (status_answer()); so is
 * status past this many protected applications (each is several files read). */
#define STATUS_SLICED_JOBS 64
#define STATUS_SLICED_PROTECTED 16

json_object *status_json(struct api *api);
/* One job, its figures read now. */
json_object *status_job_json(struct api *api, struct job *j);
/* A job just placed, as the answer to run and move has it: its figures are not read (eight files: a quarter of a
 * move's system calls), and null unless something read them already. */
json_object *status_job_placed_json(struct api *api, const struct job *j);
/* list: the running jobs; with all, the ended ones too (their reports, newest first). */
json_object *status_list_json(struct api *api, bool all);
/*
 * status (list false) or list (with all, the ended jobs too), as the
 * control socket answers them: while there are at most STATUS_SLICED_JOBS
 * jobs (and, for status, STATUS_SLICED_PROTECTED protected applications),
 * made now into *ret (0); with more, 1, and fn(api, client, answer) later
 * from the loop, once the jobs' (and protected applications') text is
 * written in slices of STATUS_SLICE_USEC (the answer NULL: out of memory);
 * requests that come meanwhile wait for the same text.  -ENOMEM.
 */
typedef void (*status_reply_fn)(struct api *api, uint64_t client, json_object *resp);
int status_answer(struct api *api, bool list, bool all, status_reply_fn fn, uint64_t client, json_object **ret);
/* Stops reading figures in the background, and forgets the answers under way (the daemon stops). */
void status_done(struct api *api);
