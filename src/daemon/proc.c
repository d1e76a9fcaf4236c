/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <stdio.h>

#include "proc.h"
#include "util.h"

int proc_ids(const char *procdir, pid_t pid, struct proc_ids *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *p;
        unsigned u[4];
        int ppid, r;

        if (asprintf(&path, "%s/%d/status", procdir, (int) pid) < 0)
                return -ENOMEM;
        r = read_full_file(path, 64 * 1024, &text, NULL);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        p = strstr(text, "\nPPid:");
        if (!p || sscanf(p + 6, "%d", &ppid) != 1)
                return -EINVAL;
        p = strstr(text, "\nUid:");
        if (!p || sscanf(p + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
                return -EINVAL;
        for (int i = 0; i < 4; i++)
                ret->uid[i] = (uid_t) u[i];
        ret->ppid = (pid_t) ppid;
        return 0;
}

static int add_pid(pid_t **list, size_t *n, size_t *allocated, pid_t pid, size_t max) {
        for (size_t i = 0; i < *n; i++)
                if ((*list)[i] == pid)
                        return 0; /* seen already (a reparented process) */
        if (*n >= max)
                return -E2BIG;
        if (GROW(*list, *allocated, *n + 1) < 0)
                return -ENOMEM;
        (*list)[(*n)++] = pid;
        return 0;
}

int proc_tree(const char *procdir, pid_t pid, pid_t **ret, size_t *ret_n, size_t max) {
        pid_t *list = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = add_pid(&list, &n, &allocated, pid, max);
        /* Breadth first: list grows while we walk it. */
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *taskdir = NULL;
                struct dirent *de;
                DIR *d;

                if (asprintf(&taskdir, "%s/%d/task", procdir, (int) list[i]) < 0) {
                        r = -ENOMEM;
                        break;
                }
                d = opendir(taskdir);
                if (!d) {
                        if (i == 0) /* the top process itself is gone */
                                r = -ESRCH;
                        continue;
                }
                while (r >= 0 && (de = readdir(d))) {
                        _cleanup_free_ char *children = NULL, *text = NULL;

                        if (de->d_name[0] == '.')
                                continue;
                        if (asprintf(&children, "%s/%s/children", taskdir, de->d_name) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        if (read_full_file(children, 1024 * 1024, &text, NULL) < 0)
                                continue;
                        for (char *tok = strtok(text, " \n"); tok && r >= 0; tok = strtok(NULL, " \n")) {
                                int child = atoi(tok);

                                if (child > 0)
                                        r = add_pid(&list, &n, &allocated, (pid_t) child, max);
                        }
                }
                closedir(d);
        }
        if (r < 0) {
                free(list);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}
