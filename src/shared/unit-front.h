/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Whether a unit that a protect: entry names is a "front": a oneshot that
 * stays active after its command ran (Type=oneshot, RemainAfterExit=yes),
 * with no process of its own, whose only work is to start other units.
 * Debian's postgresql.service is one (the server runs in
 * postgresql@VERSION-CLUSTER.service): protecting it protects nothing, and
 * status would only ever say it is not running.
 *
 * Asks systemd (PID 1) over the system bus, waiting for its answer: for
 * `pagewardenctl check` and the daemon's load of a policy, not its loop.
 * No logging.
 *
 * Errors: negative errno when PID 1 cannot be asked (see unit_front()).
 */

#include <stddef.h>

/* What to tell the operator of a front unit (for check's warning and the daemon's log). */
void unit_front_sentence(const char *unit, char *buf, size_t len);
/* 1 when unit is a front (*why, len bytes: a sentence for a warning), 0 when not or not loaded, negative
 * errno when systemd cannot be asked (not booted with systemd, no bus). */
int unit_front(const char *unit, char *why, size_t len);
