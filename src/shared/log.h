/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's log: one line per message on stderr, prefixed with the
 * sd-daemon priority ("<6>") so that journald files it at the right level,
 * unless stderr is a terminal.  Library-like modules do not log; the daemon
 * layer does.
 */

#include <stdarg.h>

#include "util.h"

enum {
        LOG_LEVEL_ERR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_NOTICE = 5,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
};

void log_set_max_level(int level);
/* Returns -abs(error) (or 0 if error is 0), so that callers can `return log_error_errno(r, ...)`. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

struct diag_list;
/* Logs diagnostics (errors and warnings of configuration files), a line each, at level. */
void log_diags(int level, const struct diag_list *diags);

#define log_debug(...) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__)
/* %m in fmt prints strerror(error). */
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
