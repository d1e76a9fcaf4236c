/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-slots.c on a fake cgroup tree (a directory of /tmp with user
 * xattrs, as cgroupfs has them): the scan that finds a class's slots again
 * after a restart, with their job labels (today's and 0.1's), and the
 * acquisition of an idle slot, or of a new one made with a mkdir.  Creating
 * one where the class does not give its children the controllers yet goes
 * through libcgroup on a real cgroupfs and is the VM scenarios'
 * (engine-limits, engine-dying).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgroup-engine.h"
#include "cgroup.h"
#include "common.h"
#include "util.h"

#define JOB_XATTR "user.pagewarden.job"

static char *slot_dir(const char *dir, const char *slot) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/pagewarden.slice/%s", dir, slot), 0);
        ck_assert_int_eq(mkdir(p, 0755), 0);
        return p;
}

static void label(const char *path, const char *text) {
        ck_assert_msg(setxattr(path, JOB_XATTR, text, strlen(text), 0) == 0,
                      "setxattr %s: %m (the unit tests need user xattrs on /tmp, as cgroupfs has them)", path);
}

static const struct cgroup_slot *find(const struct cgroup_slot *s, size_t n, const char *path) {
        for (size_t i = 0; i < n; i++)
                if (streq(s[i].path, path))
                        return &s[i];
        return NULL;
}

/* A tree of class backup: slot-1 runs a job placed by a rule (populated), slot-2 a job of 0.1 (no "by"),
 * slot-3 is idle; slot-x, slot- and a file slot-4 are not slots; class "Bad name" is not a class. */
static char *make_tree(void) {
        char *dir = tmpdir_new();
        char *p;

        free(write_file(dir, "pagewarden.slice/backup/slot-1/cgroup.events", "populated 1\nfrozen 0\n"));
        free(write_file(dir, "pagewarden.slice/backup/slot-2/cgroup.events", "populated 0\nfrozen 0\n"));
        free(write_file(dir, "pagewarden.slice/backup/slot-3/cgroup.events", "populated 0\nfrozen 0\n"));
        free(write_file(dir, "pagewarden.slice/backup/slot-4", ""));
        free(slot_dir(dir, "backup/slot-x"));
        free(slot_dir(dir, "backup/slot-"));
        free(write_file(dir, "pagewarden.slice/Bad name/slot-1/cgroup.events", "populated 0\n"));
        ck_assert_int_ge(asprintf(&p, "%s/pagewarden.slice/backup/slot-1", dir), 0);
        label(p, "id=7 uid=1000 started=1714644300250000 name=nightly by=rule exe /usr/bin/borg (jobs.yaml:4)");
        free(p);
        ck_assert_int_ge(asprintf(&p, "%s/pagewarden.slice/backup/slot-2", dir), 0);
        label(p, "id=3 uid=0 started=5 name=old-job");
        free(p);
        return dir;
}

START_TEST(test_slots_scan) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        struct cgroup_slot *s = NULL;
        const struct cgroup_slot *x;
        char *dir = make_tree();
        size_t n = 0;

        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);
        ck_assert_int_eq(cgroup_scan(e, &s, &n), 0);
        ck_assert_uint_eq(n, 3);

        x = find(s, n, "pagewarden.slice/backup/slot-1");
        ck_assert_ptr_nonnull(x);
        ck_assert_str_eq(x->class, "backup");
        ck_assert(x->labelled);
        ck_assert(x->populated);
        ck_assert_uint_eq(x->label.id, 7);
        ck_assert_uint_eq(x->label.uid, 1000);
        ck_assert_uint_eq(x->label.started_usec, UINT64_C(1714644300250000));
        ck_assert_str_eq(x->label.name, "nightly");
        ck_assert_str_eq(x->label.by, "rule exe /usr/bin/borg (jobs.yaml:4)"); /* spaces and all */

        x = find(s, n, "pagewarden.slice/backup/slot-2");
        ck_assert_ptr_nonnull(x);
        ck_assert(x->labelled);
        ck_assert(!x->populated);
        ck_assert_uint_eq(x->label.id, 3);
        ck_assert_str_eq(x->label.name, "old-job");
        ck_assert_str_eq(x->label.by, ""); /* 0.1's labels say nothing of how */

        x = find(s, n, "pagewarden.slice/backup/slot-3");
        ck_assert_ptr_nonnull(x);
        ck_assert(!x->labelled);
        ck_assert(!x->populated);
        cgroup_slots_free(s, n);
        tmpdir_cleanup(dir);
}
END_TEST

