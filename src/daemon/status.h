/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What `pagewardenctl status`, `list` and `show` show: JSON built from the
 * policy and from what the kernel has now (read through the engine).  The
 * fields are documented in pagewardenctl(8).
 *
 * Errors: none to the caller: a file that cannot be read shows as null or
 * as missing; out of memory may leave a field out.
 */

#include <json-c/json.h>

#include "api.h"

json_object *status_json(struct api *api);
json_object *status_job_json(struct api *api, const struct job *j);
/* list: the running jobs; with all, the ended ones too (their reports, newest first). */
json_object *status_list_json(struct api *api, bool all);
