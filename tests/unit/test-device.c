/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common.h"
#include "device.h"

static void add_link(const char *sys, const char *majmin, const char *target) {
        _cleanup_free_ char *link = NULL;

        ck_assert_int_ge(asprintf(&link, "%s/dev/block/%s", sys, majmin), 0);
        ck_assert_int_eq(symlink(target, link), 0);
}

/* A fake sysfs: disk sda (8:0) with partition sda1 (8:1), and dm-0 (253:0). */
static char *fake_sysfs(const char *dir) {
        char *sys = path_join(dir, "sys");

        free(write_file(sys, "devices/virtual/block/sda/dev", "8:0\n"));
        free(write_file(sys, "devices/virtual/block/sda/sda1/dev", "8:1\n"));
        free(write_file(sys, "devices/virtual/block/sda/sda1/partition", "1\n"));
        free(write_file(sys, "devices/virtual/block/dm-0/dev", "253:0\n"));
        free(write_file(sys, "dev/block/.keep", ""));
        add_link(sys, "8:0", "../../devices/virtual/block/sda");
        return sys;
}

START_TEST(test_device_devnum) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *sys = fake_sysfs(dir);
        struct device_info di;

        add_link(sys, "8:1", "../../devices/virtual/block/sda/sda1");
        add_link(sys, "253:0", "../../devices/virtual/block/dm-0");

        ck_assert_int_eq(device_resolve_devnum(8, 0, sys, &di), 0);
        ck_assert_uint_eq(di.major, 8);
        ck_assert_uint_eq(di.minor, 0);
        ck_assert_str_eq(di.name, "sda");
        /* A partition resolves to its disk: io.max refuses partitions. */
        ck_assert_int_eq(device_resolve_devnum(8, 1, sys, &di), 0);
        ck_assert_uint_eq(di.minor, 0);
        ck_assert_str_eq(di.name, "sda");
        ck_assert_int_eq(device_resolve_devnum(253, 0, sys, &di), 0);
        ck_assert_str_eq(di.name, "dm-0");
        ck_assert_int_eq(device_resolve_devnum(7, 7, sys, &di), -ENODEV);
        /* MAJ:MIN written in the policy. */
        ck_assert_int_eq(device_resolve("8:1", sys, "/nonexistent", NULL, &di), 0);
        ck_assert_str_eq(di.name, "sda");
        ck_assert_int_eq(device_resolve("8:", sys, "/nonexistent", NULL, &di), -EINVAL);
        ck_assert_int_eq(device_resolve("8:1x", sys, "/nonexistent", NULL, &di), -EINVAL);
        ck_assert_int_eq(device_resolve("/no/such/path", sys, "/nonexistent", NULL, &di), -ENOENT);
        tmpdir_cleanup(dir);
}
END_TEST

/* A path on a file system: its st_dev, resolved through the (fake) sysfs. */
START_TEST(test_device_path_on_partition) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *sys = fake_sysfs(dir);
        _cleanup_free_ char *file = write_file(dir, "data/file", "x");
        _cleanup_free_ char *majmin = NULL;
        struct device_info di;
        struct stat st;

        ck_assert_int_eq(stat(file, &st), 0);
        ck_assert_int_ge(asprintf(&majmin, "%u:%u", major(st.st_dev), minor(st.st_dev)), 0);
        if (!streq(majmin, "8:0")) /* pretend this file system is on partition sda1 */
                add_link(sys, majmin, "../../devices/virtual/block/sda/sda1");
        ck_assert_int_eq(device_resolve(file, sys, "/nonexistent", NULL, &di), 0);
        ck_assert_str_eq(di.name, "sda");
        ck_assert_uint_eq(di.major, 8);
        ck_assert_uint_eq(di.minor, 0);
        tmpdir_cleanup(dir);
}
END_TEST

/* A file system without a block device (tmpfs, proc): -ENODEV, and its type for the message. */
START_TEST(test_device_no_block_device) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *sys = fake_sysfs(dir);
        _cleanup_free_ char *file = write_file(dir, "f", "x");
        _cleanup_free_ char *line = NULL, *mountinfo = NULL;
        struct device_info di;
        struct stat st;

        ck_assert_int_eq(stat(file, &st), 0);
        ck_assert_int_ge(asprintf(&line, "30 1 %u:%u / %s rw - tmpfs tmpfs rw\n", major(st.st_dev), minor(st.st_dev),
                                  dir),
                         0);
        mountinfo = write_file(dir, "mountinfo", line);
        ck_assert_int_eq(device_resolve(file, sys, mountinfo, NULL, &di), -ENODEV);
        ck_assert_str_eq(di.fstype, "tmpfs");
        /* Not in mountinfo at all: still -ENODEV, with no type. */
        ck_assert_int_eq(device_resolve(file, sys, "/nonexistent", NULL, &di), -ENODEV);
        ck_assert_str_eq(di.fstype, "");
        tmpdir_cleanup(dir);
}
END_TEST