/* A label that is not ours (garbage, or cut short) makes no job of its slot. */
START_TEST(test_slots_scan_bad_label) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        struct cgroup_slot *s = NULL;
        char *dir = tmpdir_new(), *p;
        size_t n = 0;

        free(write_file(dir, "pagewarden.slice/backup/slot-0/cgroup.events", "populated 0\n"));
        ck_assert_int_ge(asprintf(&p, "%s/pagewarden.slice/backup/slot-0", dir), 0);
        label(p, "id=7 uid=1000");
        free(p);
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);
        ck_assert_int_eq(cgroup_scan(e, &s, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert(!s[0].labelled);
        cgroup_slots_free(s, n);
        tmpdir_cleanup(dir);
}
END_TEST

/* A job takes the class's idle slot (not a busy one, not one that holds processes without a label), is labelled
 * there; its fd is the slot's directory. */
START_TEST(test_slots_acquire_idle) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        struct cgroup_job_label l = { .id = 42, .uid = 1000, .started_usec = 99 };
        _cleanup_free_ char *path = NULL, *abs = NULL;
        struct cgroup_slot *s = NULL;
        const struct cgroup_slot *x;
        char *dir = make_tree();
        struct stat a, b;
        size_t n = 0;
        int fd = -1;

        /* slot-5: holds processes but no label (an operator's, or a job's child left behind): not idle */
        free(write_file(dir, "pagewarden.slice/backup/slot-5/cgroup.events", "populated 1\n"));
        snprintf(l.name, sizeof(l.name), "copy");
        snprintf(l.by, sizeof(l.by), "move");
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);

        ck_assert_int_eq(cgroup_job_acquire(e, "backup", &l, &path, &fd), -EOPNOTSUPP); /* no user xattrs */
        e->features.user_xattr = true;
        snprintf(l.name, sizeof(l.name), "no good");
        ck_assert_int_eq(cgroup_job_acquire(e, "backup", &l, &path, &fd), -EINVAL);
        ck_assert_int_eq(cgroup_job_acquire(e, "../etc", &l, &path, &fd), -EINVAL);
        snprintf(l.name, sizeof(l.name), "copy");

        ck_assert_int_eq(cgroup_job_acquire(e, "backup", &l, &path, &fd), 0); /* 0: an idle slot, taken */
        ck_assert_str_eq(path, "pagewarden.slice/backup/slot-3");
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fstat(fd, &a), 0);
        ck_assert_int_ge(asprintf(&abs, "%s/%s", dir, path), 0);
        ck_assert_int_eq(stat(abs, &b), 0);
        ck_assert(a.st_ino == b.st_ino);
        close(fd);
        /* The label reads back as written. */
        ck_assert_int_eq(cgroup_scan(e, &s, &n), 0);
        x = find(s, n, path);
        ck_assert_ptr_nonnull(x);
        ck_assert(x->labelled);
        ck_assert_uint_eq(x->label.id, 42);
        ck_assert_uint_eq(x->label.uid, 1000);
        ck_assert_uint_eq(x->label.started_usec, 99);
        ck_assert_str_eq(x->label.name, "copy");
        ck_assert_str_eq(x->label.by, "move");
        cgroup_slots_free(s, n);

        /* No idle slot left: a new one, made with a mkdir where the class gives its children memory and io
         * (libcgroup's create otherwise: on the real mount, which a unit test must not touch). */
        free(write_file(dir, "pagewarden.slice/backup/cgroup.subtree_control", "cpu memory io\n"));
        l.id = 43;
        path = mfree(path);
        ck_assert_int_eq(cgroup_job_acquire(e, "backup", &l, &path, NULL), 1); /* 1: made now */
        ck_assert_str_eq(path, "pagewarden.slice/backup/slot-0");              /* the lowest free number */
        abs = mfree(abs);
        ck_assert_int_ge(asprintf(&abs, "%s/%s", dir, path), 0);
        ck_assert_int_eq(stat(abs, &b), 0);
        ck_assert(S_ISDIR(b.st_mode));
        ck_assert_int_eq(cgroup_scan(e, &s, &n), 0);
        x = find(s, n, path);
        ck_assert_ptr_nonnull(x);
        ck_assert_uint_eq(x->label.id, 43);
        cgroup_slots_free(s, n);
        tmpdir_cleanup(dir);
}
END_TEST

static char *acquire(struct cgroup_engine *e, uint64_t id) {
        struct cgroup_job_label l = { .id = id, .uid = 0, .started_usec = 1 };
        char *path = NULL;

        snprintf(l.name, sizeof(l.name), "j%" PRIu64, id);
        ck_assert_int_ge(cgroup_job_acquire(e, "backup", &l, &path, NULL), 0);
        return path;
}

/* A job's slot ends empty, with nothing charged to it (what release reads; the kernel's files in a real tree). */
static void ended(const char *dir, const char *path) {
        _cleanup_free_ char *events = NULL, *current = NULL;

        ck_assert_int_ge(asprintf(&events, "%s/cgroup.events", path), 0);
        ck_assert_int_ge(asprintf(&current, "%s/memory.current", path), 0);
        free(write_file(dir, events, "populated 0\nfrozen 0\n"));
        free(write_file(dir, current, "0\n"));
}

/*
 * The class's slots are indexed after its first scan: a job's end makes its slot idle and the next job takes it,
 * with no scan (a slot made behind the engine's back is not seen until the class is scanned again); when the tree
 * is not as the index says, another acquirer having labelled the idle slot first, the label's XATTR_CREATE fails
 * and the class is scanned again.
 */
