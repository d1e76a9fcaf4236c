/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classes.c: the job classes as the backend gets them, and io limits that
 * follow their devices, over a fake sysfs (a file's file system pretends to
 * be on a partition of sda, later on dm-0) and a fake backend that records
 * what it is asked to apply or remove.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "classes.h"
#include "common.h"

/* What the backend was asked: one line per call, "apply CLASS DEVICE..." or "remove CLASS". */
static char calls[1024];

static void record(const char *text) {
        size_t n = strlen(calls);

        snprintf(calls + n, sizeof(calls) - n, "%s", text);
}

static int fake_class_apply(struct backend *b, const struct pw_job_class *c) {
        record("apply ");
        record(c->name);
        for (size_t k = 0; k < c->n_io; k++) {
                char dev[32];

                if (c->io[k].absent)
                        snprintf(dev, sizeof(dev), " absent");
                else
                        snprintf(dev, sizeof(dev), " %u:%u", c->io[k].major, c->io[k].minor);
                record(dev);
        }
        record("\n");
        return 0;
}

static int fake_class_remove(struct backend *b, const char *class) {
        record("remove ");
        record(class);
        record("\n");
        return 0;
}

static char *fake_class_path(struct backend *b, const char *class) {
        char *p;

        return asprintf(&p, "pagewarden.slice/%s", class) < 0 ? NULL : p;
}

static const struct backend_ops fake_ops = {
        .name = "fake",
        .class_apply = fake_class_apply,
        .class_remove = fake_class_remove,
        .class_path = fake_class_path,
};

struct fixture {
        char *dir, *sys, *data, *majmin;
        struct policy_context ctx;
        struct backend backend;
        struct jobs jobs;
        struct action_log log;
        struct parse_result p;
        bool stopping;
        unsigned changed;
        struct classes cl;
};

/* sysfs's link for the data file system's device, to the disk (or partition) at target. */
static void link_data(struct fixture *f, const char *target) {
        _cleanup_free_ char *link = NULL;

        ck_assert_int_ge(asprintf(&link, "%s/dev/block/%s", f->sys, f->majmin), 0);
        (void) unlink(link);
        ck_assert_int_eq(symlink(target, link), 0);
}

static void on_changed(void *userdata) {
        struct fixture *f = userdata;

        f->changed++;
}

/* policy with each DATA replaced by the data directory's path. */
static char *with_data(const char *policy, const char *data) {
        size_t n = 0;
        char *out;

        for (const char *p = policy; (p = strstr(p, "DATA")); p += 4)
                n++;
        out = calloc(strlen(policy) + n * strlen(data) + 1, 1);
        ck_assert_ptr_nonnull(out);
        for (const char *p = policy, *q; *p; p = q + 4) {
                q = strstr(p, "DATA");
                if (!q) {
                        strcat(out, p);
                        break;
                }
                strncat(out, p, (size_t) (q - p));
                strcat(out, data);
        }
        return out;
}

static void fixture_init(struct fixture *f, const char *policy_text) {
        _cleanup_free_ char *policy = NULL, *file = NULL;
        struct stat st;

        *f = (struct fixture){ .dir = tmpdir_new() };
        f->sys = path_join(f->dir, "sys");
        free(write_file(f->sys, "devices/virtual/block/sda/dev", "8:0\n"));
        free(write_file(f->sys, "devices/virtual/block/sda/sda1/dev", "8:1\n"));
        free(write_file(f->sys, "devices/virtual/block/sda/sda1/partition", "1\n"));
        free(write_file(f->sys, "devices/virtual/block/dm-0/dev", "253:0\n"));
        free(write_file(f->sys, "dev/block/.keep", ""));
        file = write_file(f->dir, "data/backups/file", "x");
        f->data = path_join(f->dir, "data/backups");
        ck_assert_int_eq(stat(file, &st), 0);
        ck_assert_int_ge(asprintf(&f->majmin, "%u:%u", major(st.st_dev), minor(st.st_dev)), 0);
        link_data(f, "../../devices/virtual/block/sda/sda1");
        f->ctx = test_context();
        f->ctx.sysfs = f->sys;
        policy = with_data(policy_text, f->data);
        parse_policy_ctx(&f->ctx, policy, &f->p);
        ck_assert_msg(f->p.r == 0, "%s", f->p.errors);
        f->backend = (struct backend){ .ops = &fake_ops, .root = (char *) "pagewarden.slice" };
        jobs_init(&f->jobs, NULL, &f->backend, &f->log, NULL, NULL, NULL);
        f->cl = (struct classes){ .backend = &f->backend,
                                  .policy = &f->p.policy,
                                  .ctx = &f->ctx,
                                  .jobs = &f->jobs,
                                  .log = &f->log,
                                  .stopping = &f->stopping,
                                  .devices_changed = on_changed,
                                  .userdata = f };
        calls[0] = '\0';
}

static void fixture_done(struct fixture *f) {
        classes_done(&f->cl);
        jobs_done(&f->jobs);
        action_log_done(&f->log);
        parse_result_done(&f->p);
        free(f->data);
        free(f->sys);
        free(f->majmin);
        tmpdir_cleanup(f->dir);
}

/* Whether the newest action says needle. */
static bool last_action_says(struct fixture *f, const char *needle) {
        json_object *a = action_log_json(&f->log), *last, *msg;
        size_t n = json_object_array_length(a);
        bool r = n > 0 && json_object_object_get_ex(last = json_object_array_get_idx(a, n - 1), "message", &msg) &&
                 strstr(json_object_get_string(msg), needle);

        json_object_put(a);
        return r;
}

