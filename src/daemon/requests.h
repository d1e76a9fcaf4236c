/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The control socket's requests (control.h hands them over with the
 * caller's credentials): who may do what, then the manager's work.  Every
 * refusal is an error response saying why.
 */

#include <json-c/json.h>
#include <stdint.h>
#include <sys/socket.h>

#include "protocol.h"

/* A control_handler; userdata is the struct manager. */
json_object *requests_handle(void *userdata, uint64_t client, const struct ucred *peer, const struct pw_request *req);
