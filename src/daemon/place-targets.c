/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>

#include "place-targets.h"
#include "proc.h"
#include "util.h"

void place_targets_init(struct place_targets *t, const char *procdir, const struct auth_caller *caller) {
        *t = (struct place_targets){ .procdir = procdir, .caller = caller };
}

void place_targets_done(struct place_targets *t) {
        for (size_t i = 0; i < t->n; i++) {
                closep(&t->list[i].pidfd);
                free(t->list[i].cgroup);
        }
        free(t->list);
        *t = (struct place_targets){};
}

static const struct target *find(const struct place_targets *t, pid_t pid) {
        for (size_t i = 0; i < t->n; i++)
                if (t->list[i].pid == pid)
                        return &t->list[i];
        return NULL;
}

/* Reads and checks the process the pidfd holds; the pidfd proves the reads were about it. */
static int check(struct place_targets *t, pid_t pid, int pidfd, struct proc_ids *ids, char *why, size_t len) {
        int r = proc_ids(t->procdir, pid, ids);

        if (r >= 0 && !proc_pidfd_alive(pidfd))
                r = -ESRCH; /* it exited while we read: what we read may be another's */
        if (r == -ESRCH) {
                snprintf(why, len, "does not exist");
                return r;
        }
        if (r < 0) {
                snprintf(why, len, "cannot be read: %s", strerror(-r));
                return r;
        }
        return auth_may_place(t->caller, pid, ids, why, len) ? 0 : -EPERM;
}

/* why, completing "process PID ...", becomes the whole sentence. */
static int refuse(pid_t pid, int r, char *why, size_t len) {
        char sentence[256];

        snprintf(sentence, sizeof(sentence), "process %d %s", (int) pid, why);
        snprintf(why, len, "%s", sentence);
        return r;
}

int place_targets_add(struct place_targets *t, pid_t pid, char *why, size_t len) {
        _cleanup_close_ int pidfd = -1;
        struct proc_ids ids = {};
        int r;

        assert(t && why);
        if (find(t, pid))
                return 0;
        if (t->n >= TARGETS_MAX) {
                snprintf(why, len, "is one too many: at most %d processes are moved at once", TARGETS_MAX);
                return refuse(pid, -E2BIG, why, len);
        }
        pidfd = proc_pidfd_open(pid);
        if (pidfd == -EINVAL) {
                /* Not a process: a thread's id (pidfds name processes).  Say which and why. */
                r = proc_ids(t->procdir, pid, &ids);
                if (r < 0)
                        snprintf(why, len, "does not exist");
                else if (auth_may_place(t->caller, pid, &ids, why, len))
                        snprintf(why, len, "is a thread: name its process");
                proc_ids_done(&ids);
                return refuse(pid, -EPERM, why, len);
        }
        if (pidfd < 0) {
                if (pidfd == -ESRCH)
                        snprintf(why, len, "does not exist");
                else
                        snprintf(why, len, "cannot be held: %s", strerror(-pidfd));
                return refuse(pid, pidfd, why, len);
        }
        r = check(t, pid, pidfd, &ids, why, len);
        if (r >= 0 && GROW(t->list, t->allocated, t->n + 1) < 0)
                r = -ENOMEM;
        if (r < 0) {
                proc_ids_done(&ids);
                return refuse(pid, r, why, len);
        }
        t->list[t->n++] = (struct target){ .pid = pid, .pidfd = TAKE_FD(pidfd), .cgroup = TAKE_PTR(ids.cgroup) };
        return 0;
}

/* The children of the process at index i, each added (checked). */
static int add_children_of(struct place_targets *t, size_t i, char *why, size_t len) {
        _cleanup_free_ pid_t *children = NULL;
        size_t n = 0;
        int r = proc_children(t->procdir, t->list[i].pid, &children, &n);

        if (r == -ESRCH)
                return 0; /* it exited: its children were reparented, not ours to chase */
        if (r < 0) {
                snprintf(why, len, "has children that cannot be listed: %s", strerror(-r));
                return refuse(t->list[i].pid, r, why, len);
        }
        for (size_t k = 0; k < n; k++) {
                r = place_targets_add(t, children[k], why, len);
                if (r < 0 && r != -ESRCH) /* a child that exited meanwhile is no matter */
                        return r;
        }
        return 0;
}

int place_targets_walk(struct place_targets *t, size_t *cursor, size_t max, char *why, size_t len) {
        /* Breadth first: the list grows while it is walked. */
        for (size_t done = 0; *cursor < t->n && done < max; (*cursor)++, done++) {
                int r = add_children_of(t, *cursor, why, len);

                if (r < 0)
                        return r;
        }
        return *cursor >= t->n;
}

int place_targets_add_descendants(struct place_targets *t, char *why, size_t len) {
        size_t cursor = 0;
        int r;

        while ((r = place_targets_walk(t, &cursor, SIZE_MAX, why, len)) == 0)
                ;
        return r < 0 ? r : 0;
}

bool place_targets_alive(const struct place_targets *t, pid_t pid) {
        const struct target *x = find(t, pid);

        return x && proc_pidfd_alive(x->pidfd);
}

int place_targets_pidfd(const struct place_targets *t, pid_t pid) {
        const struct target *x = find(t, pid);

        return x ? x->pidfd : -1;
}

int place_targets_pids(const struct place_targets *t, size_t first, const char *cgroup, pid_t **ret, size_t *ret_n) {
        pid_t *pids = calloc(t->n + 1, sizeof(pid_t));
        size_t n = 0;

        if (!pids)
                return -ENOMEM;
        for (size_t i = first; i < t->n; i++)
                if (proc_pidfd_alive(t->list[i].pidfd) && !(cgroup && streq(t->list[i].cgroup, cgroup)))
                        pids[n++] = t->list[i].pid;
        *ret = pids;
        *ret_n = n;
        return 0;
}
