/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "auth.h"
#include "jobs-signal.h"
#include "proc.h"
#include "util.h"

/* Calls fn for each process of the cgroup path, held by a pidfd and checked to be in it still; stops at
 * the first that returns non-zero, and returns that. */
static int each_process(struct cgroup_engine *e, const char *procdir, const char *path,
                        int (*fn)(void *userdata, pid_t pid, int pidfd, const struct proc_ids *ids), void *userdata) {
        _cleanup_free_ char *procs = NULL;
        int r;

        r = cgroup_read_file(e, path, "cgroup.procs", &procs);
        if (r < 0)
                return r;
        for (char *p = procs, *end; *p; p = end) {
                _cleanup_(proc_ids_done) struct proc_ids ids = {};
                _cleanup_close_ int pidfd = -1;
                long pid = strtol(p, &end, 10);

                if (end == p)
                        break;
                if (pid <= 1)
                        continue;
                /* Opened before the check: if the pid is reused after it, the pidfd names the old process,
                 * which is gone, and the signal fails with ESRCH instead of reaching another. */
                pidfd = proc_pidfd_open((pid_t) pid);
                if (pidfd < 0)
                        continue;
                if (proc_ids(procdir, (pid_t) pid, &ids) < 0 || !ids.cgroup || !streq(ids.cgroup, path))
                        continue;
                r = fn(userdata, (pid_t) pid, pidfd, &ids);
                if (r != 0)
                        return r;
        }
        return 0;
}

struct signalling {
        int sig;
        uid_t uid;
        unsigned n, foreign;
};

static int signal_one(void *userdata, pid_t pid, int pidfd, const struct proc_ids *ids) {
        struct signalling *s = userdata;

        if (!auth_owns_process(ids, s->uid))
                s->foreign++;
        else if (syscall(SYS_pidfd_send_signal, pidfd, s->sig, NULL, 0) == 0)
                s->n++;
        return 0;
}

int jobctl_signal(struct cgroup_engine *e, const char *procdir, const char *path, int sig, uid_t uid, unsigned *ret_n,
                  unsigned *ret_foreign) {
        struct signalling s = { .sig = sig, .uid = uid };
        int r = each_process(e, procdir, path, signal_one, &s);

        *ret_n = s.n;
        if (ret_foreign)
                *ret_foreign = s.foreign;
        return r;
}

struct foreign {
        uid_t uid, found;
};

static int find_foreign(void *userdata, pid_t pid, int pidfd, const struct proc_ids *ids) {
        struct foreign *f = userdata;

        if (auth_owns_process(ids, f->uid))
                return 0;
        for (int i = 0; i < 4; i++) /* the first of its ids that is not the caller's */
                if (ids->uid[i] != f->uid) {
                        f->found = ids->uid[i];
                        break;
                }
        return (int) pid;
}

pid_t jobctl_foreign(struct cgroup_engine *e, const char *procdir, const char *path, uid_t uid, uid_t *ret_uid) {
        struct foreign f = { .uid = uid };
        int r;

        if (uid == 0)
                return 0;
        r = each_process(e, procdir, path, find_foreign, &f);
        if (r > 0 && ret_uid)
                *ret_uid = f.found;
        return r;
}

bool jobctl_frozen(struct cgroup_engine *e, const char *path) {
        _cleanup_free_ char *v = NULL;

        return cgroup_read_file(e, path, "cgroup.freeze", &v) >= 0 && v[0] == '1';
}

const char *jobctl_signal_name(int sig, char *buf, size_t len) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, len, "SIG%s", abbrev);
        else
                snprintf(buf, len, "signal %d", sig);
        return buf;
}
