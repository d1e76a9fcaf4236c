/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>

#include "execperm.h"
#include "log.h"
#include "util.h"

/* A directory that holds marked programs, watched for their replacement. */
struct execperm_dir {
        char *path;
        sd_event_source *watch;
        struct execperm *x;
};

struct execperm_hold {
        struct execperm *x;
        int fd;                    /* the event's; -1 once answered at the deadline */
        sd_event_source *deadline; /* EXECPERM_DEADLINE_USEC after the exec */
        struct execperm_hold *prev, *next;
};

struct execperm {
        struct execperm_hold *holds; /* taken by the caller, not answered yet */
        uint64_t late;               /* execs answered at their deadline, before their job was there */
        sd_event *event;
        int fd;
        sd_event_source *source;
        execperm_fn fn;
        void *userdata;
        char **marked; /* the paths marked */
        size_t n_marked, allocated_marked;
        struct execperm_dir **dirs; /* each allocated alone: its address is its watch's userdata */
        size_t n_dirs, allocated_dirs;
};

static void allow(struct execperm *x, int event_fd) {
        struct fanotify_response resp = { .fd = event_fd, .response = FAN_ALLOW };

        /* Never left unanswered: that would hold the exec for good. */
        if (write(x->fd, &resp, sizeof(resp)) < 0)
                log_warning_errno(errno, "fanotify: cannot answer an exec: %m");
}

/* Lets the exec go on (once). */
static void hold_release(struct execperm_hold *h) {
        if (h->fd < 0)
                return;
        allow(h->x, h->fd);
        closep(&h->fd);
        h->deadline = sd_event_source_disable_unref(h->deadline);
}

/* Answers (allow) and frees h. */
void execperm_answer(struct execperm_hold *h) {
        if (!h)
                return;
        hold_release(h);
        LIST_REMOVE(h->x->holds, h);
        free(h);
}

/* The job is not there yet: the exec goes on now and is placed just after (the hold stays its caller's). */
static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        struct execperm_hold *h = userdata;

        h->x->late++;
        hold_release(h);
        return 0;
}

/* Asks the caller about pid's exec; true if it took the hold (it answers later). */
static bool ask(struct execperm *x, int event_fd, pid_t pid, const char *exe) {
        struct execperm_hold *h = calloc(1, sizeof(*h)), *taken;

        if (h)
                *h = (struct execperm_hold){ .x = x, .fd = event_fd };
        taken = h;
        x->fn(x->userdata, pid, exe, &taken);
        if (taken || !h) {
                free(h);
                return false;
        }
        LIST_PREPEND(x->holds, h);
        /* Without a timer the exec would wait for the job however long that takes: answered now instead. */
        if (sd_event_add_time_relative(x->event, &h->deadline, CLOCK_MONOTONIC, EXECPERM_DEADLINE_USEC, 0, on_deadline,
                                       h) < 0)
                hold_release(h);
        else
                (void) sd_event_source_set_description(h->deadline, "exec-deadline");
        return true;
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
                                        if (ask(x, ev->fd, ev->pid, exe))
                                                continue; /* answered later, its fd closed then */
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
        *x = (struct execperm){ .event = event, .fd = -1, .fn = fn, .userdata = userdata };
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

/* A file was created or renamed into a watched directory: an upgrade replaced a marked program? */
static int on_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        struct execperm_dir *d = userdata;
        struct execperm *x = d->x;
        _cleanup_free_ char *path = NULL;

        if (!ev->len || !(path = path_join(d->path, ev->name)))
                return 0;
        for (size_t i = 0; i < x->n_marked; i++)
                if (streq(x->marked[i], path) &&
                    fanotify_mark(x->fd, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, AT_FDCWD, path) >= 0)
                        log_info("%s was installed or replaced: marked for exec permission events", path);
        return 0;
}

static int watch_dir(struct execperm *x, const char *path) {
        _cleanup_free_ char *dir = strndup(path, (size_t) (strrchr(path, '/') - path));
        struct execperm_dir *d;
        int r;

        if (!dir)
                return -ENOMEM;
        if (!dir[0])
                return 0; /* a program in / */
        for (size_t i = 0; i < x->n_dirs; i++)
                if (streq(x->dirs[i]->path, dir))
                        return 0;
        if (GROW(x->dirs, x->allocated_dirs, x->n_dirs + 1) < 0 || !(d = calloc(1, sizeof(*d))))
                return -ENOMEM;
        *d = (struct execperm_dir){ .path = TAKE_PTR(dir), .x = x };
        r = sd_event_add_inotify(x->event, &d->watch, d->path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR, on_dir, d);
        if (r < 0) {
                free(d->path);
                free(d);
                return r;
        }
        x->dirs[x->n_dirs++] = d;
        return 0;
}

int execperm_mark(struct execperm *x, const char *path) {
        int r = 0, k;
        char *copy;

        assert(x && path && path[0] == '/');
        /* A program not installed yet is marked when it appears (the directory is watched). */
        if (fanotify_mark(x->fd, FAN_MARK_ADD, FAN_OPEN_EXEC_PERM, AT_FDCWD, path) < 0)
                r = -errno;
        copy = strdup(path);
        if (!copy || GROW(x->marked, x->allocated_marked, x->n_marked + 1) < 0) {
                free(copy);
                return -ENOMEM;
        }
        x->marked[x->n_marked++] = copy;
        k = watch_dir(x, path);
        return r ?: k;
}

static void forget(struct execperm *x) {
        for (size_t i = 0; i < x->n_marked; i++)
                free(x->marked[i]);
        x->n_marked = 0;
        for (size_t i = 0; i < x->n_dirs; i++) {
                sd_event_source_disable_unref(x->dirs[i]->watch);
                free(x->dirs[i]->path);
                free(x->dirs[i]);
        }
        x->n_dirs = 0;
}

int execperm_clear(struct execperm *x) {
        forget(x);
        if (fanotify_mark(x->fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0)
                return -errno;
        return 0;
}

struct execperm *execperm_free(struct execperm *x) {
        if (!x)
                return NULL;
        while (x->holds) { /* closing x->fd would allow them too; their fds must close */
                struct execperm_hold *h = x->holds;

                x->holds = h->next;
                hold_release(h);
                free(h);
        }
        forget(x);
        free(x->marked);
        free(x->dirs);
        sd_event_source_disable_unref(x->source);
        closep(&x->fd); /* pending execs are allowed when it closes */
        free(x);
        return NULL;
}
