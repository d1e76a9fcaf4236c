/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>

#include "protocol.h"
#include "units.h"
#include "util.h"

static const char *const command_names[_PW_CMD_MAX] = {
        [PW_CMD_VERSION] = "version", [PW_CMD_STATUS] = "status", [PW_CMD_LIST] = "list", [PW_CMD_SHOW] = "show",
        [PW_CMD_RELOAD] = "reload",   [PW_CMD_RUN] = "run",       [PW_CMD_MOVE] = "move", [PW_CMD_STOP] = "stop",
        [PW_CMD_KILL] = "kill",       [PW_CMD_FREEZE] = "freeze", [PW_CMD_THAW] = "thaw", [PW_CMD_SUGGEST] = "suggest",
};

bool pw_signal_allowed(int sig) {
        static const int allowed[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGKILL, SIGUSR1,
                                       SIGUSR2, SIGTERM, SIGCONT, SIGSTOP, SIGTSTP };

        for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                if (allowed[i] == sig)
                        return true;
        return false;
}

const char *pw_command_to_string(enum pw_command c) {
        return (size_t) c < _PW_CMD_MAX ? command_names[c] : "?";
}

int pw_command_from_string(const char *s) {
        for (int i = 0; i < _PW_CMD_MAX; i++)
                if (streq(command_names[i], s))
                        return i;
        return -EINVAL;
}

/* Which fields each command takes (beyond "command"). */
enum {
        F_CLASS = 1 << 0,
        F_NAME = 1 << 1,
        F_JOB = 1 << 2,
        F_PID = 1 << 3,
        F_PIDS = 1 << 4,
        F_TREE = 1 << 5,
        F_SIGNAL = 1 << 6,
        F_LIMITS = 1 << 7, /* memory_high, memory_max, memory_swap_max */
        F_ALL = 1 << 8,
};

static const unsigned command_fields[_PW_CMD_MAX] = {
        [PW_CMD_LIST] = F_ALL,
        [PW_CMD_SHOW] = F_JOB,
        [PW_CMD_STOP] = F_JOB,
        [PW_CMD_KILL] = F_JOB | F_SIGNAL,
        [PW_CMD_FREEZE] = F_JOB,
        [PW_CMD_THAW] = F_JOB,
        [PW_CMD_RUN] = F_CLASS | F_NAME | F_PID | F_LIMITS,
        [PW_CMD_MOVE] = F_CLASS | F_NAME | F_PIDS | F_TREE,
};
static const unsigned command_required[_PW_CMD_MAX] = {
        [PW_CMD_SHOW] = F_JOB,
        [PW_CMD_STOP] = F_JOB,
        [PW_CMD_KILL] = F_JOB | F_SIGNAL,
        [PW_CMD_FREEZE] = F_JOB,
        [PW_CMD_THAW] = F_JOB,
        [PW_CMD_RUN] = F_CLASS | F_PID,
        [PW_CMD_MOVE] = F_CLASS | F_PIDS,
};

static bool valid_pid(int64_t v) {
        return v > 1 && v <= INT_MAX;
}

static int copy_name(json_object *v, char *dst, const char **ret_error, const char *what_bad) {
        const char *s;

        if (!json_object_is_type(v, json_type_string)) {
                *ret_error = what_bad;
                return -EINVAL;
        }
        s = json_object_get_string(v);
        if (policy_name_problem(s)) {
                *ret_error = what_bad;
                return -EINVAL;
        }
        snprintf(dst, POLICY_NAME_MAX + 1, "%s", s);
        return 0;
}

