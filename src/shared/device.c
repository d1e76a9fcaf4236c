/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "device.h"
#include "util.h"

static int parse_majmin(const char *s, unsigned *ret_major, unsigned *ret_minor) {
        unsigned ma, mi;
        int n = 0;

        if (sscanf(s, "%u:%u%n", &ma, &mi, &n) != 2 || s[n] != '\0' || s[0] < '0' || s[0] > '9')
                return -EINVAL;
        *ret_major = ma;
        *ret_minor = mi;
        return 0;
}

static void set_name(struct device_info *ret, const char *path) {
        const char *slash = strrchr(path, '/');

        snprintf(ret->name, sizeof(ret->name), "%s", slash ? slash + 1 : path);
}

int device_resolve_devnum(unsigned major, unsigned minor, const char *sysfs, struct device_info *ret) {
        _cleanup_free_ char *link = NULL, *real = NULL, *partition = NULL, *parent_dev = NULL;
        char *slash;
        struct stat st;
        int r;

        assert(sysfs);
        assert(ret);
        if (asprintf(&link, "%s/dev/block/%u:%u", sysfs, major, minor) < 0) {
                link = NULL; /* undefined after a failure */
                return -ENOMEM;
        }
        real = realpath(link, NULL);
        if (!real)
                return errno == ENOENT ? -ENODEV : -errno;

        *ret = (struct device_info){ .major = major, .minor = minor };
        set_name(ret, real);

        partition = path_join(real, "partition");
        if (!partition)
                return -ENOMEM;
        if (stat(partition, &st) < 0)
                return errno == ENOENT ? 0 : -errno; /* a whole disk */

        /* A partition: its parent directory is the disk. */
        slash = strrchr(real, '/');
        if (!slash || slash == real)
                return -ENODEV;
        *slash = '\0';
        parent_dev = path_join(real, "dev");
        if (!parent_dev)
                return -ENOMEM;
        free(partition);
        partition = NULL;
        r = read_one_line(parent_dev, &partition);
        if (r < 0)
                return r;
        if (parse_majmin(partition, &ret->major, &ret->minor) < 0)
                return -ENODEV;
        set_name(ret, real);
        return 0;
}

/*
 * Some file systems (btrfs, for one) give their files an anonymous st_dev:
 * find the mount with that device number and use its source, if that is a
 * block device.  Fills ret->fstype either way.
 */
static int resolve_via_mountinfo(dev_t dev, const char *sysfs, const char *mountinfo, struct device_info *ret) {
        _cleanup_fclose_ FILE *f = fopen(mountinfo, "re");
        _cleanup_free_ char *line = NULL;
        size_t n = 0;

        if (!f)
                return errno == ENOMEM ? -ENOMEM : -ENODEV;
        for (;;) {
                char fstype[32], source[PATH_MAX];
                unsigned ma, mi;
                const char *sep;
                struct stat st;

                errno = 0;
                if (getline(&line, &n, f) <= 0)
                        return errno == ENOMEM ? -ENOMEM : -ENODEV;
                if (sscanf(line, "%*u %*u %u:%u", &ma, &mi) != 2 || makedev(ma, mi) != dev)
                        continue;
                sep = strstr(line, " - ");
                if (!sep || sscanf(sep, " - %31s %4095s", fstype, source) != 2)
                        continue;
                snprintf(ret->fstype, sizeof(ret->fstype), "%s", fstype);
                if (source[0] == '/' && stat(source, &st) == 0 && S_ISBLK(st.st_mode))
                        return device_resolve_devnum(major(st.st_rdev), minor(st.st_rdev), sysfs, ret);
                return -ENODEV;
        }
}

/* The length of the longest mount point in mountinfo that path is at or below (1 for "/"); 0 if none. */
static size_t longest_mount(const char *path, const char *mountinfo) {
        _cleanup_fclose_ FILE *f = fopen(mountinfo, "re");
        _cleanup_free_ char *line = NULL;
        size_t n = 0, best = 0;

        if (!f)
                return 0;
        while (getline(&line, &n, f) > 0) {
                char dir[PATH_MAX];

                if (sscanf(line, "%*u %*u %*u:%*u %*s %4095s", dir) != 1)
                        continue;
                mountinfo_unescape(dir);
                if (streq(dir, "/"))
                        best = best ?: 1;
                else if (path_under(path, dir) && strlen(dir) > best)
                        best = strlen(dir);
        }
        return best;
}

/*
 * Whether path is below a mount point that fstab names and that is not
 * mounted: its longest fstab mount point (other than "/") is longer than its
 * longest mount in mountinfo.  1 (ret->mountpoint filled in) or 0.
 */
static int fstab_unmounted(const char *path, const char *fstab, const char *mountinfo, struct device_info *ret) {
        _cleanup_fclose_ FILE *f = fopen(fstab, "re");
        _cleanup_free_ char *line = NULL, *best = NULL;
        size_t n = 0;

        if (!f)
                return 0; /* no fstab (a container, a test): nothing is known to be missing */
        while (getline(&line, &n, f) > 0) {
                char dir[PATH_MAX], type[32];

                if (sscanf(line, " %*s %4095s %31s", dir, type) != 2 || line[strspn(line, " \t")] == '#' ||
                    dir[0] != '/' || streq(dir, "/") || streq(type, "swap"))
                        continue;
                mountinfo_unescape(dir);
                if (path_under(path, dir) && (!best || strlen(dir) > strlen(best))) {
                        free(best);
                        best = strdup(dir);
                        if (!best)
                                return -ENOMEM;
                }
        }
        if (!best || longest_mount(path, mountinfo) >= strlen(best))
                return 0;
        snprintf(ret->mountpoint, sizeof(ret->mountpoint), "%s", best);
        return 1;
}

int device_resolve(const char *what, const char *sysfs, const char *mountinfo, const char *fstab,
                   struct device_info *ret) {
        unsigned ma, mi;
        struct stat st;
        dev_t dev;
        int r;

        assert(what);
        assert(sysfs);
        assert(mountinfo);
        assert(ret);
        *ret = (struct device_info){};
        if (what[0] != '/') {
                if (parse_majmin(what, &ma, &mi) < 0)
                        return -EINVAL;
                return device_resolve_devnum(ma, mi, sysfs, ret);
        }
        if (fstab) {
                r = fstab_unmounted(what, fstab, mountinfo, ret);
                if (r != 0)
                        return r < 0 ? r : -ENOMEDIUM;
        }
        if (stat(what, &st) < 0)
                return -errno;
        dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
        r = device_resolve_devnum(major(dev), minor(dev), sysfs, ret);
        if (r != -ENODEV || S_ISBLK(st.st_mode))
                return r;
        return resolve_via_mountinfo(dev, sysfs, mountinfo, ret);
}
