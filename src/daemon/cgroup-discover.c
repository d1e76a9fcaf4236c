/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <sys/stat.h>

#include "cgroup-discover.h"
#include "util.h"

static bool has_word(const char *list, const char *word, const char *sep) {
        size_t len = strlen(word);

        for (const char *p = list; *p;) {
                size_t n = strcspn(p, sep);

                if (n == len && strncmp(p, word, len) == 0)
                        return true;
                p += n;
                p += strspn(p, sep);
        }
        return false;
}

struct mountinfo_scan {
        char cgroup2[PATH_MAX];   /* the preferred cgroup2 mount, "" if none */
        char v1_memory[PATH_MAX]; /* a cgroup v1 hierarchy holding memory, "" if none */
        char v1_io[PATH_MAX];     /* ... holding blkio (io on v1) */
};

static int cgroup2_preference(const char *path) {
        if (streq(path, "/sys/fs/cgroup"))
                return 3;
        if (streq(path, "/sys/fs/cgroup/unified"))
                return 2;
        return 1;
}

static int scan_mountinfo(const char *mountinfo, struct mountinfo_scan *s) {
        _cleanup_fclose_ FILE *f = fopen(mountinfo, "re");
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        int best = 0;

        *s = (struct mountinfo_scan){};
        if (!f)
                return -errno;
        while (getline(&line, &n, f) > 0) {
                char mnt[PATH_MAX], fstype[64], opts[1024];
                const char *sep = strstr(line, " - ");

                if (!sep || sscanf(line, "%*u %*u %*u:%*u %*s %4095s", mnt) != 1 ||
                    sscanf(sep, " - %63s %*s %1023s", fstype, opts) != 2)
                        continue;
                mountinfo_unescape(mnt);
                if (streq(fstype, "cgroup2")) {
                        int pref = cgroup2_preference(mnt);

                        if (pref > best) {
                                best = pref;
                                snprintf(s->cgroup2, sizeof(s->cgroup2), "%s", mnt);
                        }
                } else if (streq(fstype, "cgroup")) {
                        if (has_word(opts, "memory", ",") && !s->v1_memory[0])
                                snprintf(s->v1_memory, sizeof(s->v1_memory), "%s", mnt);
                        if (has_word(opts, "blkio", ",") && !s->v1_io[0])
                                snprintf(s->v1_io, sizeof(s->v1_io), "%s", mnt);
                }
        }
        return 0;
}

int cgroup_discover(const char *root, const char *mountinfo, const char *pressure_dir, struct cgroup_mount *ret,
                    char **ret_error) {
        _cleanup_free_ char *controllers_path = NULL, *controllers = NULL, *psi = NULL;
        struct mountinfo_scan s;
        bool memory, io;
        int r;

        *ret_error = NULL;
        r = scan_mountinfo(mountinfo, &s);
        if (r < 0)
                return asprintf(ret_error, "cannot read %s: %s", mountinfo, strerror(-r)) < 0 ? -ENOMEM : r;
        if (!s.cgroup2[0]) {
                int k;

                if (s.v1_memory[0])
                        k = asprintf(ret_error,
                                     "no cgroup2 file system is mounted (memory is on the cgroup v1 hierarchy at %s); "
                                     "boot with systemd.unified_cgroup_hierarchy=1",
                                     s.v1_memory);
                else
                        k = asprintf(ret_error,
                                     "no cgroup2 file system is mounted; boot with "
                                     "systemd.unified_cgroup_hierarchy=1 or mount it: "
                                     "mount -t cgroup2 cgroup2 /sys/fs/cgroup");
                return k < 0 ? -ENOMEM : -ENOENT;
        }

        if (asprintf(&controllers_path, "%s%s/cgroup.controllers", root, s.cgroup2) < 0)
                return -ENOMEM;
        r = read_one_line(controllers_path, &controllers);
        if (r < 0)
                return asprintf(ret_error, "cannot read %s: %s", controllers_path, strerror(-r)) < 0 ? -ENOMEM : r;
        memory = has_word(controllers, "memory", " ");
        io = has_word(controllers, "io", " ");

        if (!memory || !io) {
                const char *what = !memory && !io ? "memory and io controllers are"
                                   : !memory      ? "memory controller is"
                                                  : "io controller is";
                const char *v1a = !memory ? s.v1_memory : s.v1_io;
                const char *v1b = !memory && !io ? s.v1_io : "";
                int k;

                if (v1a[0] || v1b[0])
                        k = asprintf(ret_error,
                                     "%s bound to cgroup v1 (%s%s%s), so the cgroup2 hierarchy at %s cannot use %s; "
                                     "boot with systemd.unified_cgroup_hierarchy=1 (and cgroup_no_v1=all)",
                                     what, v1a, v1a[0] && v1b[0] ? " and " : "", v1b, s.cgroup2,
                                     !memory && !io ? "them" : "it");
                else
                        k = asprintf(ret_error,
                                     "%s not available in the cgroup2 hierarchy at %s (cgroup.controllers: \"%s\"); "
                                     "in a container, ask for them to be delegated",
                                     what, s.cgroup2, controllers);
                return k < 0 ? -ENOMEM : -ENODEV;
        }

        snprintf(ret->path, sizeof(ret->path), "%s", s.cgroup2);
        psi = path_join(pressure_dir, "memory");
        if (!psi)
                return -ENOMEM;
        ret->psi = access(psi, R_OK) == 0;
        return 0;
}
