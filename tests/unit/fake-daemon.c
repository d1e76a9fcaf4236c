/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <sys/xattr.h>

#include "cgroup.h"
#include "fake-daemon.h"
#include "status.h"

static char *fake_class_path(struct backend *b, const char *class) {
        char *p;

        return asprintf(&p, "pagewarden.slice/%s", class) < 0 ? NULL : p;
}

static int fake_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path) {
        if (!p->cgroup)
                return -EOPNOTSUPP;
        *ret_path = strdup(p->cgroup);
        return *ret_path ? 0 : -ENOMEM;
}

static int fake_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        return cgroup_scan(b->engine, ret, ret_n);
}

static int fake_thaw_all(struct backend *b) {
        return 0;
}

static int fake_class_apply(struct backend *b, const struct pw_job_class *c) {
        return 0;
}

static const struct backend_ops fake_ops = {
        .name = "fake",
        .caps = { .releases_jobs = true },
        .class_apply = fake_class_apply,
        .class_path = fake_class_path,
        .protect_path = fake_protect_path,
        .scan = fake_scan,
        .thaw_all = fake_thaw_all,
};

static void on_changed(void *userdata, const char *class, bool ended) {
}

void fake_cgroup_files(const char *dir, const char *cgroup, const char *const *files) {
        for (size_t i = 0; files[i]; i++) {
                const char *eq = strchr(files[i], '=');
                _cleanup_free_ char *name = NULL;

                ck_assert_ptr_nonnull(eq);
                ck_assert_int_ge(asprintf(&name, "%s/%.*s", cgroup, (int) (eq - files[i]), files[i]), 0);
                free(write_file(dir, name, eq + 1));
        }
}

void fake_job_slot(const char *dir, const char *slot, const char *label) {
        static const char *const files[] = { "cgroup.events=populated 1\nfrozen 0\n",
                                             "cgroup.procs=4242\n",
                                             "cgroup.freeze=0\n",
                                             "memory.current=41943040\n",
                                             "memory.stat=anon 1048576\nfile 40894464\n",
                                             "memory.high=268435456\n",
                                             "memory.max=max\n",
                                             "memory.events=low 0\nhigh 3\nmax 0\noom 0\noom_kill 0\n",
                                             "io.stat=8:0 rbytes=1000 wbytes=2000 rios=1 wios=1\n",
                                             NULL };
        _cleanup_free_ char *path = NULL;

        fake_cgroup_files(dir, slot, files);
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, slot), 0);
        ck_assert_msg(setxattr(path, "user.pagewarden.job", label, strlen(label), 0) == 0,
                      "setxattr %s: %m (the unit tests need user xattrs on /tmp, as cgroupfs has them)", path);
}

static int reload_refused(void *userdata, api_reloaded_fn done, void *done_userdata) {
        done(done_userdata, -EINVAL, NULL);
        return 0;
}

void fake_daemon_start(struct fake_daemon *d, const char *policy, void (*tree)(const char *dir)) {
        struct parse_result p;

        *d = (struct fake_daemon){ .backend = { .ops = &fake_ops, .root = (char *) "pagewarden.slice" } };
        parse_policy(policy, &p);
        ck_assert_msg(p.r == 0, "%s", p.errors);
        d->policy = p.policy;
        p.policy = (struct pw_policy){};
        parse_result_done(&p);
        d->dir = tmpdir_new();
        if (tree)
                tree(d->dir);
        ck_assert_int_ge(sd_event_new(&d->event), 0);
        ck_assert_int_eq(cgroup_engine_new(d->dir, "pagewarden.slice", false, &d->backend.engine), 0);
        ck_assert_int_eq(history_init(&d->history, NULL, NULL, 100, 30 * 86400), 0);
        jobs_init(&d->jobs, d->event, &d->backend, &d->log, on_changed, NULL, NULL);
        ck_assert_int_eq(jobs_adopt(&d->jobs), 0);
        d->classes = (struct classes){ .backend = &d->backend, .policy = &d->policy, .jobs = &d->jobs, .log = &d->log };
        classes_apply(&d->classes);
        govern_init(&d->govern);
        d->govern.policy = &d->policy;
        d->govern.classes = &d->classes;
        d->govern.jobs = &d->jobs;
        d->govern.protect = &d->protect;
        ck_assert_int_eq(observe_init(&d->observe, NULL, d->backend.engine, NULL, NULL, NULL, 86400), 0);
        d->api = (struct api){ .event = d->event,
                               .backend = &d->backend,
                               .policy = &d->policy,
                               .classes = &d->classes,
                               .jobs = &d->jobs,
                               .history = &d->history,
                               .govern = &d->govern,
                               .protect = &d->protect,
                               .observe = &d->observe,
                               .log = &d->log,
                               .loop = &d->loop,
                               .stopping = &d->stopping,
                               .reload = reload_refused };
}

void fake_daemon_stop(struct fake_daemon *d) {
        status_done(&d->api);
        observe_done(&d->observe);
        govern_done(&d->govern);
        classes_done(&d->classes);
        jobs_done(&d->jobs);
        history_done(&d->history);
        action_log_done(&d->log);
        policy_done(&d->policy);
        cgroup_engine_free(d->backend.engine);
        d->event = sd_event_unref(d->event);
        tmpdir_cleanup(d->dir);
}
