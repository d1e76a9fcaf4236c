/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Resolves what a policy's io entry names (a block device node, a mount
 * point, any path on a file system, or MAJ:MIN) to the whole disk that
 * io.max accepts: a partition resolves to its parent disk.  The sysfs root
 * and the mountinfo file are parameters so that tests can use a fake tree.
 * Functions return 0 or a negative errno; out of memory is -ENOMEM.
 */

struct device_info {
        unsigned major, minor; /* the whole disk */
        char name[64];         /* its kernel name, e.g. "sda" */
        char fstype[32];       /* on -ENODEV: the file system without a disk */
        char mountpoint[256];  /* on -ENOMEDIUM: the fstab mount point that is not mounted */
};

/*
 * Returns 0, or -ENOENT (path missing), -ENOMEDIUM (the path is on a file
 * system that fstab names but that is not mounted now: an unplugged USB
 * disk, an iSCSI target not logged in; ret->mountpoint says which, and the
 * path would otherwise resolve to the disk below the mount point), -ENODEV
 * (no block device behind it, ret->fstype says what it is), -EINVAL
 * (malformed MAJ:MIN), -ENOMEM, or another negative errno from stat().
 * fstab NULL: not looked at.
 */
int device_resolve(const char *what, const char *sysfs, const char *mountinfo, const char *fstab,
                   struct device_info *ret);

/* The whole disk holding block device major:minor; -ENODEV if sysfs has no such device. */
int device_resolve_devnum(unsigned major, unsigned minor, const char *sysfs, struct device_info *ret);