START_TEST(test_slots_index) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *abs = NULL;
        char *dir = make_tree();
        struct cgroup_release rel;

        free(write_file(dir, "pagewarden.slice/backup/cgroup.subtree_control", "cpu memory io\n"));
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);
        e->features.user_xattr = true;
        cgroup_engine_set_idle_slots(e, 8); /* none removed: a removal goes through libcgroup, to the real mount */
        a = acquire(e, 10);
        ck_assert_str_eq(a, "pagewarden.slice/backup/slot-3"); /* the idle one */
        b = acquire(e, 11);
        ck_assert_str_eq(b, "pagewarden.slice/backup/slot-0"); /* the lowest free number */
        ended(dir, a);
        ck_assert_int_eq(cgroup_job_release(e, a, &rel), 0);
        ck_assert(!rel.removed);
        /* An idle slot made by hand now: the index does not know it, and slot-3 is the one taken. */
        free(write_file(dir, "pagewarden.slice/backup/slot-5/cgroup.events", "populated 0\n"));
        c = acquire(e, 12);
        ck_assert_str_eq(c, "pagewarden.slice/backup/slot-3");
        ended(dir, c);
        ck_assert_int_eq(cgroup_job_release(e, c, &rel), 0);
        /* Another acquirer labels slot-3 first: refused there, the class is scanned, slot-5 is found. */
        ck_assert_int_ge(asprintf(&abs, "%s/%s", dir, c), 0);
        label(abs, "id=99 uid=0 started=1 name=other");
        d = acquire(e, 13);
        ck_assert_str_eq(d, "pagewarden.slice/backup/slot-5");
        tmpdir_cleanup(dir);
}
END_TEST

/* The contents of dir/name ("" for an empty file). */
static char *contents(const char *dir, const char *name) {
        _cleanup_free_ char *p = NULL;
        char *text = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        ck_assert_int_eq(read_full_file(p, 4096, &text, NULL), 0);
        return text;
}

/* A slot made now gets only the limits that are not the kernel's default "max" (nothing else to undo); a reused one
 * every value, so that it forgets its last job's.  The writes go straight to the engine's mount. */
START_TEST(test_slots_set_limits) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        const struct pw_job_limits l = { .memory_high = 64 << 20,
                                         .memory_max = UNITS_MAX,
                                         .memory_swap_max = UNITS_MAX };
        const char *slot = "pagewarden.slice/backup/slot-9";
        char *dir = tmpdir_new(), *t;

        free(write_file(dir, "pagewarden.slice/backup/slot-9/memory.high", ""));
        free(write_file(dir, "pagewarden.slice/backup/slot-9/memory.max", ""));
        free(write_file(dir, "pagewarden.slice/backup/slot-9/memory.swap.max", ""));
        ck_assert_int_eq(cgroup_engine_new(dir, "pagewarden.slice", false, &e), 0);
        e->features.swap = true;

        ck_assert_int_eq(cgroup_job_set_limits(e, slot, true, &l), 0);
        ck_assert_str_eq(t = contents(dir, "pagewarden.slice/backup/slot-9/memory.high"), "67108864");
        free(t);
        ck_assert_str_eq(t = contents(dir, "pagewarden.slice/backup/slot-9/memory.max"), "");
        free(t);
        ck_assert_str_eq(t = contents(dir, "pagewarden.slice/backup/slot-9/memory.swap.max"), "");
        free(t);

        ck_assert_int_eq(cgroup_job_set_limits(e, slot, false, &l), 0);
        ck_assert_str_eq(t = contents(dir, "pagewarden.slice/backup/slot-9/memory.max"), "max");
        free(t);
        ck_assert_str_eq(t = contents(dir, "pagewarden.slice/backup/slot-9/memory.swap.max"), "max");
        free(t);
        /* A slot that went meanwhile: the error, not a file made in its place. */
        ck_assert_int_eq(cgroup_job_set_limits(e, "pagewarden.slice/backup/slot-10", false, &l), -ENOENT);
        tmpdir_cleanup(dir);
}
END_TEST

/* The engine's reads take a read that does not fill the buffer as the end (cgroupfs's seq_file fills it as far as
 * its text goes): one read() for a small file.  A pipe kept open shows it: a second read would wait. */
START_TEST(test_read_short_is_end) {
        int p[2];
        char *text = NULL;
        size_t n = 0;

        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(write(p[1], "max\n", 4), 4);
        ck_assert_int_eq(read_full_fd_ext(p[0], 4096, true, &text, &n), 0);
        ck_assert_str_eq(text, "max\n");
        ck_assert_uint_eq(n, 4);
        free(text);
        close(p[0]);
        close(p[1]);
}
END_TEST

Suite *cgroup_slots_suite(void) {
        Suite *s = suite_create("cgroup-slots");
        TCase *tc = tcase_create("tree");

        tcase_add_test(tc, test_slots_scan);
        tcase_add_test(tc, test_slots_scan_bad_label);
        tcase_add_test(tc, test_slots_acquire_idle);
        tcase_add_test(tc, test_slots_index);
        tcase_add_test(tc, test_slots_set_limits);
        tcase_add_test(tc, test_read_short_is_end);
        suite_add_tcase(s, tc);
        return s;
}
