/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Tells its owner when the disks or the mounts of the machine may have
 * changed, so that an io limit whose device was not there (a backup disk not
 * plugged in, a file system fstab names but that is not mounted) applies the
 * moment it is, and one whose disk went away waits for it again.  Two
 * sources, silent while nothing changes (no timer, no polling):
 *
 *   /proc/self/mountinfo  the kernel flags it (EPOLLPRI) when a mount is
 *                         added or removed in the daemon's mount namespace
 *                         (the host's mounts propagate into a sandboxed
 *                         service's);
 *   kernel uevents        NETLINK_KOBJECT_UEVENT, as the kernel sends them
 *                         (no udev needed): only the block subsystem's.
 *
 * A burst of events (a disk with its partitions, then its mount) is
 * reported once, DEVWATCH_SETTLE_USEC after its last event.
 *
 * Errors: negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#define DEVWATCH_SETTLE_USEC 200000

struct devwatch;

typedef void (*devwatch_fn)(void *userdata);

int devwatch_new(sd_event *event, const char *mountinfo, devwatch_fn changed, void *userdata, struct devwatch **ret);
struct devwatch *devwatch_free(struct devwatch *w);
static inline void devwatch_freep(struct devwatch **w) {
        devwatch_free(*w);
}

/* Whether a uevent datagram (NUL-separated "KEY=VALUE" strings after a header) is about a block device. */
bool devwatch_uevent_is_block(const char *buf, size_t len);
