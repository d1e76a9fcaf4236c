/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "control.h"
#include "log.h"
#include "util.h"

struct client {
        struct control *control;
        uint64_t id;
        int fd;
        struct ucred peer;
        sd_event_source *io, *timer;
        char in[PROTOCOL_MAX_MESSAGE + 1];
        size_t in_len;
        /* The answer, kept until it is sent: out is its JSON text, json-c's own (a status of 2,000 jobs is
         * megabytes: not copied), and a newline follows it (out_pos == out_len). */
        json_object *resp;
        const char *out;
        size_t out_len, out_pos;
        uint64_t answer_deadline_usec; /* CLOCK_MONOTONIC: the answer's whole sending, at most */
        struct client *prev, *next;
};

struct control {
        sd_event *event;
        int fd;
        bool activated; /* the socket is systemd's: do not unlink it */
        char *path;
        sd_event_source *accept_source;
        control_handler handler;
        void *userdata;
        struct client *clients;
        unsigned n_clients;
        uint64_t next_id;
        struct control_ratelimit refusals;
};

const char control_later = 0;

json_object *control_error(const char *fmt, ...) {
        json_object *o = json_object_new_object();
        char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        json_object_object_add(o, "ok", json_object_new_boolean(false));
        json_object_object_add(o, "error", json_object_new_string(msg ?: "out of memory"));
        free(msg);
        return o;
}

static void client_free(struct client *c) {
        if (!c)
                return;
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        closep(&c->fd);
        LIST_REMOVE(c->control->clients, c);
        c->control->n_clients--;
        json_object_put(c->resp);
        free(c);
}

/* The answer went on (or starts): the client has CONTROL_CLIENT_TIMEOUT_USEC to read more, within its deadline. */
static void answer_progress(struct client *c) {
        uint64_t now = now_usec(CLOCK_MONOTONIC), next = now + CONTROL_CLIENT_TIMEOUT_USEC;

        (void) sd_event_source_set_time(c->timer, next < c->answer_deadline_usec ? next : c->answer_deadline_usec);
        (void) sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

static int client_flush(struct client *c) {
        while (c->out_pos <= c->out_len) {
                bool text = c->out_pos < c->out_len;
                ssize_t n = send(c->fd, text ? c->out + c->out_pos : "\n", text ? c->out_len - c->out_pos : 1,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                answer_progress(c);
                                return sd_event_source_set_io_events(c->io, EPOLLOUT);
                        }
                        return -errno;
                }
                c->out_pos += (size_t) n;
        }
        /* The response was the explicit end of this conversation. */
        client_free(c);
        return 1;
}

/* resp as a line, consumed; NULL if out of memory. */
static char *response_line(json_object *resp) {
        char *line;

        if (!resp)
                resp = control_error("out of memory");
        if (asprintf(&line, "%s\n", json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN)) < 0)
                line = NULL;
        json_object_put(resp);
        return line;
}

static int client_respond(struct client *c, json_object *resp) {
        int r;

        if (c->resp) { /* answered already (an error while its request was under way): one answer a client */
                json_object_put(resp);
                return 0;
        }
        c->resp = resp ?: control_error("out of memory");
        c->out = c->resp ? json_object_to_json_string_length(c->resp, JSON_C_TO_STRING_PLAIN, &c->out_len) : NULL;
        if (!c->out) {
                client_free(c);
                return -ENOMEM;
        }
        c->out_pos = 0;
        c->answer_deadline_usec = now_usec(CLOCK_MONOTONIC) + CONTROL_ANSWER_MAX_USEC;
        /* No more input is read from this client. */
        (void) sd_event_source_set_io_events(c->io, EPOLLOUT);
        r = client_flush(c);
        if (r < 0)
                client_free(c);
        return r;
}

static void client_handle_line(struct client *c, size_t len) {
        struct pw_request req;
        const char *why = NULL;
        json_object *resp;
        int r;

        r = protocol_parse_request(c->in, len, &req, &why);
        if (r < 0) {
                why = why ?: strerror(-r); /* -ENOMEM says nothing more */
                log_debug("Control: bad request from pid %d uid %u: %s", (int) c->peer.pid, (unsigned) c->peer.uid,
                          why);
                client_respond(c, control_error("%s", why));
                return;
        }
        resp = c->control->handler(c->control->userdata, c->id, &c->peer, &req);
        if (resp != CONTROL_LATER) {
                client_respond(c, resp);
                return;
        }
        /* Nothing more is read; the answer comes within the later deadline. */
        (void) sd_event_source_set_io_events(c->io, 0);
        (void) sd_event_source_set_time_relative(c->timer, CONTROL_LATER_TIMEOUT_USEC);
}

