/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/fanotify.h>

#include "execperm.h"
#include "log.h"
#include "util.h"

struct execperm {
        int fd;
        sd_event_source *source;
        execperm_fn fn;
        void *userdata;
};

static void allow(struct execperm *x, int event_fd) {
        struct fanotify_response resp = { .fd = event_fd, .response = FAN_ALLOW };

        /* Never left unanswered: that would hold the exec for good. */
        if (write(x->fd, &resp, sizeof(resp)) < 0)
                log_warning_errno(errno, "fanotify: cannot answer an exec: %m");
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct execperm *x = userdata;
        char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                const struct fanotify_event_metadata *ev = (const struct fanotify_event_metadata *) buf;

                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                log_warning_errno(errno, "fanotify: %m");
                        return 0;
                }
                for (; FAN_EVENT_OK(ev, n); ev = FAN_EVENT_NEXT(ev, n)) {
                        if (ev->vers != FANOTIFY_METADATA_VERSION || ev->fd < 0)
                                continue;
                        if (ev->mask & FAN_OPEN_EXEC_PERM) {
                                char link[64], exe[PATH_MAX];
                                ssize_t k;

                                snprintf(link, sizeof(link), "/proc/self/fd/%d", ev->fd);
                                k = readlink(link, exe, sizeof(exe) - 1);
                                if (k > 0) {
                                        exe[k] = '\0';
                                        x->fn(x->userdata, ev->pid, exe);
                                }
                                allow(x, ev->fd);
                        }
                        close(ev->fd);
                }
        }
}

int execperm_new(sd_event *event, execperm_fn fn, void *userdata, struct execperm **ret) {
        _cleanup_(execperm_freep) struct execperm *x = calloc(1, sizeof(*x));
        int r;

        assert(event && fn && ret);
        if (!x)
                return -ENOMEM;
        *x = (struct execperm){ .fd = -1, .fn = fn, .userdata = userdata };
        x->fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC | O_LARGEFILE);
        if (x->fd < 0)
                return -errno;
        r = sd_event_add_io(event, &x->source, x->fd, EPOLLIN, on_events, x);
        if (r < 0)
                return r;
        /* Before anything else: an exec waits on it. */
        (void) sd_event_source_set_priority(x->source, SD_EVENT_PRIORITY_IMPORTANT);
        (void) sd_event_source_set_description(x->source, "exec-permission");
        *ret = TAKE_PTR(x);
        return 0;
}

int execperm_mark(struct execperm *x, const char *path) {
        if (fanotify_mark(x->fd, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, AT_FDCWD, path) < 0)
                return -errno;
        return 0;
}

int execperm_clear(struct execperm *x) {
        if (fanotify_mark(x->fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0)
                return -errno;
        return 0;
}

struct execperm *execperm_free(struct execperm *x) {
        if (!x)
                return NULL;
        sd_event_source_disable_unref(x->source);
        closep(&x->fd); /* pending execs are allowed when it closes */
        free(x);
        return NULL;
}
