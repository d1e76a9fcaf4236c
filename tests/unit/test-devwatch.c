/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <systemd/sd-event.h>

#include "common.h"
#include "devwatch.h"

/* Datagrams as the kernel sends them: "ACTION@DEVPATH", then NUL-separated keys. */
#define UEVENT(s) s, sizeof(s) - 1

START_TEST(test_devwatch_uevent_filter) {
        ck_assert(devwatch_uevent_is_block(
                UEVENT("add@/devices/virtual/block/loop0\0ACTION=add\0DEVPATH=/devices/virtual/block/loop0\0"
                       "SUBSYSTEM=block\0MAJOR=7\0MINOR=0\0DEVNAME=loop0\0DEVTYPE=disk\0SEQNUM=2001\0")));
        /* Another subsystem, a key that only starts like it, a value that only contains it. */
        ck_assert(!devwatch_uevent_is_block(
                UEVENT("add@/devices/virtual/net/lo\0ACTION=add\0SUBSYSTEM=net\0INTERFACE=lo\0")));
        ck_assert(!devwatch_uevent_is_block(UEVENT("change@/x\0ACTION=change\0SUBSYSTEM=blockish\0")));
        ck_assert(!devwatch_uevent_is_block(UEVENT("change@/x\0ACTION=change\0NOTE=SUBSYSTEM=block\0")));
        /* Cut short (no terminating NUL), or empty: read within the length. */
        ck_assert(devwatch_uevent_is_block("add@/x\0SUBSYSTEM=block", 22));
        ck_assert(!devwatch_uevent_is_block("add@/x\0SUBSYSTEM=bloc", 21));
        ck_assert(!devwatch_uevent_is_block("", 0));
}
END_TEST

static void on_changed(void *userdata) {
        (*(unsigned *) userdata)++;
}

/* With a mountinfo file that never changes and no device event, nothing is reported. */
START_TEST(test_devwatch_quiet) {
        sd_event *e = NULL;
        struct devwatch *w = NULL;
        unsigned calls = 0;

        ck_assert_int_eq(sd_event_new(&e), 0);
        ck_assert_int_eq(devwatch_new(e, "/proc/self/mountinfo", on_changed, &calls, &w), 0);
        for (int i = 0; i < 5; i++)
                ck_assert_int_ge(sd_event_run(e, 20000), 0);
        ck_assert_uint_eq(calls, 0);
        devwatch_free(w);
        sd_event_unref(e);
}
END_TEST

Suite *devwatch_suite(void) {
        Suite *s = suite_create("devwatch");
        TCase *tc = tcase_create("events");

        tcase_add_test(tc, test_devwatch_uevent_filter);
        tcase_add_test(tc, test_devwatch_quiet);
        suite_add_tcase(s, tc);
        return s;
}
