/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pagewardenctl metrics: the daemon's status response as metrics in the
 * Prometheus text exposition format, version 0.0.4 (what node_exporter's
 * textfile collector reads); the metrics are listed in pagewardenctl(8),
 * METRICS.  As in ctl-print, the daemon may be older or newer than
 * pagewardenctl: a value that is missing, null or of another type leaves
 * its sample out (never a made-up 0), and the output is valid whatever the
 * response holds.  Functions return 0 or a negative errno.
 */

#include <json-c/json.h>
#include <stdio.h>

/* The metrics of resp, a status response; resp NULL: the daemon did not answer, only pagewarden_up 0. -ENOMEM. */
int ctl_metrics_print(FILE *f, json_object *resp);

/*
 * Replaces path with text so that a reader sees the old file or the new one,
 * whole: written to a temporary file beside it (whose name does not end in
 * .prom), made mode 0644 whatever the umask, renamed over path.  No
 * symbolic link is followed on the way (-ELOOP): the directory's parent may
 * belong to another account (node_exporter's, on Debian).
 */
int ctl_metrics_write_file(const char *path, const char *text);