static int parse_fields(json_object *obj, struct pw_request *req, const char **ret_error) {
        unsigned seen = 0;
        int cmd = -EINVAL;
        json_object *v;

        if (!json_object_object_get_ex(obj, "command", &v) || !json_object_is_type(v, json_type_string)) {
                *ret_error = "the request has no \"command\"";
                return -EINVAL;
        }
        cmd = pw_command_from_string(json_object_get_string(v));
        if (cmd < 0) {
                *ret_error = "unknown command";
                return -EINVAL;
        }
        req->command = (enum pw_command) cmd;

        json_object_object_foreach(obj, key, val) {
                unsigned f;

                if (streq(key, "command"))
                        continue;
                f = streq(key, "class")                                                                      ? F_CLASS
                    : streq(key, "name")                                                                     ? F_NAME
                    : streq(key, "job")                                                                      ? F_JOB
                    : streq(key, "pid")                                                                      ? F_PID
                    : streq(key, "pids")                                                                     ? F_PIDS
                    : streq(key, "tree")                                                                     ? F_TREE
                    : streq(key, "signal")                                                                   ? F_SIGNAL
                    : streq(key, "all")                                                                      ? F_ALL
                    : streq(key, "memory_high") || streq(key, "memory_max") || streq(key, "memory_swap_max") ? F_LIMITS
                                                                                                             : 0;
                if (!(f & command_fields[cmd])) {
                        *ret_error = "the request has a field its command does not take";
                        return -EINVAL;
                }
                seen |= f;
                switch (f) {
                case F_CLASS:
                        if (copy_name(val, req->class, ret_error, "\"class\" is not a valid class name") < 0)
                                return -EINVAL;
                        break;
                case F_NAME:
                        if (copy_name(val, req->name, ret_error, "\"name\" is not a valid job name") < 0)
                                return -EINVAL;
                        break;
                case F_JOB:
                        if (copy_name(val, req->job, ret_error, "\"job\" is not a job id or name") < 0)
                                return -EINVAL;
                        break;
                case F_PID:
                        if (!json_object_is_type(val, json_type_int) || !valid_pid(json_object_get_int64(val))) {
                                *ret_error = "\"pid\" is not a process id";
                                return -EINVAL;
                        }
                        req->pid = (pid_t) json_object_get_int64(val);
                        break;
                case F_PIDS: {
                        size_t n;

                        if (!json_object_is_type(val, json_type_array) || (n = json_object_array_length(val)) == 0 ||
                            n > PROTOCOL_MAX_PIDS) {
                                *ret_error = "\"pids\" must be a list of 1 to 1024 process ids";
                                return -EINVAL;
                        }
                        for (size_t i = 0; i < n; i++) {
                                json_object *p = json_object_array_get_idx(val, i);

                                if (!json_object_is_type(p, json_type_int) || !valid_pid(json_object_get_int64(p))) {
                                        *ret_error = "\"pids\" holds something that is not a process id";
                                        return -EINVAL;
                                }
                                req->pids[i] = (pid_t) json_object_get_int64(p);
                        }
                        req->n_pids = n;
                        break;
                }
                case F_SIGNAL:
                        if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 1 ||
                            json_object_get_int64(val) > 64 || !pw_signal_allowed((int) json_object_get_int64(val))) {
                                *ret_error = "\"signal\" is not the number of " PW_SIGNALS;
                                return -EINVAL;
                        }
                        req->signal = (int) json_object_get_int64(val);
                        break;
                case F_LIMITS: {
                        uint64_t *dst = streq(key, "memory_high")  ? &req->memory_high
                                        : streq(key, "memory_max") ? &req->memory_max
                                                                   : &req->memory_swap_max;

                        /* A size in bytes, at least 1 (0 means not given); json-c reads larger ones as INT64_MAX. */
                        if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 1 ||
                            json_object_get_int64(val) == INT64_MAX) {
                                *ret_error = "a job's memory limit must be a number of bytes";
                                return -EINVAL;
                        }
                        *dst = (uint64_t) json_object_get_int64(val);
                        break;
                }
                case F_ALL:
                        if (!json_object_is_type(val, json_type_boolean)) {
                                *ret_error = "\"all\" must be true or false";
                                return -EINVAL;
                        }
                        req->all = json_object_get_boolean(val);
                        break;
                case F_TREE:
                        if (!json_object_is_type(val, json_type_boolean)) {
                                *ret_error = "\"tree\" must be true or false";
                                return -EINVAL;
                        }
                        req->tree = json_object_get_boolean(val);
                        break;
                }
        }
        if ((seen & command_required[cmd]) != command_required[cmd]) {
                *ret_error = "the request lacks a field its command needs";
                return -EINVAL;
        }
        return 0;
}

