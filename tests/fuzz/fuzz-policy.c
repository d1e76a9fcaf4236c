/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the policy and settings parsers: any input must give
 * either a policy or diagnostics, never a crash, a leak or undefined
 * behaviour; the diagnostics of a file are bounded (at most 100, each
 * short); a valid policy must print to a file that parses to the same
 * policy again.
 *
 *   CC=clang ./configure --enable-fuzzing && make tests/fuzz/fuzz-policy
 *   tests/fuzz/fuzz-policy -max_total_time=60 CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy-print.h"
#include "policy.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct policy_context ctx = {
        .ram_bytes = UINT64_C(16) << 30,
        .sysfs = "/sys",
        .mountinfo = "/proc/self/mountinfo",
        .check_owner = false,
        .resolve_users = false, /* NSS lookups are slow and not what is fuzzed */
};

static void check_reprint(const struct pw_policy *p) {
        struct source src = { .path = (char *) "reprint.yaml" };
        struct pw_policy again = {};
        struct diag_list diags = {};
        size_t n = 0;
        FILE *f = open_memstream(&src.text, &n);

        if (!f)
                abort();
        policy_print(p, f);
        if (fclose(f) != 0)
                abort();
        src.size = n;
        if (policy_parse_source(&ctx, &src, &again, &diags) != 0 || !policy_equal(p, &again)) {
                fprintf(stderr, "reprinted policy does not parse to the same policy:\n%s\n", src.text);
                diag_print(&diags, stderr);
                abort();
        }
        policy_done(&again);
        diag_list_done(&diags);
        free(src.text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct source src = { .path = (char *) "fuzz.yaml" };
        struct pw_policy p = {};
        struct pw_settings s;
        struct diag_list diags = {};
        char *errors;

        /* Sources are NUL-terminated, and may contain NUL bytes before the end. */
        src.text = malloc(size + 1);
        if (!src.text)
                return 0;
        memcpy(src.text, data, size);
        src.text[size] = '\0';
        src.size = size;

        if (policy_parse_source(&ctx, &src, &p, &diags) == 0)
                check_reprint(&p);
        else if (diags.n == 0)
                abort(); /* invalid, but nothing says why */
        if (diags.n > DIAG_MAX_PER_FILE || diags.n > diags.n_errors + diags.n_warnings)
                abort();                 /* the report of one file is bounded, and counts what it does not show */
        errors = diag_to_string(&diags); /* exercises the caret printer */
        if (errors && strlen(errors) > (DIAG_MAX_PER_FILE + 1) * (size_t) (DIAG_MAX_MESSAGE + 4 * DIAG_LINE_WINDOW))
                abort();
        free(errors);
        policy_done(&p);
        diag_list_done(&diags);

        if (settings_init(&s) == 0)
                (void) settings_parse_source(&ctx, &src, &s, &diags);
        settings_done(&s);
        diag_list_done(&diags);
        free(src.text);
        return 0;
}
