/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * suggest: what observation found (the daemon's "suspects", each over the
 * episodes kept) as a line of evidence each, then a policy file that would
 * place them; with policy_only, the policy file alone (nothing when there
 * is nothing to place).  The file uses class names the running policy does
 * not (unplaced, unplaced-2...), names users as this host does, and is
 * valid for `pagewardenctl check` as printed.  Returns 0, or -ENOMEM.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

int ctl_print_suggest(FILE *f, json_object *resp, bool policy_only);
