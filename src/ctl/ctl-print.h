/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Human-readable renderings of pagewardend's successful responses (their
 * shapes are in pagewardenctl(8)).  The daemon may be older or newer than
 * pagewardenctl: any field may be missing, null or of another type, and is
 * then printed as "-".  Functions return 0, or -ENOMEM.
 */

#include <json-c/json.h>
#include <stdio.h>

#include "ctl-client.h"

/* status: a summary line, then CLASSES, JOBS, PROTECTED and RECENT ACTIONS. */
int ctl_print_status(FILE *f, json_object *resp);
/* list: a table of the jobs. */
int ctl_print_list(FILE *f, json_object *resp);
/* show: one job, a field per line. */
int ctl_print_show(FILE *f, json_object *resp);
/* move: "moved 2 processes into job 3 (x) of class backup at CGROUP". */
int ctl_print_moved(FILE *f, json_object *resp);
/* reload: "reloaded: 2 job classes, 1 protected application". */
int ctl_print_reloaded(FILE *f, json_object *resp);
/* run --verbose: "pagewardenctl: job 3 (x) in backup at CGROUP, placed in 1.23 ms". */
int ctl_print_placed(FILE *f, json_object *resp, double msec);

/* A failed response: "pagewardenctl: ERROR[SUFFIX]", then its diagnostics as they are. */
void ctl_print_failure(FILE *f, const struct ctl_response *r, const char *suffix);
