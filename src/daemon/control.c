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
        int fd;
        struct ucred peer;
        sd_event_source *io, *timer;
        char in[PROTOCOL_MAX_MESSAGE + 1];
        size_t in_len;
        char *out;
        size_t out_len, out_pos;
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
};

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
        if (c->prev)
                c->prev->next = c->next;
        else
                c->control->clients = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->control->n_clients--;
        free(c->out);
        free(c);
}

static int client_flush(struct client *c) {
        while (c->out_pos < c->out_len) {
                ssize_t n = send(c->fd, c->out + c->out_pos, c->out_len - c->out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return sd_event_source_set_io_events(c->io, EPOLLOUT);
                        return -errno;
                }
                c->out_pos += (size_t) n;
        }
        /* The response was the explicit end of this conversation. */
        client_free(c);
        return 1;
}

static int client_respond(struct client *c, json_object *resp) {
        const char *s;
        int r;

        if (!resp)
                resp = control_error("out of memory");
        s = json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN);
        if (asprintf(&c->out, "%s\n", s) < 0)
                c->out = NULL;
        json_object_put(resp);
        if (!c->out) {
                client_free(c);
                return -ENOMEM;
        }
        c->out_len = strlen(c->out);
        c->out_pos = 0;
        /* No more input is read from this client. */
        (void) sd_event_source_set_io_events(c->io, EPOLLOUT);
        r = client_flush(c);
        if (r < 0)
                client_free(c);
        return r;
}

static void client_handle_line(struct client *c, size_t len) {
        struct pw_request req;
        const char *why;

        if (protocol_parse_request(c->in, len, &req, &why) < 0) {
                log_debug("Control: bad request from pid %d uid %u: %s", (int) c->peer.pid, (unsigned) c->peer.uid, why);
                client_respond(c, control_error("%s", why));
                return;
        }
        client_respond(c, c->control->handler(c->control->userdata, &c->peer, &req));
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

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct control *ctl = userdata;
        socklen_t len = sizeof(struct ucred);
        struct client *c;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        log_warning_errno(errno, "Control: accept failed: %m");
                return 0;
        }
        if (ctl->n_clients >= CONTROL_MAX_CLIENTS) {
                log_warning("Control: %u clients connected, refusing another", ctl->n_clients);
                close(cfd);
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
                close(cfd);
                return 0;
        }
        c->control = ctl;
        c->fd = cfd;
        c->next = ctl->clients;
        if (c->next)
                c->next->prev = c;
        ctl->clients = c;
        ctl->n_clients++;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &c->peer, &len) < 0) {
                log_warning_errno(errno, "Control: no peer credentials: %m");
                client_free(c);
                return 0;
        }
        r = sd_event_add_io(ctl->event, &c->io, cfd, EPOLLIN, on_client_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(ctl->event, &c->timer, CLOCK_MONOTONIC, CONTROL_CLIENT_TIMEOUT_USEC, 0,
                                               on_client_timeout, c);
        if (r < 0) {
                log_warning_errno(r, "Control: cannot watch client: %m");
                client_free(c);
                return 0;
        }
        (void) sd_event_source_set_description(c->io, "control-client");
        (void) sd_event_source_set_description(c->timer, "control-client-timeout");
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

static int listen_on(const char *path, const char *group, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *dir = strdup(path);
        char *slash;
        struct stat st;
        mode_t old;
        gid_t gid = 0;

        if (!dir)
                return -ENOMEM;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        if (group) {
                struct group *g = getgrnam(group);
                char *end;

                if (g)
                        gid = g->gr_gid;
                else {
                        errno = 0;
                        gid = (gid_t) strtoul(group, &end, 10);
                        if (errno || *end)
                                return log_error_errno(ENOENT, "Control: unknown socket group '%s'", group);
                }
        }
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Control: cannot create %s: %m", dir);
        }
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode))
                        return log_error_errno(EEXIST, "Control: %s exists and is not a socket", path);
                if (socket_alive(path))
                        return log_error_errno(EADDRINUSE, "Control: another pagewardend answers on %s", path);
                unlink(path); /* stale, from a daemon that was killed */
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        old = umask(0117); /* the socket is born 0660: no window with a wider mode */
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;

                umask(old);
                return log_error_errno(r, "Control: cannot bind %s: %m", path);
        }
        umask(old);
        if (chmod(path, 0660) < 0 || chown(path, 0, gid) < 0)
                return log_error_errno(errno, "Control: cannot set the mode or owner of %s: %m", path);
        if (listen(fd, 16) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
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
                        return log_error_errno(EINVAL, "Control: the socket systemd passed is not a listening Unix stream socket");
                c->fd = SD_LISTEN_FDS_START;
                c->activated = true;
                if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(c->fd, F_SETFD, FD_CLOEXEC) < 0)
                        return -errno;
                log_info("Control: using the socket passed by systemd");
        } else {
                r = listen_on(path, group, &c->fd);
                if (r < 0)
                        return r;
        }
        r = sd_event_add_io(event, &c->accept_source, c->fd, EPOLLIN, on_accept, c);
        if (r < 0)
                return r;
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
