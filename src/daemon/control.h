/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The control socket: a Unix stream socket (socket-activated, or bound with
 * mode 0660), one request line and one response line per connection.  Each
 * client has its own buffer and a deadline, so that a client that stalls,
 * floods or sends garbage is answered or dropped while others are served.
 * Peer credentials (SO_PEERCRED) go to the handler, which decides.
 *
 * Connections are always accepted, so that none waits behind others in the
 * listen backlog; one over its limits (see control_admit()) is answered at
 * once with an error line and closed.  No number of connections held open
 * by users other than root keeps root out.  Functions return 0 or a negative
 * errno; control_new() logs why it failed.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "protocol.h"

struct control;

/*
 * Returns the response object (owned by the caller of the handler), or
 * CONTROL_LATER when the work goes on in slices on the loop: the handler
 * then answers with control_reply(client) when it is done.
 */
typedef json_object *(*control_handler)(void *userdata, uint64_t client, const struct ucred *peer,
                                        const struct pw_request *req);
extern const char control_later;
#define CONTROL_LATER ((json_object *) &control_later)
/* How long a client waits for an answer given later (pagewardenctl itself waits 30 s). */
#define CONTROL_LATER_TIMEOUT_USEC (UINT64_C(25) * 1000000)

/* A client that sends no whole request, or reads none of its answer, for this long is dropped; the clock
 * starts again when its answer is ready (building a status of 2,000 jobs took 5 s under emulation, and the
 * client was dropped before it could read a byte). */
#define CONTROL_CLIENT_TIMEOUT_USEC (UINT64_C(5) * 1000000)
/* However steadily it reads, an answer is sent within this long of being ready, then the client is dropped. */
#define CONTROL_ANSWER_MAX_USEC (UINT64_C(60) * 1000000)
/* Clients at once, root's included: each has a 64 KiB buffer, so at most 4 MiB. */
#define CONTROL_MAX_CLIENTS 64
/* The last 8 of those only root may take, so that root gets in however many others are connected. */
#define CONTROL_ROOT_RESERVE 8
/*
 * Clients at once of one user other than root: enough for scripts running
 * side by side (a request takes milliseconds), and 7 users are needed to fill
 * what is not reserved for root.
 */
#define CONTROL_MAX_CLIENTS_PER_UID 8
/*
 * sd-event priority of accepting and of root's requests: after the exec holds
 * (SD_EVENT_PRIORITY_IMPORTANT, an exec waits on them), before everything
 * else, so that what users' processes make the daemon do (a flood of execs
 * matching a rule, jobs starting and ending) does not queue in front of
 * root's status.  Other users' requests keep the normal priority.
 */
#define CONTROL_ROOT_PRIORITY (SD_EVENT_PRIORITY_IMPORTANT / 2)
/* A user's refused connections are logged once per 10 s, with the number not logged. */
#define CONTROL_REFUSAL_LOG_INTERVAL_USEC (UINT64_C(10) * 1000000)
/* Users whose refusals are counted apart; the refusals of more users are counted together. */
#define CONTROL_REFUSAL_LOG_USERS 16

/*
 * Listens on path, or on the socket systemd passed (sd_listen_fds).  group:
 * the socket's group (NULL: root's).  Refuses to take over a socket that a
 * running daemon still answers on, and anything at path that is not a socket.
 */
int control_new(sd_event *event, const char *path, const char *group, control_handler handler, void *userdata,
                struct control **ret);
struct control *control_free(struct control *c);
static inline void control_freep(struct control **c) {
        control_free(*c);
}

/* Answers a request answered CONTROL_LATER; -ENOENT (resp freed) if the client is gone. */
int control_reply(struct control *c, uint64_t client, json_object *resp);

/* {"ok": false, "error": message} */
json_object *control_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

enum control_verdict {
        CONTROL_ADMIT,
        CONTROL_REFUSE_USER, /* the user has CONTROL_MAX_CLIENTS_PER_UID clients */
        CONTROL_REFUSE_FULL, /* no slot left that this user may take */
};

/*
 * Whether a new connection of uid is served, while n_clients are connected
 * in all and n_uid_clients of them are uid's.  Root is admitted while fewer
 * than CONTROL_MAX_CLIENTS are connected; any other user while it has fewer
 * than CONTROL_MAX_CLIENTS_PER_UID and fewer than CONTROL_MAX_CLIENTS -
 * CONTROL_ROOT_RESERVE are connected in all.
 */
enum control_verdict control_admit(uid_t uid, unsigned n_clients, unsigned n_uid_clients);

/*
 * The rate limit of the refusal log: a line per user per
 * CONTROL_REFUSAL_LOG_INTERVAL_USEC.  A refusal not logged is counted, and
 * the count is told with the next line logged (its user's, or when the
 * user's entry was taken over, anyone's): none goes unmentioned.  At most
 * CONTROL_REFUSAL_LOG_USERS lines per interval, whatever the number of users.
 */
struct control_ratelimit {
        struct control_ratelimit_entry {
                uid_t uid;
                bool used;
                uint64_t logged_usec; /* when this user's last line was logged */
                unsigned suppressed;  /* this user's refusals not logged since */
        } entries[CONTROL_REFUSAL_LOG_USERS];
        unsigned suppressed; /* refusals not logged, of users without an entry */
};

/*
 * Whether the refusal of uid at now_usec (CLOCK_MONOTONIC) is logged; if so,
 * *ret_suppressed is the number of refusals not logged that the line tells.
 */
bool control_ratelimit_allow(struct control_ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned *ret_suppressed);

/*
 * Gives the bound socket dir_fd/name the mode 0660 and the group gid (the
 * owner stays the daemon's), without following a symlink: fails with
 * -ENOTSOCK if name is not a socket (someone replaced it).
 */
int control_socket_set_access(int dir_fd, const char *name, gid_t gid);
