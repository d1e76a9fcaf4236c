/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "proc.h"
#include "util.h"

/* /proc/PID/NAME; -ESRCH when the process is gone. */
static int read_proc(const char *procdir, pid_t pid, const char *name, char **ret) {
        _cleanup_free_ char *path = NULL;
        int r;

        if (asprintf(&path, "%s/%d/%s", procdir, (int) pid, name) < 0)
                return -ENOMEM;
        r = read_full_file(path, 64 * 1024, ret, NULL);
        return r == -ENOENT ? -ESRCH : r;
}

/* The status file's "Key:\tvalue" numbers. */
static int read_status(const char *procdir, pid_t pid, struct proc_ids *ret) {
        _cleanup_free_ char *text = NULL;
        const char *p;
        unsigned u[4];
        int ppid, tgid, r;

        r = read_proc(procdir, pid, "status", &text);
        if (r < 0)
                return r;
        p = strstr(text, "\nPPid:");
        if (!p || sscanf(p + 6, "%d", &ppid) != 1)
                return -EINVAL;
        p = strstr(text, "\nTgid:");
        tgid = p && sscanf(p + 6, "%d", &tgid) == 1 ? tgid : (int) pid;
        p = strstr(text, "\nUid:");
        if (!p || sscanf(p + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
                return -EINVAL;
        for (int i = 0; i < 4; i++)
                ret->uid[i] = (uid_t) u[i];
        ret->ppid = (pid_t) ppid;
        ret->tgid = (pid_t) tgid;
        return 0;
}

#define PF_KTHREAD 0x00200000

/* The flags field of /proc/PID/stat (the 9th; the command name may hold spaces and parentheses). */
static int read_kernel_thread(const char *procdir, pid_t pid, bool *ret) {
        _cleanup_free_ char *text = NULL;
        unsigned long flags;
        const char *p;
        int r;

        r = read_proc(procdir, pid, "stat", &text);
        if (r < 0)
                return r;
        p = strrchr(text, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
                return -EINVAL;
        *ret = flags & PF_KTHREAD;
        return 0;
}

/* The "0::/path" line of /proc/PID/cgroup (cgroup v2). */
static int read_cgroup(const char *procdir, pid_t pid, char **ret) {
        _cleanup_free_ char *text = NULL;
        const char *line;
        int r;

        r = read_proc(procdir, pid, "cgroup", &text);
        if (r < 0)
                return r;
        line = startswith(text, "0::") ? text + 3 : strstr(text, "\n0::");
        if (!line)
                return -ENODATA;
        line += line[0] == '\n' ? 4 : 0;
        if (line[0] != '/')
                return -EINVAL;
        *ret = strndup(line + 1, strcspn(line + 1, "\n"));
        return *ret ? 0 : -ENOMEM;
}

int proc_ids(const char *procdir, pid_t pid, struct proc_ids *ret) {
        struct proc_ids ids = {};
        int r;

        r = read_status(procdir, pid, &ids);
        if (r >= 0)
                r = read_kernel_thread(procdir, pid, &ids.kernel_thread);
        if (r >= 0)
                r = read_cgroup(procdir, pid, &ids.cgroup);
        if (r < 0) {
                proc_ids_done(&ids);
                return r;
        }
        *ret = ids;
        return 0;
}

void proc_ids_done(struct proc_ids *ids) {
        ids->cgroup = mfree(ids->cgroup);
}

int proc_rss(const char *procdir, pid_t pid, uint64_t *ret_bytes) {
        _cleanup_free_ char *text = NULL;
        unsigned long long pages;
        long page = sysconf(_SC_PAGESIZE);
        int r;

        r = read_proc(procdir, pid, "statm", &text);
        if (r < 0)
                return r;
        /* "size resident shared ...", in pages. */
        if (sscanf(text, "%*u %llu", &pages) != 1 || page <= 0)
                return -EINVAL;
        *ret_bytes = (uint64_t) pages * (uint64_t) page;
        return 0;
}

int proc_pidfd_open(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? -errno : fd;
}

bool proc_pidfd_alive(int pidfd) {
        return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int proc_start_ticks(const char *procdir, pid_t pid, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        unsigned long long start;
        const char *p;
        int r;

        r = read_proc(procdir, pid, "stat", &text);
        if (r < 0)
                return r;
        /* The 22nd field; the 3rd is the first after the command name. */
        p = strrchr(text, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &start) != 1)
                return -EINVAL;
        *ret = start;
        return 0;
}

uint64_t proc_now_ticks(void) {
        struct timespec ts;
        long hz = sysconf(_SC_CLK_TCK);

        if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0 || hz <= 0)
                return UINT64_MAX;
        return (uint64_t) ts.tv_sec * (uint64_t) hz + (uint64_t) ts.tv_nsec / (1000000000ULL / (uint64_t) hz);
}

int proc_written_other(const char *procdir, int pidfd, pid_t pid, uint64_t before_ticks, struct proc_ids *ret) {
        uint64_t start;
        int r;

        if (proc_pidfd_alive(pidfd))
                return 0; /* it still holds its pid: the write was about it */
        r = proc_start_ticks(procdir, pid, &start);
        if (r == -ESRCH)
                return 0; /* nobody took the pid */
        if (r < 0)
                return r;
        if (start > before_ticks)
                return 0; /* born after the write: the write did not move it */
        r = proc_ids(procdir, pid, ret);
        return r == -ESRCH ? 0 : r < 0 ? r : 1;
}

static int add_children(const char *path, pid_t **list, size_t *n, size_t *allocated) {
        _cleanup_free_ char *text = NULL;
        char *save = NULL;

        if (read_full_file(path, 1024 * 1024, &text, NULL) < 0)
                return 0; /* the thread exited */
        for (char *tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                int child = atoi(tok);

                if (child <= 0)
                        continue;
                if (GROW(*list, *allocated, *n + 1) < 0)
                        return -ENOMEM;
                (*list)[(*n)++] = (pid_t) child;
        }
        return 0;
}

int proc_children(const char *procdir, pid_t pid, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *taskdir = NULL;
        pid_t *list = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (asprintf(&taskdir, "%s/%d/task", procdir, (int) pid) < 0)
                return -ENOMEM;
        d = opendir(taskdir);
        if (!d)
                return errno == ENOENT ? -ESRCH : -errno;
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *path = NULL;

                if (de->d_name[0] == '.')
                        continue;
                if (asprintf(&path, "%s/%s/children", taskdir, de->d_name) < 0)
                        r = -ENOMEM;
                else
                        r = add_children(path, &list, &n, &allocated);
        }
        closedir(d);
        if (r < 0) {
                free(list);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}

int proc_exe(const char *procdir, pid_t pid, char *buf, size_t len) {
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%d/exe", procdir, (int) pid);
        n = readlink(path, buf, len - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        /* A program replaced since it started reads "/usr/bin/borg (deleted)": it still is that program. */
        if (endswith(buf, " (deleted)"))
                buf[n - strlen(" (deleted)")] = '\0';
        return 0;
}

int proc_args(const char *procdir, pid_t pid, char *buf, size_t len, size_t *ret_n) {
        _cleanup_close_ int fd = -1;
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%d/cmdline", procdir, (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, len - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        *ret_n = (size_t) n;
        return 0;
}

int proc_io(const char *procdir, pid_t pid, uint64_t *ret_read, uint64_t *ret_written) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[128];
        bool have_read = false, have_written = false;

        snprintf(path, sizeof(path), "%s/%d/io", procdir, (int) pid);
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? -ESRCH : -errno;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long v;

                if (sscanf(line, "read_bytes: %llu", &v) == 1) {
                        *ret_read = v;
                        have_read = true;
                } else if (sscanf(line, "write_bytes: %llu", &v) == 1) {
                        *ret_written = v;
                        have_written = true;
                }
        }
        return have_read && have_written ? 0 : -EBADMSG;
}
