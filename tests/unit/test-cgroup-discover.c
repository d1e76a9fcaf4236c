/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cgroup-discover.h"
#include "common.h"

struct discover_result {
        int r;
        struct cgroup_mount m;
        char *error;
};

/* Runs discovery on a recorded mountinfo, with a fake tree holding the controllers file. */
static void discover(const char *mountinfo_name, const char *mount, const char *controllers, bool psi,
                     struct discover_result *ret) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *mountinfo = NULL, *ctl = NULL, *pressure = NULL;

        mountinfo = path_join(TOP_SRCDIR "/tests/unit/data/mountinfo", mountinfo_name);
        if (mount) {
                ck_assert_int_ge(asprintf(&ctl, "%s/cgroup.controllers", mount), 0);
                free(write_file(dir, ctl, controllers));
        }
        if (psi)
                free(write_file(dir, "pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
        pressure = path_join(dir, "pressure");
        *ret = (struct discover_result){};
        ret->r = cgroup_discover(dir, mountinfo, pressure, &ret->m, &ret->error);
        tmpdir_cleanup(dir);
}

START_TEST(test_discover_unified) {
        struct discover_result d;

        discover("unified", "/sys/fs/cgroup", "cpuset cpu io memory hugetlb pids rdma misc\n", true, &d);
        ck_assert_msg(d.r == 0, "%s", d.error);
        ck_assert_str_eq(d.m.path, "/sys/fs/cgroup");
        ck_assert(d.m.psi);
        ck_assert_ptr_null(d.error);

        discover("unified", "/sys/fs/cgroup", "cpuset cpu io memory\n", false, &d);
        ck_assert_int_eq(d.r, 0);
        ck_assert(!d.m.psi);
}
END_TEST

/* Our build machines: memory and io on cgroup v1, a cgroup2 at /sys/fs/cgroup/unified without them. */
START_TEST(test_discover_hybrid) {
        struct discover_result d;

        discover("hybrid", "/sys/fs/cgroup/unified", "hugetlb\n", true, &d);
        ck_assert_int_eq(d.r, -ENODEV);
        ck_assert_str_eq(d.error,
                         "memory and io controllers are bound to cgroup v1 (/sys/fs/cgroup/memory and "
                         "/sys/fs/cgroup/blkio), so the cgroup2 hierarchy at /sys/fs/cgroup/unified cannot use "
                         "them; boot with systemd.unified_cgroup_hierarchy=1 (and cgroup_no_v1=all)");
        free(d.error);
}
END_TEST

START_TEST(test_discover_not_delegated) {
        struct discover_result d;

        discover("unified", "/sys/fs/cgroup", "cpu memory pids\n", true, &d);
        ck_assert_int_eq(d.r, -ENODEV);
        ck_assert_msg(strstr(d.error, "io controller is not available in the cgroup2 hierarchy at /sys/fs/cgroup"),
                      "%s", d.error);
        ck_assert(strstr(d.error, "delegated"));
        free(d.error);
}
END_TEST

START_TEST(test_discover_no_cgroup2) {
        struct discover_result d;

        discover("v1-only", NULL, NULL, true, &d);
        ck_assert_int_eq(d.r, -ENOENT);
        ck_assert_str_eq(d.error,
                         "no cgroup2 file system is mounted (memory is on the cgroup v1 hierarchy at "
                         "/sys/fs/cgroup/memory); boot with systemd.unified_cgroup_hierarchy=1");
        free(d.error);
        discover("none", NULL, NULL, true, &d);
        ck_assert_int_eq(d.r, -ENOENT);
        ck_assert(strstr(d.error, "mount -t cgroup2 cgroup2 /sys/fs/cgroup"));
        free(d.error);
        discover("does-not-exist", NULL, NULL, true, &d);
        ck_assert_int_eq(d.r, -ENOENT);
        ck_assert(strstr(d.error, "cannot read"));
        free(d.error);
}
END_TEST

START_TEST(test_discover_escaped_path) {
        struct discover_result d;
        char s[] = "/a\\040b\\134c\\011";

        discover("escaped", "/srv/my cgroups", "io memory\n", false, &d);
        ck_assert_msg(d.r == 0, "%s", d.error);
        ck_assert_str_eq(d.m.path, "/srv/my cgroups");
        mountinfo_unescape(s);
        ck_assert_str_eq(s, "/a b\\c\t");
}
END_TEST

Suite *cgroup_discover_suite(void) {
        Suite *s = suite_create("cgroup-discover");
        TCase *tc = tcase_create("mountinfo");

        tcase_add_test(tc, test_discover_unified);
        tcase_add_test(tc, test_discover_hybrid);
        tcase_add_test(tc, test_discover_not_delegated);
        tcase_add_test(tc, test_discover_no_cgroup2);
        tcase_add_test(tc, test_discover_escaped_path);
        suite_add_tcase(s, tc);
        return s;
}
