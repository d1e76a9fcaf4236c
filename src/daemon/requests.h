/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The control socket's requests (control.h hands them over with the
 * caller's credentials): who may do what, then the manager's work.  Every
 * refusal is an error response saying why.
 */

#include <json-c/json.h>
#include <sys/socket.h>

#include "protocol.h"

/* Running jobs a user other than root may hold at once (pagewardenctl(8)):
 * enough for any real use, few enough that status stays small. */
#define REQUESTS_MAX_JOBS_PER_USER 64

/* A control_handler; userdata is the struct manager. */
json_object *requests_handle(void *userdata, const struct ucred *peer, const struct pw_request *req);
