/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The control protocol between pagewardenctl and pagewardend: one JSON
 * object per line over a Unix stream socket, one request and one response
 * per connection.  A request is at most PROTOCOL_MAX_MESSAGE bytes, ends
 * with '\n', and has a "command" and the fields that command takes; unknown
 * fields are refused.  A response is a JSON object with "ok": true and the
 * command's data, or "ok": false with "error" (a sentence) and, for reload,
 * "diagnostics" (FILE:LINE:COLUMN lines).
 *
 *   {"command": "version"}
 *   {"command": "status"}
 *   {"command": "list"}
 *   {"command": "show", "job": "3"}                  id or name
 *   {"command": "reload"}
 *   {"command": "run", "class": "backup", "name": "nightly", "pid": 1234}
 *   {"command": "move", "class": "backup", "name": "x", "pids": [1, 2], "tree": true}
 *   {"command": "suggest"}
 *
 * For run, the caller has forked the command's process and holds it before
 * exec; the daemon moves it into a new job and answers, and only then is the
 * command executed: it never runs outside its job.
 *
 * Errors: negative errno (a request refused is -EINVAL, with a sentence
 * for the client; out of memory is -ENOMEM); NULL for out of memory where
 * a line or a JSON value is made.  No logging: a refusal is the caller's
 * to answer.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

/*
 * Bounds on a request, whatever the client sends: its size (checked before
 * parsing), its nesting (json-c stops there: a request needs 2 levels, 7
 * are parsed), the pids of a move.  Parsing a request is linear in its
 * size (at most a few milliseconds).
 */
#define PROTOCOL_MAX_MESSAGE (64 * 1024)
#define PROTOCOL_MAX_DEPTH 8 /* json-c's depth: objects and arrays nested at most 7 deep */
#define PROTOCOL_MAX_PIDS 1024

enum pw_command {
        PW_CMD_VERSION,
        PW_CMD_STATUS,
        PW_CMD_LIST,
        PW_CMD_SHOW,
        PW_CMD_RELOAD,
        PW_CMD_RUN,
        PW_CMD_MOVE,
        PW_CMD_STOP,   /* SIGTERM to a job's processes (thawed first), SIGKILL to what is left after a while */
        PW_CMD_KILL,   /* a signal to a job's processes */
        PW_CMD_FREEZE, /* a job's cgroup frozen, until thawed */
        PW_CMD_THAW,
        PW_CMD_SUGGEST, /* root: the episodes observation kept (unplaced work that evicted protected applications) */
        _PW_CMD_MAX,
};

struct pw_request {
        enum pw_command command;
        char class[POLICY_NAME_MAX + 1];
        char name[POLICY_NAME_MAX + 1]; /* run, move: optional job name */
        char job[POLICY_NAME_MAX + 1];  /* show, stop, kill, freeze, thaw: id or name */
        int signal;                     /* kill: one of PW_SIGNALS */
        /* run --property: this job's own limits, tighter than the class gives each job (0: not given) */
        uint64_t memory_high, memory_max, memory_swap_max;
        pid_t pid;                     /* run */
        pid_t pids[PROTOCOL_MAX_PIDS]; /* move */
        size_t n_pids;
        bool tree; /* move: descendants too */
        bool all;  /* list: ended jobs too */
};

/* The signals kill sends: those an operator means for a job's processes.  Not the C library's own (32,
 * 33), faults (SEGV, BUS...) or real-time signals, whose meaning is the program's business. */
#define PW_SIGNALS "HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT, STOP or TSTP"
bool pw_signal_allowed(int sig);

const char *pw_command_to_string(enum pw_command c);
int pw_command_from_string(const char *s);

/*
 * Parses one request (without its '\n').  On -EINVAL, *ret_error is a
 * static sentence for the client.  Everything is checked: size, nesting,
 * NUL bytes (raw or escaped), types, names, pid ranges, the fields each
 * command takes.
 */
int protocol_parse_request(const char *buf, size_t len, struct pw_request *ret, const char **ret_error);
/* A limit as the daemon's answers give it: the number, or "max" for UNITS_MAX. */
json_object *protocol_limit_json(uint64_t v);
/* The request as a line of JSON (with '\n'); the caller frees it. */
char *protocol_format_request(const struct pw_request *req);
