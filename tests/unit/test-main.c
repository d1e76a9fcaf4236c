/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One runner for every unit suite; TAP on stdout when CK_TAP_LOG_FILE_NAME=- (make check). */
#include <stdlib.h>

#include "common.h"

int main(void) {
        SRunner *sr = srunner_create(units_suite());
        int failed;

        srunner_add_suite(sr, yamltree_suite());
        srunner_add_suite(sr, policy_suite());
        srunner_add_suite(sr, settings_suite());
        srunner_add_suite(sr, policy_print_suite());
        srunner_add_suite(sr, policy_programs_suite());
        srunner_add_suite(sr, device_suite());
        srunner_add_suite(sr, cgroup_discover_suite());
        srunner_add_suite(sr, diag_suite());
        srunner_add_suite(sr, cgroup_values_suite());
        srunner_add_suite(sr, protocol_suite());
        srunner_add_suite(sr, auth_suite());
        srunner_add_suite(sr, proc_suite());
        srunner_add_suite(sr, program_suite());
        srunner_add_suite(sr, governor_suite());
        srunner_add_suite(sr, ledger_suite());
        srunner_add_suite(sr, place_targets_suite());
        srunner_add_suite(sr, rules_suite());
        srunner_add_suite(sr, procevents_suite());
        srunner_add_suite(sr, devwatch_suite());
        srunner_add_suite(sr, protect_suite());
        srunner_add_suite(sr, history_suite());
        srunner_add_suite(sr, appcost_suite());
        srunner_add_suite(sr, evidence_suite());
        srunner_add_suite(sr, jobs_suite());
        srunner_add_suite(sr, cgroup_slots_suite());
        srunner_add_suite(sr, status_suite());
        srunner_add_suite(sr, requests_suite());
        srunner_add_suite(sr, jobs_signal_suite());
        srunner_add_suite(sr, classes_suite());
        srunner_add_suite(sr, cgroup_protect_suite());
        srunner_add_suite(sr, worker_suite());
        srunner_add_suite(sr, loop_suite());
        srunner_add_suite(sr, ctl_print_suite());
        srunner_add_suite(sr, ctl_client_suite());
        srunner_add_suite(sr, control_suite());
        srunner_add_suite(sr, ctl_metrics_suite());
        srunner_add_suite(sr, govern_suite());
        srunner_add_suite(sr, backend_systemd_suite());
        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
