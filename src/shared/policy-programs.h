/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether the programs that exe: rules name can match on this host, said
 * where the policy names them: a program that is not installed (a typo
 * stays silent forever otherwise), is not executable, is a script whose
 * interpreter is missing, or is a link to a multi-call program whose
 * processes cannot be told apart (program_problem() in program.h).  The
 * policy parser calls it for each exe: entry when its context asks
 * (policy_context.check_programs: `pagewardenctl check`, `pagewardend
 * --check`).
 *
 * A warning, never an error: a policy deployed before its program is
 * installed must still load.  Reads the file system; no logging.
 * Returns 0, or -ENOMEM (then the warning may be lost: diags->oom).
 */

#include "diag.h"
#include "policy.h"

/* Warns at entry e of an exe: list of src when the program it names cannot match.  Nothing is said of a
 * program that cannot be inspected (a directory this user may not search): the daemon, as root, says it. */
int policy_check_program(const struct source *src, const struct pw_pattern *e, struct diag_list *diags);