int control_reply(struct control *ctl, uint64_t client, json_object *resp) {
        for (struct client *c = ctl->clients; c; c = c->next)
                if (c->id == client)
                        return client_respond(c, resp) < 0 ? -EIO : 0;
        json_object_put(resp);
        return -ENOENT;
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct client *c = userdata;
        char *nl;
        ssize_t n;

        if (c->out) {
                if (client_flush(c) < 0)
                        client_free(c);
                return 0;
        }
        n = recv(fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                client_free(c);
                return 0;
        }
        if (n == 0) { /* gone before sending a whole request */
                client_free(c);
                return 0;
        }
        c->in_len += (size_t) n;
        nl = memchr(c->in, '\n', c->in_len);
        if (nl) {
                client_handle_line(c, (size_t) (nl - c->in));
                return 0;
        }
        if (c->in_len >= sizeof(c->in)) {
                log_debug("Control: request over 64 KiB from pid %d uid %u, refused", (int) c->peer.pid,
                          (unsigned) c->peer.uid);
                client_respond(c, control_error("request is larger than 64 KiB"));
        }
        return 0;
}

static int on_client_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        struct client *c = userdata;

        log_debug("Control: client pid %d uid %u stalled, dropped", (int) c->peer.pid, (unsigned) c->peer.uid);
        client_free(c);
        return 0;
}

enum control_verdict control_admit(uid_t uid, unsigned n_clients, unsigned n_uid_clients) {
        if (uid == 0)
                return n_clients < CONTROL_MAX_CLIENTS ? CONTROL_ADMIT : CONTROL_REFUSE_FULL;
        if (n_uid_clients >= CONTROL_MAX_CLIENTS_PER_UID)
                return CONTROL_REFUSE_USER;
        if (n_clients >= CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE)
                return CONTROL_REFUSE_FULL;
        return CONTROL_ADMIT;
}

/* uid's entry, or a free or expired one taken over for uid, or NULL. */
static struct control_ratelimit_entry *ratelimit_entry(struct control_ratelimit *rl, uid_t uid, uint64_t now) {
        struct control_ratelimit_entry *take = NULL;

        for (size_t i = 0; i < ELEMENTSOF(rl->entries); i++) {
                struct control_ratelimit_entry *e = &rl->entries[i];

                if (e->used && e->uid == uid)
                        return e;
                if (!take && (!e->used || now - e->logged_usec >= CONTROL_REFUSAL_LOG_INTERVAL_USEC))
                        take = e;
        }
        if (!take)
                return NULL;
        /* The count of the user whose entry is taken over is told with the next line, whoever's. */
        rl->suppressed += take->suppressed;
        *take = (struct control_ratelimit_entry){ .uid = uid, .used = true };
        /* Logged long enough ago: the first refusal is logged. */
        take->logged_usec = now - CONTROL_REFUSAL_LOG_INTERVAL_USEC;
        return take;
}

bool control_ratelimit_allow(struct control_ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned *ret_suppressed) {
        struct control_ratelimit_entry *e = ratelimit_entry(rl, uid, now_usec);

        if (!e) {
                rl->suppressed++;
                return false;
        }
        if (now_usec - e->logged_usec < CONTROL_REFUSAL_LOG_INTERVAL_USEC) {
                e->suppressed++;
                return false;
        }
        *ret_suppressed = e->suppressed + rl->suppressed;
        e->suppressed = rl->suppressed = 0;
        e->logged_usec = now_usec;
        return true;
}

static unsigned clients_of(const struct control *ctl, uid_t uid) {
        unsigned n = 0;

        for (const struct client *c = ctl->clients; c; c = c->next)
                n += c->peer.uid == uid;
        return n;
}

static void log_refusal(struct control *ctl, const struct ucred *peer, const char *why) {
        uint64_t now = 0;
        unsigned suppressed;

        (void) sd_event_now(ctl->event, CLOCK_MONOTONIC, &now);
        if (!control_ratelimit_allow(&ctl->refusals, peer->uid, now, &suppressed))
                return;
        if (suppressed > 0)
                log_warning("Control: refused pid %d uid %u: %s (and %u more refusals not logged in the last %u s)",
                            (int) peer->pid, (unsigned) peer->uid, why, suppressed,
                            (unsigned) (CONTROL_REFUSAL_LOG_INTERVAL_USEC / 1000000));
        else
                log_warning("Control: refused pid %d uid %u: %s", (int) peer->pid, (unsigned) peer->uid, why);
}