int protocol_parse_request(const char *buf, size_t len, struct pw_request *ret, const char **ret_error) {
        struct json_tokener *tok;
        json_object *obj;
        size_t end;
        int r;

        *ret = (struct pw_request){};
        if (len > PROTOCOL_MAX_MESSAGE) {
                *ret_error = "request is larger than 64 KiB";
                return -EINVAL;
        }
        /* Escaped too: json-c cuts strings and keys there ("backup\u0000x" would be read as "backup"). No name
         * holds a backslash, so refusing the escape refuses nothing valid. */
        if (memchr(buf, '\0', len) || memmem(buf, len, "\\u0000", 6)) {
                *ret_error = "request contains a NUL byte";
                return -EINVAL;
        }
        tok = json_tokener_new_ex(PROTOCOL_MAX_DEPTH);
        if (!tok)
                return -ENOMEM;
        obj = json_tokener_parse_ex(tok, buf, (int) len);
        if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
                /* An incomplete object is as malformed as a broken one: the line has ended. */
                json_object_put(obj);
                json_tokener_free(tok);
                *ret_error = "request is not valid JSON";
                return -EINVAL;
        }
        end = json_tokener_get_parse_end(tok);
        while (end < len && strchr(" \t\r", buf[end]))
                end++;
        if (end < len) {
                json_object_put(obj);
                json_tokener_free(tok);
                *ret_error = "request has data after its JSON object";
                return -EINVAL;
        }
        json_tokener_free(tok);
        if (!json_object_is_type(obj, json_type_object)) {
                json_object_put(obj);
                *ret_error = "request is not a JSON object";
                return -EINVAL;
        }
        r = parse_fields(obj, ret, ret_error);
        json_object_put(obj);
        return r;
}

char *protocol_format_request(const struct pw_request *req) {
        json_object *obj = json_object_new_object();
        char *s = NULL;

        if (!obj)
                return NULL;
        json_object_object_add(obj, "command", json_object_new_string(pw_command_to_string(req->command)));
        if (command_fields[req->command] & F_CLASS)
                json_object_object_add(obj, "class", json_object_new_string(req->class));
        if ((command_fields[req->command] & F_NAME) && req->name[0])
                json_object_object_add(obj, "name", json_object_new_string(req->name));
        if (command_fields[req->command] & F_JOB)
                json_object_object_add(obj, "job", json_object_new_string(req->job));
        if (command_fields[req->command] & F_PID)
                json_object_object_add(obj, "pid", json_object_new_int64(req->pid));
        if ((command_fields[req->command] & F_LIMITS) && req->memory_high)
                json_object_object_add(obj, "memory_high", json_object_new_int64((int64_t) req->memory_high));
        if ((command_fields[req->command] & F_LIMITS) && req->memory_max)
                json_object_object_add(obj, "memory_max", json_object_new_int64((int64_t) req->memory_max));
        if ((command_fields[req->command] & F_LIMITS) && req->memory_swap_max)
                json_object_object_add(obj, "memory_swap_max", json_object_new_int64((int64_t) req->memory_swap_max));
        if ((command_fields[req->command] & F_ALL) && req->all)
                json_object_object_add(obj, "all", json_object_new_boolean(true));
        if (command_fields[req->command] & F_SIGNAL)
                json_object_object_add(obj, "signal", json_object_new_int64(req->signal));
        if (command_fields[req->command] & F_PIDS) {
                json_object *a = json_object_new_array();

                for (size_t i = 0; i < req->n_pids; i++)
                        json_object_array_add(a, json_object_new_int64(req->pids[i]));
                json_object_object_add(obj, "pids", a);
                json_object_object_add(obj, "tree", json_object_new_boolean(req->tree));
        }
        if (asprintf(&s, "%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN)) < 0)
                s = NULL;
        json_object_put(obj);
        return s;
}

json_object *protocol_limit_json(uint64_t v) {
        return v == UNITS_MAX ? json_object_new_string("max") : json_object_new_uint64(v);
}
