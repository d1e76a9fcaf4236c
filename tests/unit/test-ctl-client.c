/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The client's exchange with a daemon played by a child process over a socketpair. */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "ctl-client.h"

/* The child reads the request line, then sends a status response with n_jobs jobs (or garbage of size bytes). */
static pid_t serve(int fd, unsigned n_jobs) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                FILE *f = fdopen(fd, "r+");
                char line[4096];

                if (!f || !fgets(line, sizeof(line), f))
                        _exit(1);
                fputs("{\"ok\":true,\"jobs\":[", f);
                for (unsigned i = 0; i < n_jobs; i++)
                        fprintf(f,
                                "%s{\"id\":%u,\"name\":\"job-%u\",\"class\":\"backup\",\"cgroup\":"
                                "\"/pagewarden.slice/backup/slot-%u\",\"uid\":0,\"user\":\"root\",\"started\":"
                                "1764547200,\"pids\":1,\"memory_current\":123456789,\"memory_file\":12345678,"
                                "\"class_in_policy\":true,\"state\":\"running\",\"placed_by\":\"run\"}",
                                i ? "," : "", i, i, i);
                fputs("]}\n", f);
                fclose(f);
                _exit(0);
        }
        return pid;
}

static int exchange(unsigned n_jobs, size_t *ret_len) {
        struct pw_request req = { .command = PW_CMD_STATUS };
        struct ctl_response resp = {};
        int sv[2], r;
        pid_t child;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        child = serve(sv[1], n_jobs);
        close(sv[1]);
        r = ctl_exchange(sv[0], &req, -1, &resp);
        *ret_len = resp.line ? strlen(resp.line) : 0;
        ctl_response_done(&resp);
        close(sv[0]);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return r;
}

START_TEST(test_ctl_client_status_of_thousands_of_jobs) {
        size_t len;

        /* 5,000 jobs: about 1.3 MB, past the old 1 MiB limit. */
        ck_assert_int_eq(exchange(5000, &len), 0);
        ck_assert_uint_gt(len, 1024 * 1024);
        /* A response past CTL_MAX_RESPONSE is cut off, not read without end. */
        ck_assert_int_eq(exchange(80000, &len), -EFBIG);
}
END_TEST

/* A daemon that refuses a connection writes an error line and closes before the request is sent. */
START_TEST(test_ctl_client_refused_before_sending) {
        const char line[] = "{\"ok\":false,\"error\":\"uid 1000 has 8 connections open\"}\n";
        struct pw_request req = { .command = PW_CMD_VERSION };
        struct ctl_response resp = {};
        int sv[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(write(sv[1], line, strlen(line)), (ssize_t) strlen(line));
        close(sv[1]);
        ck_assert_int_eq(ctl_exchange(sv[0], &req, -1, &resp), 0);
        ck_assert(!resp.ok);
        ck_assert_str_eq(ctl_response_error(&resp), "uid 1000 has 8 connections open");
        ctl_response_done(&resp);
        close(sv[0]);
}
END_TEST

/* A daemon busy for its first two connections: the client tries again, on a new connection, and is answered. */
START_TEST(test_ctl_client_retries_when_busy) {
        const char busy[] = "{\"ok\":false,\"error\":\"64 clients are connected\",\"busy\":true}\n";
        struct pw_request req = { .command = PW_CMD_STATUS };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct ctl_response resp = {};
        char *dir = tmpdir_new();
        int lfd, fd = -1;
        pid_t child;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s", dir);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(lfd, 0);
        ck_assert_int_eq(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(lfd, 4), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                for (int i = 0; i < 3; i++) {
                        int c = accept(lfd, NULL, NULL);
                        const char *answer = i < 2 ? busy : "{\"ok\":true,\"jobs\":[]}\n";

                        if (c < 0 || write(c, answer, strlen(answer)) < 0)
                                _exit(1);
                        close(c);
                }
                _exit(0);
        }
        close(lfd);
        ck_assert_int_eq(ctl_connect(sa.sun_path, &fd), 0);
        ck_assert_int_eq(ctl_exchange_retry(sa.sun_path, &fd, &req, -1, &resp), 0);
        ck_assert(resp.ok);
        ctl_response_done(&resp);
        close(fd);
        waitpid(child, NULL, 0);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *ctl_client_suite(void) {
        Suite *s = suite_create("ctl-client");
        TCase *tc = tcase_create("exchange");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_ctl_client_status_of_thousands_of_jobs);
        tcase_add_test(tc, test_ctl_client_refused_before_sending);
        tcase_add_test(tc, test_ctl_client_retries_when_busy);
        suite_add_tcase(s, tc);
        return s;
}