/* Answers an error line and closes, without a client's buffer: what a refused connection costs is bounded. */
static void refuse(struct control *ctl, int fd, const struct ucred *peer, enum control_verdict v) {
        _cleanup_free_ char *why = NULL, *line = NULL;
        json_object *err;

        if (v == CONTROL_REFUSE_USER) {
                if (asprintf(&why, "uid %u has %u connections open, the most a user may have; try again later",
                             (unsigned) peer->uid, (unsigned) CONTROL_MAX_CLIENTS_PER_UID) < 0)
                        why = NULL;
        } else if (asprintf(&why, "%u clients are connected, the most pagewardend serves; try again later",
                            ctl->n_clients) < 0)
                why = NULL;
        err = control_error("%s", why ?: "too many connections");
        /* "busy": pagewardenctl tries again a moment later (a burst of cron jobs at midnight). */
        if (err)
                json_object_object_add(err, "busy", json_object_new_boolean(true));
        line = response_line(err);
        /* A new socket's buffer takes the short line whole; if not, the client sees the connection closed. */
        if (line)
                (void) send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        log_refusal(ctl, peer, why ?: "too many connections");
}

static int client_new(struct control *ctl, int fd, const struct ucred *peer) {
        struct client *c = calloc(1, sizeof(*c));
        int r;

        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->control = ctl;
        c->id = ++ctl->next_id;
        c->fd = fd;
        c->peer = *peer;
        LIST_PREPEND(ctl->clients, c);
        ctl->n_clients++;
        r = sd_event_add_io(ctl->event, &c->io, fd, EPOLLIN, on_client_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(ctl->event, &c->timer, CLOCK_MONOTONIC, CONTROL_CLIENT_TIMEOUT_USEC, 0,
                                               on_client_timeout, c);
        if (r < 0) {
                client_free(c);
                return r;
        }
        /* Root's requests go ahead of the events that a user's processes cause (a flood of execs, jobs that
         * start and end); a user's take turns with them, so that a loop of requests cannot starve them. */
        if (peer->uid == 0)
                (void) sd_event_source_set_priority(c->io, CONTROL_ROOT_PRIORITY);
        (void) sd_event_source_set_description(c->io, "control-client");
        (void) sd_event_source_set_description(c->timer, "control-client-timeout");
        return 0;
}

/* Accepts every connection, so that root's never waits behind others in the backlog; refuses those over a limit. */
static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct control *ctl = userdata;
        socklen_t len = sizeof(struct ucred);
        enum control_verdict v;
        struct ucred peer;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        log_warning_errno(errno, "Control: accept failed: %m");
                return 0;
        }
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0) {
                log_warning_errno(errno, "Control: no peer credentials: %m");
                close(cfd);
                return 0;
        }
        v = control_admit(peer.uid, ctl->n_clients, clients_of(ctl, peer.uid));
        if (v != CONTROL_ADMIT) {
                refuse(ctl, cfd, &peer, v);
                return 0;
        }
        r = client_new(ctl, cfd, &peer);
        if (r < 0)
                log_warning_errno(r, "Control: cannot watch client: %m");
        return 0;
}

/* Is a daemon answering on path?  Then we must not take the socket over. */
static bool socket_alive(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
                return false;
        strcpy(sa.sun_path, path);
        return connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
}

static int resolve_group(const char *group, gid_t *ret) {
        struct group *g;
        char *end;

        *ret = 0;
        if (!group)
                return 0;
        g = getgrnam(group);
        if (g) {
                *ret = g->gr_gid;
                return 0;
        }
        errno = 0;
        *ret = (gid_t) strtoul(group, &end, 10);
        if (errno || *end)
                return log_error_errno(ENOENT, "Control: unknown socket group '%s'", group);
        return 0;
}

/* Creates the socket's directory if missing and opens it; *ret_name points into path. */
static int open_socket_dir(const char *path, int *ret_fd, const char **ret_name) {
        _cleanup_free_ char *dir = strdup(path);
        char *slash;
        int fd;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                strcpy(dir, ".");
        else if (slash == dir)
                dir[1] = '\0';
        else {
                *slash = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Control: cannot create %s: %m", dir);
        }
        fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Control: cannot open %s: %m", dir);
        *ret_fd = fd;
        *ret_name = slash ? path + (slash - dir) + 1 : path;
        return 0;
}

/* Removes a socket left by a daemon that was killed; refuses anything else at path. */
static int remove_stale(int dir_fd, const char *name, const char *path) {
        struct stat st;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : log_error_errno(errno, "Control: cannot check %s: %m", path);
        if (!S_ISSOCK(st.st_mode))
                return log_error_errno(EEXIST, "Control: %s exists and is not a socket", path);
        if (socket_alive(path))
                return log_error_errno(EADDRINUSE, "Control: another pagewardend answers on %s", path);
        if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Control: cannot remove the stale socket %s: %m", path);
        return 0;
}

