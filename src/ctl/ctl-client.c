/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "ctl-client.h"
#include "settings.h"
#include "util.h"
#include <stdlib.h>

void ctl_response_done(struct ctl_response *r) {
        free(r->line);
        json_object_put(r->obj);
        *r = (struct ctl_response){};
}

const char *ctl_socket_path(const char *arg) {
        const char *e;

        if (arg)
                return arg;
        e = getenv("PAGEWARDEN_SOCKET");
        return e && *e ? e : PW_DEFAULT_SOCKET;
}

int ctl_connect(const char *path, int *ret_fd) {
        const struct timeval timeout = { .tv_sec = CTL_TIMEOUT_SEC };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        size_t l = strlen(path);

        if (l == 0)
                return -ENOENT;
        if (l >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, l);

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* Bounds connect() (a full backlog) and send(); ctl_exchange() bounds the wait for the answer. */
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + l + 1)) <
            0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int send_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? -ETIMEDOUT : errno == EPIPE ? -ECONNRESET : -errno;
                }
                buf += n;
                len -= (size_t) n;
        }
        return 0;
}

static int64_t now_msec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads up to the first '\n'; returns the line, NUL-terminated, without it. */
static int receive_line(int fd, int cancel_fd, char **ret, size_t *ret_len) {
        const int64_t deadline = now_msec() + CTL_TIMEOUT_SEC * 1000;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, allocated = 0;

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = fd, .events = POLLIN },
                        { .fd = cancel_fd, .events = POLLIN },
                };
                int64_t left = deadline - now_msec();
                char *nl;
                ssize_t n;
                int k;

                if (left <= 0)
                        return -ETIMEDOUT;
                k = poll(p, cancel_fd >= 0 ? 2 : 1, (int) left);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -ETIMEDOUT;
                if (cancel_fd >= 0 && p[1].revents)
                        return -EINTR;

                /* Room for one byte more than the limit (to tell a full line from a longer one) and a NUL. */
                if (GROW(buf, allocated,
                         len + 64 * 1024 < CTL_MAX_RESPONSE + 2 ? len + 64 * 1024 : CTL_MAX_RESPONSE + 2) < 0)
                        return -ENOMEM;
                n = recv(fd, buf + len, allocated - len - 1, 0);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                nl = memchr(buf + len, '\n', (size_t) n);
                len += (size_t) n;
                if (nl) {
                        len = (size_t) (nl - buf);
                        if (len > CTL_MAX_RESPONSE)
                                return -EFBIG;
                        buf[len] = '\0';
                        *ret_len = len;
                        *ret = TAKE_PTR(buf);
                        return 0;
                }
                if (len > CTL_MAX_RESPONSE)
                        return -EFBIG;
        }
}

static int parse_response(const char *line, size_t len, json_object **ret_obj, bool *ret_ok) {
        struct json_tokener *tok;
        json_object *obj, *ok;
        size_t end;

        if (memchr(line, '\0', len))
                return -EBADMSG;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        obj = json_tokener_parse_ex(tok, line, (int) len);
        if (!obj || json_tokener_get_error(tok) != json_tokener_success) {
                json_object_put(obj);
                json_tokener_free(tok);
                return -EBADMSG;
        }
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        while (end < len && strchr(" \t\r", line[end]))
                end++;
        if (end < len || !json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, "ok", &ok) ||
            !json_object_is_type(ok, json_type_boolean)) {
                json_object_put(obj);
                return -EBADMSG;
        }
        *ret_ok = json_object_get_boolean(ok);
        *ret_obj = obj;
        return 0;
}

int ctl_exchange(int fd, const struct pw_request *req, int cancel_fd, struct ctl_response *ret) {
        _cleanup_free_ char *request = NULL, *line = NULL;
        json_object *obj;
        size_t len = 0;
        bool ok;
        int r, k;

        request = protocol_format_request(req);
        if (!request)
                return -ENOMEM;
        r = send_all(fd, request, strlen(request));
        /* A daemon that refused the connection at once (too many open) closed it after an error line: that
         * line, already here, says why better than the failed send. */
        if (r < 0 && r != -EPIPE && r != -ECONNRESET)
                return r;
        k = receive_line(fd, cancel_fd, &line, &len);
        if (k < 0)
                return r < 0 ? r : k;
        r = parse_response(line, len, &obj, &ok);
        if (r < 0)
                return r;
        *ret = (struct ctl_response){ .line = TAKE_PTR(line), .obj = obj, .ok = ok };
        return 0;
}

static bool busy(const struct ctl_response *r) {
        json_object *v;

        return !r->ok && json_object_object_get_ex(r->obj, "busy", &v) && json_object_is_type(v, json_type_boolean) &&
               json_object_get_boolean(v);
}

int ctl_exchange_retry(const char *socket, int *fd, const struct pw_request *req, int cancel_fd,
                       struct ctl_response *ret) {
        struct timespec t0, t;
        unsigned wait_ms = 50;
        int r;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
                struct pollfd p = { .fd = cancel_fd, .events = POLLIN };

                r = ctl_exchange(*fd, req, cancel_fd, ret);
                if (r < 0 || !busy(ret))
                        return r;
                clock_gettime(CLOCK_MONOTONIC, &t);
                if (t.tv_sec - t0.tv_sec >= CTL_BUSY_RETRY_SEC)
                        return 0;
                /* Spread out, so that a hundred clients refused together do not come back together. */
                if (poll(&p, cancel_fd >= 0 ? 1 : 0, (int) (wait_ms / 2 + (unsigned) random() % wait_ms)) > 0)
                        return -EINTR;
                wait_ms = wait_ms * 2 > 400 ? 400 : wait_ms * 2;
                ctl_response_done(ret);
                closep(fd);
                r = ctl_connect(socket, fd);
                if (r < 0)
                        return r;
        }
}

const char *ctl_strerror(int r) {
        switch (r) {
        case -ETIMEDOUT:
                return "pagewardend did not answer within 30 s";
        case -ECONNRESET:
                return "pagewardend closed the connection without answering";
        case -EFBIG:
                return "the response from pagewardend is larger than 16 MiB";
        case -EBADMSG:
                return "malformed response from pagewardend";
        case -ENOMEM:
                return "out of memory";
        default:
                return strerror(-r);
        }
}

const char *ctl_response_error(const struct ctl_response *r) {
        json_object *v;

        if (json_object_object_get_ex(r->obj, "error", &v) && json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        return "pagewardend refused the request without saying why";
}

const char *ctl_response_diagnostics(const struct ctl_response *r) {
        json_object *v;

        if (json_object_object_get_ex(r->obj, "diagnostics", &v) && json_object_is_type(v, json_type_string) &&
            json_object_get_string_len(v) > 0)
                return json_object_get_string(v);
        return NULL;
}
