/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Who may do what over the control socket (decided from SO_PEERCRED):
 * root may do everything; anyone may read status; a user may place only
 * their own processes, and only into classes that list them in users:.
 * Pure decisions; the daemon supplies the facts.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"
#include "proc.h"

/* The class lists this user (by name or numeric id); root is always allowed. */
bool auth_class_allows(const struct pw_job_class *c, uid_t uid, const char *user_name);

/* The process belongs to uid: every one of its ids is uid (no setuid program of someone else). */
bool auth_owns_process(const struct proc_ids *ids, uid_t uid);
