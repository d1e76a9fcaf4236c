/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the control protocol's request parser (what the
 * daemon runs on every line a client sends): any input must give either a
 * request that keeps the protocol's promises or a sentence saying why not,
 * never a crash, a leak or undefined behaviour; a request formatted again
 * (as pagewardenctl sends it) must parse to the same request.
 *
 *   CC=clang ./configure --enable-fuzzing && make tests/fuzz/fuzz-protocol
 *   tests/fuzz/fuzz-protocol -dict=tests/fuzz/protocol.dict -max_total_time=60 CORPUS_DIR
 *
 * Seeds: tests/fuzz/protocol-corpus/, one request per file, without '\n'.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool names_valid(const struct pw_request *r) {
        const char *names[] = { r->class, r->name, r->job };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (names[i][0] && policy_name_problem(names[i]))
                        return false;
        return true;
}

static bool takes_job(enum pw_command c) {
        return c == PW_CMD_SHOW || c == PW_CMD_STOP || c == PW_CMD_KILL || c == PW_CMD_FREEZE || c == PW_CMD_THAW;
}

/* A command's request holds none of the fields it does not take. */
static bool only_its_fields(const struct pw_request *r) {
        bool run = r->command == PW_CMD_RUN, move = r->command == PW_CMD_MOVE;

        return (run || move || (!r->class[0] && !r->name[0])) && (takes_job(r->command) || !r->job[0]) &&
               (run || r->pid == 0) && (move || (r->n_pids == 0 && !r->tree)) &&
               (r->command == PW_CMD_KILL || r->signal == 0) &&
               (run || (r->memory_high == 0 && r->memory_max == 0 && r->memory_swap_max == 0)) &&
               (r->command == PW_CMD_LIST || !r->all);
}

/* What protocol.h promises of a parsed request. */
static bool request_valid(const struct pw_request *r) {
        if ((unsigned) r->command >= _PW_CMD_MAX || !names_valid(r) || r->n_pids > PROTOCOL_MAX_PIDS ||
            !only_its_fields(r))
                return false;
        for (size_t i = 0; i < r->n_pids; i++)
                if (r->pids[i] <= 1)
                        return false;
        if (takes_job(r->command) && !r->job[0])
                return false;
        switch (r->command) {
        case PW_CMD_KILL:
                return pw_signal_allowed(r->signal);
        case PW_CMD_RUN:
                return r->class[0] && r->pid > 1;
        case PW_CMD_MOVE:
                return r->class[0] && r->n_pids > 0;
        default:
                return true;
        }
}

/* Field by field: the struct's padding is not part of the request. */
static bool requests_equal(const struct pw_request *a, const struct pw_request *b) {
        return a->command == b->command && streq(a->class, b->class) && streq(a->name, b->name) &&
               streq(a->job, b->job) && a->pid == b->pid && a->n_pids == b->n_pids && a->tree == b->tree &&
               a->signal == b->signal && a->memory_high == b->memory_high && a->memory_max == b->memory_max &&
               a->memory_swap_max == b->memory_swap_max && a->all == b->all &&
               memcmp(a->pids, b->pids, a->n_pids * sizeof(a->pids[0])) == 0;
}

static void check_reformat(const struct pw_request *req) {
        _cleanup_free_ char *line = protocol_format_request(req);
        struct pw_request again;
        const char *why = NULL;
        size_t len;

        if (!line)
                abort(); /* only out of memory, which a fuzzer does not run into */
        len = strlen(line);
        if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) || len - 1 > PROTOCOL_MAX_MESSAGE) {
                fprintf(stderr, "formatted request is not one line:\n%s", line);
                abort();
        }
        if (protocol_parse_request(line, len - 1, &again, &why) != 0 || !requests_equal(req, &again)) {
                fprintf(stderr, "formatted request does not parse to the same request (%s):\n%s", why ?: "differs",
                        line);
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct pw_request req;
        const char *why = NULL;
        int r;

        r = protocol_parse_request((const char *) data, size, &req, &why);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                if (r != -EINVAL || !why || !*why)
                        abort(); /* refused, but the client would not be told why */
                return 0;
        }
        if (!request_valid(&req)) {
                fprintf(stderr, "parsed request breaks the protocol's rules: %s\n", pw_command_to_string(req.command));
                abort();
        }
        check_reformat(&req);
        return 0;
}