/* btrfs and friends: anonymous st_dev, the disk is the mount's source device. */
START_TEST(test_device_anonymous_dev) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *sys = fake_sysfs(dir);
        _cleanup_free_ char *file = write_file(dir, "f", "x");
        _cleanup_free_ char *node = path_join(dir, "sda1-node");
        _cleanup_free_ char *line = NULL, *mountinfo = NULL;
        struct device_info di;
        struct stat st;

        if (geteuid() != 0) {
                /* mknod needs root; CI runs as root, so this branch only runs on developer machines. */
                fprintf(stderr, "# test_device_anonymous_dev: not root, mknod skipped\n");
                tmpdir_cleanup(dir);
                return;
        }
        add_link(sys, "8:1", "../../devices/virtual/block/sda/sda1");
        ck_assert_int_eq(mknod(node, S_IFBLK | 0600, makedev(8, 1)), 0);
        ck_assert_int_eq(stat(file, &st), 0);
        ck_assert_int_ge(asprintf(&line, "30 1 %u:%u / %s rw - btrfs %s rw\n", major(st.st_dev), minor(st.st_dev), dir,
                                  node),
                         0);
        mountinfo = write_file(dir, "mountinfo", line);
        ck_assert_int_eq(device_resolve(file, sys, mountinfo, NULL, &di), 0);
        ck_assert_str_eq(di.name, "sda");
        ck_assert_uint_eq(di.minor, 0);
        /* The device node itself names its disk. */
        ck_assert_int_eq(device_resolve(node, sys, "/nonexistent", NULL, &di), 0);
        ck_assert_str_eq(di.name, "sda");
        tmpdir_cleanup(dir);
}
END_TEST

/* A path on a file system that fstab names but that is not mounted is not
 * the disk below its mount point: -ENOMEDIUM, until it is mounted. */
START_TEST(test_device_fstab_unmounted) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *fstab = NULL, *mounted = NULL, *unmounted = NULL, *escaped = NULL;
        _cleanup_free_ char *usb = path_join(dir, "mnt/usb"), *backup = path_join(dir, "mnt/usb/backup");
        struct device_info di;

        ck_assert_int_ge(asprintf(&fstab,
                                  "# a comment naming %s/mnt/usb\n"
                                  "/dev/sda2 / ext4 defaults 0 1\n"
                                  "/dev/sdb1 none swap sw 0 0\n"
                                  "UUID=1234 %s/mnt/usb ext4 noauto 0 2\n"
                                  "/dev/sdc1 %s/mnt/with\\040space ext4 noauto 0 2\n",
                                  dir, dir, dir),
                         0);
        free(write_file(dir, "mnt/usb/backup/.keep", ""));
        free(write_file(dir, "fstab", fstab));
        free(fstab);
        fstab = path_join(dir, "fstab");
        ck_assert_int_ge(asprintf(&unmounted, "20 1 8:2 / / rw - ext4 /dev/sda2 rw\n"), 0);
        free(write_file(dir, "mi-unmounted", unmounted));
        free(unmounted);
        unmounted = path_join(dir, "mi-unmounted");
        ck_assert_int_ge(asprintf(&mounted,
                                  "20 1 8:2 / / rw - ext4 /dev/sda2 rw\n21 20 8:33 / %s rw - ext4 /dev/sdc1 rw\n", usb),
                         0);
        free(write_file(dir, "mi-mounted", mounted));
        free(mounted);
        mounted = path_join(dir, "mi-mounted");

        /* Not mounted: the mount point, a directory below it, and a path that does not exist yet. */
        ck_assert_int_eq(device_resolve(usb, "/sys", unmounted, fstab, &di), -ENOMEDIUM);
        ck_assert_str_eq(di.mountpoint, usb);
        ck_assert_int_eq(device_resolve(backup, "/sys", unmounted, fstab, &di), -ENOMEDIUM);
        ck_assert_str_eq(di.mountpoint, usb);
        escaped = path_join(dir, "mnt/with space/x");
        ck_assert_int_eq(device_resolve(escaped, "/sys", unmounted, fstab, &di), -ENOMEDIUM);
        /* Mounted: resolved as any path (here: to this machine's disk, whatever it is). */
        ck_assert_int_ne(device_resolve(backup, "/sys", mounted, fstab, &di), -ENOMEDIUM);
        /* A path under no fstab entry but "/", and no fstab at all: as before. */
        ck_assert_int_eq(device_resolve("/no/such/path", "/sys", unmounted, fstab, &di), -ENOENT);
        ck_assert_int_ne(device_resolve(backup, "/sys", unmounted, NULL, &di), -ENOMEDIUM);
        tmpdir_cleanup(dir);
}
END_TEST

/* On this machine, "/" resolves to a whole disk that the real sysfs knows. */
START_TEST(test_device_real_root) {
        struct device_info di;
        _cleanup_free_ char *part = NULL;
        struct stat st;

        ck_assert_int_eq(device_resolve("/", "/sys", "/proc/self/mountinfo", NULL, &di), 0);
        ck_assert_int_ge(asprintf(&part, "/sys/dev/block/%u:%u/partition", di.major, di.minor), 0);
        ck_assert_int_eq(stat(part, &st), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_str_ne(di.name, "");
}
END_TEST

Suite *device_suite(void) {
        Suite *s = suite_create("device");
        TCase *tc = tcase_create("resolve");

        tcase_add_test(tc, test_device_devnum);
        tcase_add_test(tc, test_device_path_on_partition);
        tcase_add_test(tc, test_device_no_block_device);
        tcase_add_test(tc, test_device_anonymous_dev);
        tcase_add_test(tc, test_device_real_root);
        tcase_add_test(tc, test_device_fstab_unmounted);
        suite_add_tcase(s, tc);
        return s;
}
