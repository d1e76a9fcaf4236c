/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The client side of the control protocol (see protocol.h): connect to
 * pagewardend's socket, send one request, read its one-line response.
 * Functions return 0 or a negative errno and print nothing;
 * ctl_strerror() words their errors for a person.
 */

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "protocol.h"

#define CTL_TIMEOUT_SEC 30
/* The longest response taken: status with 4,000 jobs is about 1 MiB; beyond
 * this a daemon that sends without end is cut off. */
#define CTL_MAX_RESPONSE (16 * 1024 * 1024)

struct ctl_response {
        char *line;       /* as received, without its '\n' */
        json_object *obj; /* the parsed object */
        bool ok;          /* its "ok" */
};

void ctl_response_done(struct ctl_response *r);

/* The socket to use: arg (--socket), else $PAGEWARDEN_SOCKET, else the default. */
const char *ctl_socket_path(const char *arg);

/* Connects to the daemon's socket (SOCK_CLOEXEC, with a send timeout). */
int ctl_connect(const char *path, int *ret_fd);

/* Whether a ctl_connect() error means that no daemon listens on the socket. */
static inline bool ctl_not_running(int r) {
        return r == -ENOENT || r == -ECONNREFUSED;
}

/*
 * Sends req and waits up to CTL_TIMEOUT_SEC for the response.  Besides the
 * errno of send() and recv(), fails with -ETIMEDOUT, -ECONNRESET (the daemon
 * closed the connection before a whole line), -EFBIG (a line longer than
 * CTL_MAX_RESPONSE), -EBADMSG (not a JSON object with a boolean "ok"), and
 * -EINTR when cancel_fd (ignored if negative) becomes readable first.
 */
int ctl_exchange(int fd, const struct pw_request *req, int cancel_fd, struct ctl_response *ret);

/* How long a client tries again while the daemon says it is busy (serving as many clients as it can). */
#define CTL_BUSY_RETRY_SEC 30

/*
 * As ctl_exchange() on *fd; while the daemon answers that it is busy (its
 * "busy" is true: it serves as many clients as it takes), waits 50 to 400 ms,
 * connects to socket again (*fd is the new connection) and sends req again,
 * for up to CTL_BUSY_RETRY_SEC.  Then the last answer stands.
 */
int ctl_exchange_retry(const char *socket, int *fd, const struct pw_request *req, int cancel_fd,
                       struct ctl_response *ret);

/* A sentence for an error of ctl_exchange(), such as "pagewardend did not answer within 30 s". */
const char *ctl_strerror(int r);

/* The daemon's "error" of a failed response (a fallback sentence if it has none). */
const char *ctl_response_error(const struct ctl_response *r);
/* Its "diagnostics" (FILE:LINE:COLUMN lines), or NULL. */
const char *ctl_response_diagnostics(const struct ctl_response *r);