int control_socket_set_access(int dir_fd, const char *name, gid_t gid) {
        _cleanup_close_ int fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        char proc[64];
        struct stat st;

        /* Checked and changed through one O_PATH descriptor: nothing can be swapped in between. */
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        if (st.st_gid != gid && fchownat(fd, "", (uid_t) -1, gid, AT_EMPTY_PATH) < 0)
                return -errno;
        if ((st.st_mode & 07777) == 0660)
                return 0;
        /* Only needed if a default ACL of the directory changed the mode; fchmod() takes no O_PATH descriptor. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return chmod(proc, 0660) < 0 ? -errno : 0;
}

/* The socket is born 0660: its inode's mode and the umask both say so, there is no window with a wider one. */
static int bind_socket(const char *path, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        mode_t old;
        int r = 0;

        if (fd < 0)
                return -errno;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        /* Before bind(), fchmod() sets the mode the socket's file is created with (after, it would not reach it). */
        if (fchmod(fd, 0660) < 0)
                return -errno;
        old = umask(0117);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                r = -errno;
        umask(old);
        if (r < 0)
                return log_error_errno(r, "Control: cannot bind %s: %m", path);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int listen_on(const char *path, const char *group, int *ret_fd) {
        _cleanup_close_ int dir_fd = -1, fd = -1;
        const char *name = NULL;
        gid_t gid;
        int r;

        if (strlen(path) >= sizeof(((struct sockaddr_un *) NULL)->sun_path))
                return -ENAMETOOLONG;
        r = resolve_group(group, &gid);
        if (r < 0)
                return r;
        r = open_socket_dir(path, &dir_fd, &name);
        if (r < 0)
                return r;
        r = remove_stale(dir_fd, name, path);
        if (r < 0)
                return r;
        r = bind_socket(path, &fd);
        if (r < 0)
                return r;
        r = control_socket_set_access(dir_fd, name, gid);
        if (r < 0)
                return log_error_errno(r, "Control: cannot set the mode or group of %s: %m", path);
        if (listen(fd, 16) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The socket systemd made (pagewarden.socket) gets socket_group as well, where the setting names one: the
 * unit's own SocketGroup= would otherwise be the only way, and a setting without effect misleads. */
static int activated_set_group(int fd, const char *group) {
        struct sockaddr_un sa = {};
        socklen_t len = sizeof(sa);
        _cleanup_close_ int dir_fd = -1;
        const char *name = NULL;
        gid_t gid;
        int r;

        if (!group)
                return 0;
        r = resolve_group(group, &gid);
        if (r < 0)
                return r;
        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return log_error_errno(errno, "Control: cannot read the address of the socket systemd passed: %m");
        if (len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] != '/')
                return log_error_errno(EINVAL,
                                       "Control: the socket systemd passed has no path: socket_group '%s' "
                                       "cannot be given to it",
                                       group);
        r = open_socket_dir(sa.sun_path, &dir_fd, &name);
        if (r >= 0)
                r = control_socket_set_access(dir_fd, name, gid);
        if (r < 0)
                return log_error_errno(r, "Control: cannot give %s to socket_group '%s': %m", sa.sun_path, group);
        return 0;
}

int control_new(sd_event *event, const char *path, const char *group, control_handler handler, void *userdata,
                struct control **ret) {
        _cleanup_(control_freep) struct control *c = calloc(1, sizeof(*c));
        int n, r;

        if (!c)
                return -ENOMEM;
        c->fd = -1;
        c->event = event;
        c->handler = handler;
        c->userdata = userdata;
        c->path = strdup(path);
        if (!c->path)
                return -ENOMEM;

        n = sd_listen_fds(true);
        if (n > 1)
                return log_error_errno(EINVAL, "Control: systemd passed %d sockets, expected one", n);
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return log_error_errno(
                                EINVAL, "Control: the socket systemd passed is not a listening Unix stream socket");
                c->fd = SD_LISTEN_FDS_START;
                c->activated = true;
                if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(c->fd, F_SETFD, FD_CLOEXEC) < 0)
                        return -errno;
                r = activated_set_group(c->fd, group);
                if (r < 0)
                        return r;
                log_info("Control: using the socket passed by systemd");
        } else {
                r = listen_on(path, group, &c->fd);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_io(event, &c->accept_source, c->fd, EPOLLIN, on_accept, c);
        if (r < 0)
                return r;
        /* Accepting costs little, and a refusal less: every connection is seen ahead of the events. */
        (void) sd_event_source_set_priority(c->accept_source, CONTROL_ROOT_PRIORITY);
        (void) sd_event_source_set_description(c->accept_source, "control-accept");
        *ret = TAKE_PTR(c);
        return 0;
}

struct control *control_free(struct control *c) {
        if (!c)
                return NULL;
        while (c->clients)
                client_free(c->clients);
        sd_event_source_disable_unref(c->accept_source);
        if (c->fd >= 0) {
                close(c->fd);
                if (!c->activated)
                        unlink(c->path);
        }
        free(c->path);
        free(c);
        return NULL;
}
