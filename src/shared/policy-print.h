/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Printing the policy and the settings as the files they came from, every
 * default filled in and sizes in bytes (`pagewardenctl check --print`).
 * What is printed parses again to the same values: the golden tests check
 * it.  Output goes to a stdio stream; write errors are the stream's to
 * report (ferror(), fclose()).  Nothing is allocated.
 */

#include <stdio.h>

#include "policy.h"
#include "settings.h"

/* Writes p as a policy file. */
void policy_print(const struct pw_policy *p, FILE *f);
/* Writes s as a settings file. */
void settings_print(const struct pw_settings *s, FILE *f);
