/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devwatch.h"
#include "log.h"
#include "util.h"

struct devwatch {
        sd_event *event;
        int mountinfo_fd, uevent_fd;
        sd_event_source *mountinfo_source, *uevent_source, *settle;
        devwatch_fn changed;
        void *userdata;
};

bool devwatch_uevent_is_block(const char *buf, size_t len) {
        /* "ACTION@DEVPATH\0KEY=VALUE\0...": the header first, then the keys. */
        for (size_t i = 0; i < len;) {
                const char *s = buf + i;
                size_t n = strnlen(s, len - i);

                if (n == 15 && memcmp(s, "SUBSYSTEM=block", 15) == 0)
                        return true;
                i += n + 1;
        }
        return false;
}

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata) {
        struct devwatch *w = userdata;

        w->changed(w->userdata);
        return 0;
}

/* (Re)starts the settle timer: the owner hears of a burst once, after it. */
static void changed(struct devwatch *w) {
        uint64_t now;

        if (sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (w->settle) {
                (void) sd_event_source_set_time(w->settle, now + DEVWATCH_SETTLE_USEC);
                (void) sd_event_source_set_enabled(w->settle, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_add_time(w->event, &w->settle, CLOCK_MONOTONIC, now + DEVWATCH_SETTLE_USEC, 10000, on_settled, w) <
            0) {
                w->changed(w->userdata); /* no timer: tell at once rather than never */
                return;
        }
        (void) sd_event_source_set_enabled(w->settle, SD_EVENT_ONESHOT);
        (void) sd_event_source_set_description(w->settle, "devwatch-settle");
}

static int on_mountinfo(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[4096];

        /* The flag stays raised until the file is read again from its start. */
        if (lseek(fd, 0, SEEK_SET) == 0)
                while (read(fd, buf, sizeof(buf)) > 0)
                        ;
        changed(userdata);
        return 0;
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        char buf[8192];
        bool block = false;

        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

                if (n < 0) {
                        if (errno == ENOBUFS) { /* events were lost: one of them may have been ours */
                                block = true;
                                continue;
                        }
                        break; /* EAGAIN: drained */
                }
                if (devwatch_uevent_is_block(buf, (size_t) n))
                        block = true;
        }
        if (block)
                changed(userdata);
        return 0;
}

static int open_uevent(void) {
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 /* the kernel's own events */ };
        int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

int devwatch_new(sd_event *event, const char *mountinfo, devwatch_fn fn, void *userdata, struct devwatch **ret) {
        struct devwatch *w;
        int r;

        assert(event && mountinfo && fn && ret);
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (struct devwatch){
                .event = event, .mountinfo_fd = -1, .uevent_fd = -1, .changed = fn, .userdata = userdata
        };

        /* Each source is worth having alone: a sandbox without AF_NETLINK still sees mounts. */
        w->mountinfo_fd = open(mountinfo, O_RDONLY | O_CLOEXEC);
        if (w->mountinfo_fd < 0)
                log_warning_errno(errno, "Cannot watch %s for mounts: %m", mountinfo);
        else if ((r = sd_event_add_io(event, &w->mountinfo_source, w->mountinfo_fd, EPOLLPRI, on_mountinfo, w)) < 0)
                log_warning_errno(r, "Cannot watch %s for mounts: %m", mountinfo);
        else
                (void) sd_event_source_set_description(w->mountinfo_source, "devwatch-mountinfo");

        w->uevent_fd = open_uevent();
        if (w->uevent_fd < 0)
                log_warning_errno(w->uevent_fd, "Cannot watch the kernel's device events: %m");
        else if ((r = sd_event_add_io(event, &w->uevent_source, w->uevent_fd, EPOLLIN, on_uevent, w)) < 0)
                log_warning_errno(r, "Cannot watch the kernel's device events: %m");
        else
                (void) sd_event_source_set_description(w->uevent_source, "devwatch-uevent");

        if (!w->mountinfo_source && !w->uevent_source) {
                devwatch_free(w);
                return -ENODEV;
        }
        *ret = w;
        return 0;
}

struct devwatch *devwatch_free(struct devwatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->mountinfo_source);
        sd_event_source_disable_unref(w->uevent_source);
        sd_event_source_disable_unref(w->settle);
        closep(&w->mountinfo_fd);
        closep(&w->uevent_fd);
        free(w);
        return NULL;
}
