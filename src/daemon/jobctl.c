/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jobctl.h"
#include "proc.h"
#include "util.h"

int jobctl_signal(struct cgroup_engine *e, const char *procdir, const char *path, int sig, unsigned *ret_n) {
        _cleanup_free_ char *procs = NULL;
        unsigned n = 0;
        int r;

        *ret_n = 0;
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
                if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
                        n++;
        }
        *ret_n = n;
        return 0;
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
