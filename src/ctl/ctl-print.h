/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Human-readable renderings of pagewardend's successful responses (their
 * shapes are in pagewardenctl(8)).  The daemon may be older or newer than
 * pagewardenctl: any field may be missing, null or of another type, and is
 * then printed as "-".  Functions return 0, or -ENOMEM.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "ctl-client.h"
#include "ctl-table.h"

/* How tables look (ctl-table.h). */
void ctl_print_set_style(const struct ctl_print_style *s);

/* status: a summary line, then CLASSES, JOBS, PROTECTED and RECENT ACTIONS. */
int ctl_print_status(FILE *f, json_object *resp);
/*
 * status: how many things the policy asks for are not in force now (a
 * protected application in error, a class whose io limits wait for a
 * device), each said on f unless f is NULL.
 */
size_t ctl_status_problems(FILE *f, json_object *resp);
/*
 * top: a screen of status: classes, jobs with their memory and I/O rates
 * against prev (the status seconds ago; NULL: none yet), protected
 * applications, the governor and its last five actions; now is the time
 * to show in the first line.
 */
int ctl_print_top(FILE *f, json_object *resp, json_object *prev, double seconds, const char *now);
/* list: a table of the jobs. */
int ctl_print_list(FILE *f, json_object *resp);
/* show: one job, a field per line. */
int ctl_print_show(FILE *f, json_object *resp);
/* move: "moved 2 processes into job 3 (x) of class backup at CGROUP". */
int ctl_print_moved(FILE *f, json_object *resp);
/* An ended job's report on one line (run -v): "pagewardenctl: job 3 (x) ended after 12s: peak memory ...". */
void ctl_print_report_line(FILE *f, json_object *job);
/* stop, kill: "SIGTERM sent to 3 processes of job 4 (nightly)". */
int ctl_print_signalled(FILE *f, json_object *resp);
/* freeze, thaw: "job 4 (nightly): frozen". */
int ctl_print_job_state(FILE *f, json_object *resp);
/* reload: "reloaded: 2 job classes, 1 protected application". */
int ctl_print_reloaded(FILE *f, json_object *resp);
/* run --verbose: "pagewardenctl: job 3 (x) in backup at CGROUP, placed in 1.23 ms". */
int ctl_print_placed(FILE *f, json_object *resp, double msec);

/* A failed response: "pagewardenctl: ERROR[SUFFIX]", then its diagnostics as they are. */
void ctl_print_failure(FILE *f, const struct ctl_response *r, const char *suffix);
