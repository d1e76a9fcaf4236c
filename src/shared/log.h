/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's log, one message per line.  Where stderr is the journal
 * (systemd set $JOURNAL_STREAM to the stream stderr is), each message goes
 * to journald through sd-journal with its priority and the structured fields
 * of struct log_fields (PAGEWARDEN_JOB=, PAGEWARDEN_CLASS=, ...), so that
 * `journalctl -u pagewarden PAGEWARDEN_CLASS=backup` finds a class's lines;
 * if journald cannot be reached, it goes to stderr with the sd-daemon
 * priority prefix ("<6>").  Anywhere else (a terminal, a file, a pipe) a line
 * is "2026-12-02T04:40:12.123+00:00 warning: TEXT": local time, level,
 * message.  Library-like modules do not log; the daemon layer does.
 *
 * Errors: log_*_errno() return the negative errno given, so that a caller
 * can log and return in one statement; logging itself never fails loudly.
 */

#include <stdarg.h>
#include <stdint.h>

#include "util.h"

enum {
        LOG_LEVEL_ERR = 3,
        LOG_LEVEL_WARNING = 4,
        LOG_LEVEL_NOTICE = 5,
        LOG_LEVEL_INFO = 6,
        LOG_LEVEL_DEBUG = 7,
};

/* What a message is about, as journal fields; NULL or 0 members are left out. */
struct log_fields {
        const char *job;    /* PAGEWARDEN_JOB=name */
        uint64_t job_id;    /* PAGEWARDEN_JOB_ID= */
        const char *klass;  /* PAGEWARDEN_CLASS= */
        const char *action; /* PAGEWARDEN_ACTION=, e.g. "tighten", "oom-kill" */
};

void log_set_max_level(int level);
/* Looks again at where stderr goes (after it was redirected). */
void log_reopen(void);
/* Returns -abs(error) (or 0 if error is 0), so that callers can `return log_error_errno(r, ...)`. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);
int log_fields_internal(int level, int error, const struct log_fields *fields, const char *fmt, ...) _printf_(4, 5);
int log_fields_va(int level, int error, const struct log_fields *fields, const char *fmt, va_list ap) _printf_(4, 0);

struct diag_list;
/* Logs diagnostics (errors and warnings of configuration files), a line each, at level. */
void log_diags(int level, const struct diag_list *diags);
/* msg with each control character (a newline of a command line, an escape sequence) written as \xNN, so
 * that what others choose (argv, names) cannot forge log lines or colours; NULL if msg has none (or
 * without memory: then every control character of msg is made '?' in place). */
char *log_escape(char *msg);

#define log_debug(...) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__)
/* %m in fmt prints strerror(error). */
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
