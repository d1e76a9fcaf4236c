/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The daemon's recent actions: each is logged, and the last
 * ACTION_LOG_SIZE are kept for `pagewardenctl status`.  Every module of the
 * daemon that acts (jobs, protection, the governor, reload) records here;
 * out of memory drops the entry, never the log line.
 *
 * Errors: none to the caller: an entry that cannot be kept is dropped, its
 * log line still written.
 */

#include <json-c/json.h>
#include <stdint.h>

#include "util.h"

#define ACTION_LOG_SIZE 32

struct action {
        uint64_t usec; /* CLOCK_REALTIME */
        char *message;
};

struct action_log {
        struct action ring[ACTION_LOG_SIZE]; /* oldest overwritten */
        unsigned n;                          /* recorded so far */
};

void action_log_add(struct action_log *l, int level, const char *fmt, ...) _printf_(3, 4);
/* The same, with journal fields saying which job or class it is about (see log.h). */
struct log_fields;
void action_log_add_fields(struct action_log *l, int level, const struct log_fields *fields, const char *fmt, ...)
        _printf_(4, 5);
/* The kept actions, oldest first: [{"time": seconds, "message": text}]. */
json_object *action_log_json(const struct action_log *l);
void action_log_done(struct action_log *l);
