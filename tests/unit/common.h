/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <check.h>
#include <json-c/json.h>

#include "diag.h"
#include "policy.h"
#include "settings.h"

Suite *units_suite(void);
Suite *yamltree_suite(void);
Suite *policy_suite(void);
Suite *settings_suite(void);
Suite *policy_print_suite(void);
Suite *policy_programs_suite(void);
Suite *device_suite(void);
Suite *cgroup_discover_suite(void);
Suite *diag_suite(void);
Suite *cgroup_values_suite(void);
Suite *protocol_suite(void);
Suite *auth_suite(void);
Suite *proc_suite(void);
Suite *program_suite(void);
Suite *governor_suite(void);
Suite *ledger_suite(void);
Suite *place_targets_suite(void);
Suite *rules_suite(void);
Suite *procevents_suite(void);
Suite *devwatch_suite(void);
Suite *protect_suite(void);
Suite *history_suite(void);
Suite *appcost_suite(void);
Suite *evidence_suite(void);
Suite *jobs_suite(void);
Suite *cgroup_slots_suite(void);
Suite *status_suite(void);
Suite *requests_suite(void);
Suite *jobs_signal_suite(void);
Suite *classes_suite(void);
Suite *cgroup_protect_suite(void);
Suite *worker_suite(void);
Suite *loop_suite(void);
Suite *ctl_print_suite(void);
Suite *ctl_client_suite(void);
Suite *control_suite(void);
Suite *ctl_metrics_suite(void);
Suite *govern_suite(void);
Suite *backend_systemd_suite(void);

/* A context that touches nothing of the machine but the file system: 16 GiB of RAM. */
#define TEST_RAM (UINT64_C(16) << 30)
struct policy_context test_context(void);

/* The pidfd of a child that has ended and been reaped: its pid is free for reuse. */
int dead_pidfd(void);

/* A fresh temporary directory (removed by tmpdir_cleanup). */
/* An answer as a client reads it: its text (as control.c sends it) parsed again.  Takes o.  The status answers'
 * jobs are written only when the answer is serialized (status.c). */
json_object *json_as_sent(json_object *o);

char *tmpdir_new(void);
void tmpdir_cleanup(char *dir);
/* Writes text to dir/name (creating parent directories); returns the path. */
char *write_file(const char *dir, const char *name, const char *text);

/* Parses text as the policy file NAME; keeps the diagnostics. */
struct parse_result {
        int r;
        struct pw_policy policy;
        struct diag_list diags;
        char *errors; /* all diagnostics, printed */
};
void parse_policy(const char *text, struct parse_result *ret);
void parse_policy_ctx(const struct policy_context *ctx, const char *text, struct parse_result *ret);
void parse_result_done(struct parse_result *res);

/* Asserts that parsing text fails with a diagnostic at line:column containing needle. */
#define assert_policy_error(text, line, column, needle)                                                           \
        do {                                                                                                      \
                struct parse_result _res;                                                                         \
                parse_policy((text), &_res);                                                                      \
                ck_assert_int_eq(_res.r, -EINVAL);                                                                \
                ck_assert_msg(has_diag(&_res.diags, (line), (column), (needle)), "expected %u:%u '%s', got:\n%s", \
                              (unsigned) (line), (unsigned) (column), (needle), _res.errors);                     \
                parse_result_done(&_res);                                                                         \
        } while (0)

bool has_diag(const struct diag_list *l, unsigned line, unsigned column, const char *needle);

/* Parses text as the settings file path (defaults first); keeps the diagnostics. */
struct settings_result {
        int r;
        struct pw_settings s;
        struct diag_list diags;
        char *errors; /* all diagnostics, printed */
};
void parse_settings(const char *path, const char *text, struct settings_result *ret);
void settings_result_done(struct settings_result *res);
