/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * requests.c: the control socket's requests as the daemon dispatches them,
 * over the modules of a fake daemon (fake-daemon.h) holding three running
 * jobs (root's "nightly", and a "copy" each of uids 1000 and 1001) and one
 * ended job in its history.  Who may do what, which job a name means, and
 * what reload answers; nothing here sends a signal or freezes anything.
 */
#include "fake-daemon.h"
#include "requests.h"

static void tree(const char *dir) {
        static const char *const class[] = {
                "memory.high=268435456\n", "memory.max=max\n",          "cgroup.events=populated 1\nfrozen 0\n",
                "cgroup.freeze=0\n",       "memory.current=52428800\n", NULL
        };

        fake_cgroup_files(dir, "pagewarden.slice/backup", class);
        fake_job_slot(dir, "pagewarden.slice/backup/slot-0",
                      "id=7 uid=0 started=1714644300250000 name=nightly by=rule exe /usr/bin/borg (jobs.yaml:4)");
        fake_job_slot(dir, "pagewarden.slice/backup/slot-1",
                      "id=8 uid=1000 started=1714644301000000 name=copy by=move");
        fake_job_slot(dir, "pagewarden.slice/backup/slot-2", "id=9 uid=1001 started=1714644302000000 name=copy by=run");
}

static struct fake_daemon d;
static unsigned reloads;

static void setup(void) {
        json_object *ended = json_object_new_object();

        fake_daemon_start(&d,
                          "jobs:\n"
                          "  backup:\n"
                          "    memory: {high: 256M}\n"
                          "    users: [root, '1000', '1001']\n"
                          "protect:\n"
                          "  db:\n"
                          "    cgroup: /system.slice/db.service\n"
                          "    memory: {min: 64M}\n",
                          tree);
        ck_assert_uint_eq(d.jobs.n, 3);
        json_object_object_add(ended, "id", json_object_new_int64(5));
        json_object_object_add(ended, "name", json_object_new_string("weekly"));
        json_object_object_add(ended, "uid", json_object_new_int64(1000));
        json_object_object_add(ended, "ended", json_object_new_int64((int64_t) (now_usec(CLOCK_REALTIME) / 1000000)));
        ck_assert_int_eq(history_add(&d.history, ended), 0);
        reloads = 0;
}

static void teardown(void) {
        fake_daemon_stop(&d);
}

/* The answer to command (job: its job argument) from uid; the caller puts it. */
static json_object *ask(uid_t uid, enum pw_command command, const char *job) {
        struct ucred peer = { .pid = 4321, .uid = uid, .gid = uid };
        struct pw_request req = { .command = command };
        json_object *o;

        if (job)
                snprintf(req.job, sizeof(req.job), "%s", job);
        o = requests_handle(&d.api, 1, &peer, &req);
        ck_assert_ptr_nonnull(o);
        ck_assert_ptr_ne(o, CONTROL_LATER);
        return json_as_sent(o);
}

static bool answer_ok(json_object *o) {
        json_object *ok;

        return json_object_object_get_ex(o, "ok", &ok) && json_object_get_boolean(ok);
}

static void assert_error(json_object *o, const char *needle) {
        json_object *e;

        ck_assert_msg(!answer_ok(o), "not an error: %s", json_object_to_json_string(o));
        ck_assert(json_object_object_get_ex(o, "error", &e));
        ck_assert_msg(strstr(json_object_get_string(e), needle), "error \"%s\" does not say \"%s\"",
                      json_object_get_string(e), needle);
        json_object_put(o);
}

/* The id of the job an answer to show gives (-1: none). */
static int64_t shown_id(json_object *o) {
        json_object *job, *id;
        int64_t r = -1;

        if (answer_ok(o) && json_object_object_get_ex(o, "job", &job) && json_object_object_get_ex(job, "id", &id))
                r = json_object_get_int64(id);
        json_object_put(o);
        return r;
}

START_TEST(test_show_by_name) {
        /* Names are not unique: the caller's own job of that name first, else the only one. */
        ck_assert_int_eq(shown_id(ask(1000, PW_CMD_SHOW, "copy")), 8);
        ck_assert_int_eq(shown_id(ask(1001, PW_CMD_SHOW, "copy")), 9);
        ck_assert_int_eq(shown_id(ask(1000, PW_CMD_SHOW, "nightly")), 7);
        assert_error(ask(0, PW_CMD_SHOW, "copy"), "2 jobs are named 'copy': give the job's id");
        assert_error(ask(1002, PW_CMD_SHOW, "copy"), "2 jobs are named 'copy'");
        /* An id is never a name. */
        ck_assert_int_eq(shown_id(ask(1002, PW_CMD_SHOW, "9")), 9);
        assert_error(ask(0, PW_CMD_SHOW, "99"), "no job 99");
        assert_error(ask(0, PW_CMD_SHOW, "nope"), "no job 'nope'");
}
END_TEST

START_TEST(test_show_ended) {
        /* Not running: the last report of that name from the history. */
        ck_assert_int_eq(shown_id(ask(1000, PW_CMD_SHOW, "weekly")), 5);
        ck_assert_int_eq(shown_id(ask(0, PW_CMD_SHOW, "5")), 5);
}
END_TEST

START_TEST(test_list) {
        json_object *o = ask(1001, PW_CMD_LIST, NULL), *jobs, *ended;
        struct pw_request all = { .command = PW_CMD_LIST, .all = true };
        struct ucred peer = { .uid = 1001 };

        ck_assert(answer_ok(o));
        ck_assert(json_object_object_get_ex(o, "jobs", &jobs));
        ck_assert_uint_eq(json_object_array_length(jobs), 3);
        ck_assert(!json_object_object_get_ex(o, "ended", NULL));
        json_object_put(o);
        o = json_as_sent(requests_handle(&d.api, 1, &peer, &all));
        ck_assert(json_object_object_get_ex(o, "ended", &ended));
        ck_assert_uint_eq(json_object_array_length(ended), 1);
        json_object_put(o);
}
END_TEST

START_TEST(test_job_verbs_own_user) {
        /* Another user's job: refused before anything is read of its processes. */
        assert_error(ask(1001, PW_CMD_STOP, "8"), "job 8 is uid 1000's: only root and its own user may stop it");
        assert_error(ask(1001, PW_CMD_KILL, "nightly"), "job 7 is uid 0's: only root and its own user may kill it");
        assert_error(ask(1000, PW_CMD_FREEZE, "9"), "may freeze it");
        assert_error(ask(1000, PW_CMD_THAW, "9"), "may thaw it");
        /* An ended job is not a running one. */
        assert_error(ask(1000, PW_CMD_STOP, "weekly"), "no job 'weekly'");
}
END_TEST

static int reload_counted(void *userdata, api_reloaded_fn done, void *done_userdata) {
        reloads++;
        done(done_userdata, 0, NULL);
        return 0;
}

static int reload_invalid(void *userdata, api_reloaded_fn done, void *done_userdata) {
        reloads++;
        done(done_userdata, -EINVAL, "pagewarden.yaml:3:7: error: unknown key 'hihg'");
        return 0;
}

static int reload_stopped(void *userdata, api_reloaded_fn done, void *done_userdata) {
        done(done_userdata, -ESHUTDOWN, NULL);
        return 0;
}

static int reload_impossible(void *userdata, api_reloaded_fn done, void *done_userdata) {
        return -ENOMEM;
}

START_TEST(test_reload) {
        json_object *o, *v;

        d.api.reload = reload_counted;
        assert_error(ask(1000, PW_CMD_RELOAD, NULL), "only root may reload the policy");
        d.stopping = true;
        assert_error(ask(0, PW_CMD_RELOAD, NULL), "the daemon is stopping");
        ck_assert_uint_eq(reloads, 0);
        d.stopping = false;
        /* Answered at once: this backend has no writes that are answered later. */
        o = ask(0, PW_CMD_RELOAD, NULL);
        ck_assert(answer_ok(o));
        ck_assert(json_object_object_get_ex(o, "classes", &v));
        ck_assert_int_eq(json_object_get_int64(v), 1);
        ck_assert(json_object_object_get_ex(o, "protected", &v));
        ck_assert_int_eq(json_object_get_int64(v), 1);
        json_object_put(o);
        ck_assert_uint_eq(reloads, 1);
        /* An invalid policy: the running one stays, and the diagnostics go to the caller. */
        d.api.reload = reload_invalid;
        o = ask(0, PW_CMD_RELOAD, NULL);
        ck_assert(json_object_object_get_ex(o, "diagnostics", &v));
        ck_assert_str_eq(json_object_get_string(v), "pagewarden.yaml:3:7: error: unknown key 'hihg'");
        assert_error(o, "the new policy is invalid; the running policy stays in force");
        ck_assert_uint_eq(reloads, 2);
        /* The daemon stopped while the files were read; no round could begin. */
        d.api.reload = reload_stopped;
        assert_error(ask(0, PW_CMD_RELOAD, NULL), "the daemon is stopping");
        d.api.reload = reload_impossible;
        assert_error(ask(0, PW_CMD_RELOAD, NULL), "cannot reload: Cannot allocate memory");
}
END_TEST

START_TEST(test_suggest_root_only) {
        json_object *o, *classes;

        /* It names other users' command lines. */
        assert_error(ask(1000, PW_CMD_SUGGEST, NULL), "only root may read what observation found");
        o = ask(0, PW_CMD_SUGGEST, NULL);
        ck_assert(answer_ok(o));
        ck_assert(json_object_object_get_ex(o, "classes", &classes));
        ck_assert_uint_eq(json_object_array_length(classes), 1);
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(classes, 0)), "backup");
        json_object_put(o);
}
END_TEST

Suite *requests_suite(void) {
        Suite *s = suite_create("requests");
        TCase *tc = tcase_create("requests");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_show_by_name);
        tcase_add_test(tc, test_show_ended);
        tcase_add_test(tc, test_list);
        tcase_add_test(tc, test_job_verbs_own_user);
        tcase_add_test(tc, test_reload);
        tcase_add_test(tc, test_suggest_root_only);
        suite_add_tcase(s, tc);
        return s;
}