START_TEST(test_apply) {
        struct fixture f;

        fixture_init(&f,
                     "jobs:\n"
                     "  backup:\n"
                     "    io: [{device: DATA, write_bps: 50M}]\n"
                     "  copy:\n"
                     "    memory: {high: 1G}\n");
        classes_apply(&f.cl);
        ck_assert_str_eq(calls, "apply backup 8:0\napply copy\n");
        fixture_done(&f);
}
END_TEST

START_TEST(test_device_follows) {
        struct fixture f;
        _cleanup_free_ char *gone = NULL, *want = NULL;

        fixture_init(&f,
                     "jobs:\n"
                     "  backup:\n"
                     "    io: [{device: DATA, write_bps: 50M}]\n");
        ck_assert(!f.p.policy.classes[0].io[0].absent);
        classes_apply(&f.cl);
        calls[0] = '\0';
        /* Nothing changed: nothing is applied, nobody is told. */
        classes_devices_changed(&f.cl);
        ck_assert_str_eq(calls, "");
        ck_assert_uint_eq(f.changed, 0);
        /* The path goes (its disk unplugged): the limits wait for it. */
        ck_assert_int_ge(asprintf(&gone, "%s.away", f.data), 0);
        ck_assert_int_eq(rename(f.data, gone), 0);
        classes_devices_changed(&f.cl);
        ck_assert_str_eq(calls, "apply backup absent\n");
        ck_assert_uint_eq(f.changed, 1);
        ck_assert(last_action_says(&f, "is gone; its io limits wait for it"));
        /* It comes back on another disk (plugged in again under a new number): the limits follow it. */
        calls[0] = '\0';
        link_data(&f, "../../devices/virtual/block/dm-0");
        ck_assert_int_eq(rename(gone, f.data), 0);
        classes_devices_changed(&f.cl);
        /* A whole disk: its own number (the file system's here), no partition to go up from. */
        ck_assert_int_ge(asprintf(&want, "apply backup %s\n", f.majmin), 0);
        ck_assert_str_eq(calls, want);
        ck_assert_uint_eq(f.changed, 2);
        free(want);
        ck_assert_int_ge(asprintf(&want, "is on disk dm-0 (%s): its io limits apply", f.majmin), 0);
        ck_assert(last_action_says(&f, want));
        /* The class in force has it; the policy still says what its load found (it is never changed). */
        ck_assert_str_eq(classes_find(&f.cl, "backup")->io[0].disk, "dm-0");
        ck_assert_str_eq(f.p.policy.classes[0].io[0].disk, "sda");
        ck_assert(!f.p.policy.classes[0].io[0].absent);
        ck_assert_uint_eq(f.p.policy.classes[0].io[0].major, 8);
        /* A reload (a new classes_apply) starts again from what its load found. */
        calls[0] = '\0';
        classes_apply(&f.cl);
        ck_assert_str_eq(calls, "apply backup 8:0\n");
        ck_assert_str_eq(classes_find(&f.cl, "backup")->io[0].disk, "sda");
        ck_assert_ptr_null(classes_find(&f.cl, "copy"));
        fixture_done(&f);
}
END_TEST

START_TEST(test_device_taken) {
        struct fixture f;
        _cleanup_free_ char *later = NULL;

        /* The second entry's path is not there at the load; when it comes, it is on the disk the first one
         * names: it waits (io.max has one line a disk, and which limit would win is not for us to guess). */
        fixture_init(&f,
                     "jobs:\n"
                     "  backup:\n"
                     "    io: [{device: DATA, write_bps: 50M}, {device: 'DATA-later', read_bps: 10M}]\n");
        ck_assert(f.p.policy.classes[0].io[1].absent);
        classes_apply(&f.cl);
        calls[0] = '\0';
        ck_assert_int_ge(asprintf(&later, "%s-later", f.data), 0);
        ck_assert_int_eq(mkdir(later, 0755), 0);
        classes_devices_changed(&f.cl);
        ck_assert_str_eq(calls, "");
        ck_assert_uint_eq(f.changed, 0);
        ck_assert(classes_find(&f.cl, "backup")->io[1].absent);
        fixture_done(&f);
}
END_TEST

START_TEST(test_remove_if_unused) {
        struct fixture f;

        fixture_init(&f,
                     "jobs:\n"
                     "  backup:\n"
                     "    memory: {high: 1G}\n");
        classes_remove_if_unused(&f.cl, "backup"); /* still in the policy */
        ck_assert_str_eq(calls, "");
        f.stopping = true;
        classes_remove_if_unused(&f.cl, "old"); /* the daemon stops: its cgroups stay */
        ck_assert_str_eq(calls, "");
        f.stopping = false;
        classes_remove_if_unused(&f.cl, "old");
        ck_assert_str_eq(calls, "remove old\n");
        ck_assert(last_action_says(&f, "Class old left the policy and has no job: /pagewarden.slice/old removed"));
        fixture_done(&f);
}
END_TEST

Suite *classes_suite(void) {
        Suite *s = suite_create("classes");
        TCase *tc = tcase_create("classes");

        tcase_add_test(tc, test_apply);
        tcase_add_test(tc, test_device_follows);
        tcase_add_test(tc, test_device_taken);
        tcase_add_test(tc, test_remove_if_unused);
        suite_add_tcase(s, tc);
        return s;
}
