/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Placing processes for a caller of the control socket: run (the caller's
 * held child, at once) and move (named processes and, with --tree, their
 * descendants).  Who may place what is auth.c's decision, on the facts
 * gathered here; every process is held by a pidfd from its check to its
 * write (place-targets.c).
 *
 * A move can be long: each write of cgroup.procs takes the kernel's
 * threadgroup lock and waits for an RCU grace period, milliseconds each,
 * and a tree may hold 1,024 processes.  So a move is worked on in slices
 * of PLACE_SLICE_USEC on the event loop, at idle priority: the governor,
 * other clients and the watchdog are served between slices, and the
 * caller gets its answer when the move is done (control_reply()).
 *
 * Errors go to the caller as error responses.
 */

#include <json-c/json.h>
#include <sys/socket.h>

#include "api.h"
#include "protocol.h"

/* Running jobs a user other than root may hold at once (pagewardenctl(8)):
 * enough for any real use, few enough that status stays small. */
#define PLACE_MAX_JOBS_PER_USER 64
/* Walks of move --tree after the move, for children forked meanwhile. */
#define PLACE_MOVE_ROUNDS 8
/* A slice of a move: the loop is never held longer (but for one write). */
#define PLACE_SLICE_USEC 5000

json_object *place_run(struct api *api, uint64_t client, const struct ucred *peer, const struct pw_request *req);
/* A response, or CONTROL_LATER: the answer goes to client when the move is done. */
json_object *place_move(struct api *api, uint64_t client, const struct ucred *peer, const struct pw_request *req);
/* Drops the moves under way (the daemon stops; their callers see the connection closed). */
void place_moves_free(struct api *api);
