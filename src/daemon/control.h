/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The control socket: a Unix stream socket (socket-activated, or bound with
 * mode 0660), one request line and one response line per connection.  Each
 * client has its own buffer and a deadline, so that a client that stalls,
 * floods or sends garbage is answered or dropped while others are served.
 * Peer credentials (SO_PEERCRED) go to the handler, which decides.
 */

#include <json-c/json.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "protocol.h"

struct control;

/* Returns the response object (owned by the caller of the handler). */
typedef json_object *(*control_handler)(void *userdata, const struct ucred *peer, const struct pw_request *req);

#define CONTROL_CLIENT_TIMEOUT_USEC (UINT64_C(5) * 1000000)
#define CONTROL_MAX_CLIENTS 64

/*
 * Listens on path, or on the socket systemd passed (sd_listen_fds).  group:
 * the socket's group (NULL: root's).  Refuses to take over a socket that a
 * running daemon still answers on.
 */
int control_new(sd_event *event, const char *path, const char *group, control_handler handler, void *userdata,
                struct control **ret);
struct control *control_free(struct control *c);
static inline void control_freep(struct control **c) {
        control_free(*c);
}

/* {"ok": false, "error": message} */
json_object *control_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
