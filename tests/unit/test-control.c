/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket: who is admitted (pure), the refusal log's rate limit
 * (pure, with the clock passed in), the socket's mode and group without
 * following symlinks, and live: a socket served by an sd-event loop here,
 * connections held open by other users from forked children that setuid().
 * The live tests need root; they are skipped when not root, unless CI=true,
 * where that is a failure.
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "common.h"
#include "control.h"

/* ---- admission, pure ---------------------------------------------------- */

START_TEST(test_control_admit_table) {
        static const struct {
                uid_t uid;
                unsigned n_clients, n_uid_clients;
                enum control_verdict v;
        } cases[] = {
                { 0, 0, 0, CONTROL_ADMIT },
                { 0, CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE, 0, CONTROL_ADMIT },
                { 0, CONTROL_MAX_CLIENTS - 1, CONTROL_MAX_CLIENTS - 1, CONTROL_ADMIT },
                { 0, CONTROL_MAX_CLIENTS, 0, CONTROL_REFUSE_FULL },
                { 1000, 0, 0, CONTROL_ADMIT },
                { 1000, 10, CONTROL_MAX_CLIENTS_PER_UID - 1, CONTROL_ADMIT },
                { 1000, 10, CONTROL_MAX_CLIENTS_PER_UID, CONTROL_REFUSE_USER },
                { 1000, CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE - 1, 0, CONTROL_ADMIT },
                { 1000, CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE, 0, CONTROL_REFUSE_FULL },
                { 1000, CONTROL_MAX_CLIENTS, CONTROL_MAX_CLIENTS_PER_UID, CONTROL_REFUSE_USER },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(control_admit(cases[i].uid, cases[i].n_clients, cases[i].n_uid_clients) == cases[i].v,
                              "case %zu", i);
}
END_TEST

/* The clients of each uid, admitted one by one as control_admit() says, the way on_accept() keeps them. */
struct population {
        unsigned n, of[10]; /* of[0]: root's; of[i]: uid 1000 + i */
};

static bool try_connect(struct population *p, unsigned who) {
        uid_t uid = who == 0 ? 0 : 1000 + who;

        if (control_admit(uid, p->n, p->of[who]) != CONTROL_ADMIT)
                return false;
        p->n++;
        p->of[who]++;
        return true;
}

START_TEST(test_control_admit_nobody_locks_out_root) {
        struct population p = {};
        unsigned got;

        /* One user who never lets go gets its share, and no more. */
        for (got = 0; try_connect(&p, 1); got++)
                ;
        ck_assert_uint_eq(got, CONTROL_MAX_CLIENTS_PER_UID);
        /* ... and does not keep another user out. */
        ck_assert(try_connect(&p, 2));
        /* Every other user holding all they may: the shared part is full, root's reserve is not. */
        for (unsigned u = 2; u < ELEMENTSOF(p.of); u++)
                while (try_connect(&p, u))
                        ;
        ck_assert_uint_eq(p.n, CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE);
        for (got = 0; try_connect(&p, 0); got++)
                ;
        ck_assert_uint_eq(got, CONTROL_ROOT_RESERVE);
        ck_assert_uint_eq(p.n, CONTROL_MAX_CLIENTS);
}
END_TEST

/* Over every state: root is admitted while there is room at all; nobody else beyond the shared part or its share. */
START_TEST(test_control_admit_invariants) {
        for (unsigned n = 0; n <= CONTROL_MAX_CLIENTS + 2; n++)
                for (unsigned mine = 0; mine <= n; mine++) {
                        enum control_verdict root = control_admit(0, n, mine);
                        enum control_verdict user = control_admit(1000, n, mine);

                        ck_assert_int_eq(root == CONTROL_ADMIT, n < CONTROL_MAX_CLIENTS);
                        ck_assert_int_eq(user == CONTROL_ADMIT, n < CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE &&
                                                                        mine < CONTROL_MAX_CLIENTS_PER_UID);
                }
}
END_TEST

/* ---- the refusal log's rate limit, pure --------------------------------- */

#define SEC UINT64_C(1000000)
#define INTERVAL CONTROL_REFUSAL_LOG_INTERVAL_USEC

START_TEST(test_control_ratelimit_one_user) {
        struct control_ratelimit rl = {};
        unsigned suppressed = 99;

        /* The first refusal is logged, also at time 0 of the clock. */
        ck_assert(control_ratelimit_allow(&rl, 1000, 0, &suppressed));
        ck_assert_uint_eq(suppressed, 0);
        for (unsigned i = 0; i < 500; i++)
                ck_assert(!control_ratelimit_allow(&rl, 1000, i * (INTERVAL / 500), &suppressed));
        /* Another user has a line of their own meanwhile. */
        ck_assert(control_ratelimit_allow(&rl, 1001, 3 * SEC, &suppressed));
        ck_assert_uint_eq(suppressed, 0);
        /* The next line comes after the interval and tells how many were not logged. */
        ck_assert(control_ratelimit_allow(&rl, 1000, INTERVAL, &suppressed));
        ck_assert_uint_eq(suppressed, 500);
        ck_assert(!control_ratelimit_allow(&rl, 1000, INTERVAL + 1, &suppressed));
        ck_assert(control_ratelimit_allow(&rl, 1000, 5 * INTERVAL, &suppressed));
        ck_assert_uint_eq(suppressed, 1);
}
END_TEST

START_TEST(test_control_ratelimit_many_users) {
        struct control_ratelimit rl = {};
        unsigned suppressed;

        for (uid_t u = 0; u < CONTROL_REFUSAL_LOG_USERS; u++)
                ck_assert(control_ratelimit_allow(&rl, 2000 + u, 0, &suppressed));
        /* No entry left: counted, not logged; told with a later line. */
        ck_assert(!control_ratelimit_allow(&rl, 5000, 1, &suppressed));
        ck_assert(!control_ratelimit_allow(&rl, 5001, 2, &suppressed));
        ck_assert(control_ratelimit_allow(&rl, 5000, INTERVAL, &suppressed));
        ck_assert_uint_eq(suppressed, 2);
}
END_TEST

/* Many users refused at random times: a user's lines are an interval apart, at most
 * CONTROL_REFUSAL_LOG_USERS lines in any interval, and every refusal is logged or counted once. */
START_TEST(test_control_ratelimit_invariants) {
        enum { N_USERS = 40, N_EVENTS = 200000 };
        struct control_ratelimit rl = {};
        uint64_t last[N_USERS] = {}, *lines = calloc(N_EVENTS, sizeof(uint64_t));
        uint64_t now = 0, told = 0, pending;
        size_t n_lines = 0, first = 0;
        uint32_t seed = 12345;

        ck_assert_ptr_nonnull(lines);
        for (unsigned i = 0; i < N_EVENTS; i++) {
                unsigned suppressed, u;

                seed = seed * 1103515245 + 12345;
                u = (seed >> 16) % N_USERS;
                now += (seed >> 8) % 3000; /* 1.5 ms on average: 300 s in all */
                if (!control_ratelimit_allow(&rl, 3000 + u, now, &suppressed))
                        continue;
                ck_assert_msg(last[u] == 0 || now - last[u] >= INTERVAL, "user %u logged twice in an interval", u);
                last[u] = now;
                told += 1 + suppressed;
                lines[n_lines++] = now;
                while (now - lines[first] >= INTERVAL)
                        first++;
                ck_assert_uint_le(n_lines - first, CONTROL_REFUSAL_LOG_USERS);
        }
        pending = rl.suppressed;
        for (size_t i = 0; i < ELEMENTSOF(rl.entries); i++)
                pending += rl.entries[i].suppressed;
        ck_assert_uint_eq(told + pending, N_EVENTS);
        ck_assert_uint_gt(n_lines, N_USERS); /* the test tested something */
        free(lines);
}
END_TEST

/* ---- the socket file ---------------------------------------------------- */

static json_object *echo_handler(void *userdata, uint64_t client, const struct ucred *peer,
                                 const struct pw_request *req) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "uid", json_object_new_int64(peer->uid));
        return o;
}

/* A group to give the socket: one that is not ours when root, so that the change shows. */
static gid_t test_gid(void) {
        return geteuid() == 0 ? 4242 : getegid();
}

static char *gid_string(gid_t gid) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "%u", (unsigned) gid), 0);
        return s;
}

START_TEST(test_control_socket_mode) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *path = path_join(dir, "sub/control.sock"), *group = gid_string(test_gid());
        struct control *c = NULL;
        sd_event *e = NULL;
        struct stat st;
        mode_t old;

        ck_assert_int_ge(sd_event_new(&e), 0);
        /* Whatever the daemon's umask, the socket is 0660 (and created so: see bind_socket()). */
        old = umask(0);
        ck_assert_int_eq(control_new(e, path, group, echo_handler, NULL, &c), 0);
        umask(old);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 07777, 0660);
        ck_assert_uint_eq(st.st_gid, test_gid());
        c = control_free(c);
        ck_assert_int_eq(lstat(path, &st), -1);
        e = sd_event_unref(e);
        tmpdir_cleanup(dir);
}
END_TEST

/* A Unix socket file at path with nothing listening on it. */
static void make_stale_socket(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
}

START_TEST(test_control_socket_stale) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *path = path_join(dir, "control.sock"), *group = gid_string(getegid());
        struct control *c = NULL, *c2 = NULL;
        sd_event *e = NULL;

        ck_assert_int_ge(sd_event_new(&e), 0);
        make_stale_socket(path);
        ck_assert_int_eq(control_new(e, path, group, echo_handler, NULL, &c), 0);
        /* But not one that a daemon answers on. */
        ck_assert_int_eq(control_new(e, path, group, echo_handler, NULL, &c2), -EADDRINUSE);
        c = control_free(c);
        e = sd_event_unref(e);
        tmpdir_cleanup(dir);
}
END_TEST

START_TEST(test_control_socket_symlink_refused) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *path = path_join(dir, "control.sock"), *target = write_file(dir, "target", "secret\n");
        _cleanup_free_ char *group = gid_string(getegid());
        struct control *c = NULL;
        sd_event *e = NULL;
        struct stat st;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(chmod(target, 0600), 0);
        ck_assert_int_eq(symlink(target, path), 0);
        ck_assert_int_eq(control_new(e, path, group, echo_handler, NULL, &c), -EEXIST);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISLNK(st.st_mode));
        ck_assert_int_eq(stat(target, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        e = sd_event_unref(e);
        tmpdir_cleanup(dir);
}
END_TEST

/* What listen_on() does once the socket is bound, on a name that is not (or no longer) the socket. */
START_TEST(test_control_socket_set_access) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *sock = path_join(dir, "s.sock"), *target = write_file(dir, "target", "secret\n");
        _cleanup_free_ char *link = path_join(dir, "link");
        _cleanup_close_ int dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        gid_t other = test_gid();
        struct stat st;

        ck_assert_int_ge(dir_fd, 0);
        ck_assert_int_eq(chmod(target, 0600), 0);
        ck_assert_int_eq(symlink(target, link), 0);
        ck_assert_int_eq(control_socket_set_access(dir_fd, "link", other), -ENOTSOCK);
        ck_assert_int_eq(control_socket_set_access(dir_fd, "target", other), -ENOTSOCK);
        ck_assert_int_eq(stat(target, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_uint_eq(st.st_gid, getegid());
        /* A socket with a wider mode (a default ACL, say) is set to 0660 and given the group. */
        make_stale_socket(sock);
        ck_assert_int_eq(chmod(sock, 0777), 0);
        ck_assert_int_eq(control_socket_set_access(dir_fd, "s.sock", other), 0);
        ck_assert_int_eq(lstat(sock, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0660);
        ck_assert_uint_eq(st.st_gid, other);
        tmpdir_cleanup(dir);
}
END_TEST

/*
 * The race of the review: between bind() and setting the mode, someone who
 * can write to the socket's directory puts a symlink where the socket was.
 * A thread does that as fast as it can while the socket is created again and
 * again; the symlink's target must never be changed.
 */
struct swapper {
        const char *dir, *path, *target;
        volatile bool stop;
};

static void *swap_in_symlinks(void *userdata) {
        struct swapper *s = userdata;
        _cleanup_free_ char *tmp = path_join(s->dir, "tmp-link");

        while (!s->stop) {
                (void) symlink(s->target, tmp);
                (void) rename(tmp, s->path);
        }
        return NULL;
}

START_TEST(test_control_socket_symlink_race) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *path = path_join(dir, "control.sock"), *target = write_file(dir, "target", "secret\n");
        _cleanup_free_ char *group = gid_string(test_gid());
        struct swapper s = { .dir = dir, .path = path, .target = target };
        unsigned created = 0, refused = 0;
        uint64_t end = now_usec(CLOCK_MONOTONIC) + 2 * SEC;
        _cleanup_close_ int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        int saved_stderr;
        sd_event *e = NULL;
        pthread_t t;
        struct stat st;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(chmod(target, 0600), 0);
        /* Each refusal is logged; thousands of lines say nothing here. */
        fflush(stderr);
        saved_stderr = dup(STDERR_FILENO);
        ck_assert_int_eq(dup2(null_fd, STDERR_FILENO), STDERR_FILENO);
        ck_assert_int_eq(pthread_create(&t, NULL, swap_in_symlinks, &s), 0);
        while (now_usec(CLOCK_MONOTONIC) < end) {
                struct control *c = NULL;

                (void) unlink(path);
                if (control_new(e, path, group, echo_handler, NULL, &c) == 0)
                        created++;
                else
                        refused++;
                c = control_free(c);
                ck_assert_int_eq(stat(target, &st), 0);
                ck_assert_msg((st.st_mode & 07777) == 0600 && st.st_gid == getegid(),
                              "the symlink's target was changed: mode %o, gid %u", st.st_mode & 07777,
                              (unsigned) st.st_gid);
        }
        s.stop = true;
        pthread_join(t, NULL);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        printf("# symlink race: %u sockets created, %u refused, target untouched\n", created, refused);
        fflush(stdout);
        ck_assert_uint_gt(created + refused, 100);
        e = sd_event_unref(e);
        tmpdir_cleanup(dir);
}
END_TEST

/* ---- live: other users' connections held open --------------------------- */

#define SOCKET_GID 60000
#define HOLDER_UID 60001 /* ... and up */

/* The live tests need root (setuid); CI must not skip them. */
static bool live_tests_can_run(const char *name) {
        const char *ci = getenv("CI");

        if (geteuid() == 0)
                return true;
        ck_assert_msg(!streq_ptr(ci, "true"), "%s needs root, and CI=true", name);
        printf("# %s: skipped, not root (setuid() is needed)\n", name);
        fflush(stdout);
        return false;
}

/* The handler the live tests' control runs (its userdata: the struct live). */
static control_handler live_handler = echo_handler;

struct live {
        char *dir, *path, *log;
        sd_event *event;
        struct control *control;
        int saved_stderr; /* stderr goes to log, to count the lines logged */
        pid_t holders[16];
        unsigned n_holders;
        uint64_t later_client;
};

static void live_start(struct live *l) {
        _cleanup_free_ char *group = gid_string(SOCKET_GID);
        _cleanup_close_ int log_fd = -1;

        *l = (struct live){ .dir = tmpdir_new() };
        ck_assert_int_eq(chmod(l->dir, 0755), 0);
        l->path = path_join(l->dir, "control.sock");
        l->log = path_join(l->dir, "log");
        log_fd = open(l->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        ck_assert_int_ge(log_fd, 0);
        fflush(stderr);
        l->saved_stderr = dup(STDERR_FILENO);
        ck_assert_int_eq(dup2(log_fd, STDERR_FILENO), STDERR_FILENO);
        ck_assert_int_ge(sd_event_new(&l->event), 0);
        ck_assert_int_eq(control_new(l->event, l->path, group, live_handler, l, &l->control), 0);
}

/* The lines logged so far that contain needle. */
static unsigned live_log_count(struct live *l, const char *needle) {
        _cleanup_fclose_ FILE *f = fopen(l->log, "re");
        char line[1024];
        unsigned n = 0;

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                n += strstr(line, needle) != NULL;
        return n;
}

static void live_stop(struct live *l) {
        for (unsigned i = 0; i < l->n_holders; i++) {
                kill(l->holders[i], SIGKILL);
                waitpid(l->holders[i], NULL, 0);
        }
        l->control = control_free(l->control);
        l->event = sd_event_unref(l->event);
        dup2(l->saved_stderr, STDERR_FILENO);
        close(l->saved_stderr);
        free(l->log);
        free(l->path);
        tmpdir_cleanup(l->dir);
}

static void become(uid_t uid) {
        if (uid == 0)
                return;
        if (setgroups(0, NULL) < 0 || setgid(SOCKET_GID) < 0 || setuid(uid) < 0)
                _exit(100);
}

static int connect_to(const char *path) {
        const struct timeval timeout = { .tv_sec = 10 };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout)) < 0 ||
            connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                _exit(101);
        return fd;
}

/* Runs the loop until fd is readable (a child's report). */
static void live_wait_for(struct live *l, int fd) {
        uint64_t end = now_usec(CLOCK_MONOTONIC) + 20 * SEC;
        struct pollfd p = { .fd = fd, .events = POLLIN };

        while (poll(&p, 1, 0) == 0) {
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) < end, "a child did not report within 20 s");
                ck_assert_int_ge(sd_event_run(l->event, 10 * 1000), 0);
        }
        /* And what is queued now, the child's last connections among it. */
        while (sd_event_run(l->event, 0) > 0)
                ;
}

/* A child of uid connects n times and keeps every connection open, idle, until killed. */
static void live_hold(struct live *l, uid_t uid, unsigned n) {
        int p[2];
        pid_t pid;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                become(uid);
                for (unsigned i = 0; i < n; i++)
                        (void) connect_to(l->path);
                (void) !write(p[1], "x", 1);
                for (;;)
                        pause();
        }
        close(p[1]);
        l->holders[l->n_holders++] = pid;
        live_wait_for(l, p[0]);
        ck_assert_msg(read(p[0], &(char){ 0 }, 1) == 1, "uid %u could not connect %u times", (unsigned) uid, n);
        close(p[0]);
}

struct answer {
        uint64_t usec; /* connect, send, read the line */
        char line[512];
};

/* A child of uid sends a request and reports the line it got and how long that took. */
static struct answer live_request(struct live *l, uid_t uid) {
        struct answer a = {};
        int p[2], status;
        pid_t pid;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                const char req[] = "{\"command\":\"version\"}\n";
                uint64_t start;
                size_t len = 0;
                ssize_t k;
                int fd;

                become(uid);
                start = now_usec(CLOCK_MONOTONIC);
                fd = connect_to(l->path);
                (void) send(fd, req, strlen(req), MSG_NOSIGNAL);
                while (len < sizeof(a.line) - 1 && !memchr(a.line, '\n', len) &&
                       (k = recv(fd, a.line + len, sizeof(a.line) - 1 - len, 0)) > 0)
                        len += (size_t) k;
                a.usec = now_usec(CLOCK_MONOTONIC) - start;
                (void) !write(p[1], &a, sizeof(a));
                _exit(0);
        }
        close(p[1]);
        live_wait_for(l, p[0]);
        ck_assert_int_eq(read(p[0], &a, sizeof(a)), (ssize_t) sizeof(a));
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "request child failed: %d", status);
        return a;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Root's request while one user holds n idle connections: answered, promptly, every time. */
static void root_answered_while_held(unsigned n) {
        struct live l;
        uint64_t usec[5];
        struct answer a;

        live_start(&l);
        live_hold(&l, HOLDER_UID, n);
        for (size_t i = 0; i < ELEMENTSOF(usec); i++) {
                a = live_request(&l, 0);
                ck_assert_msg(strstr(a.line, "\"ok\":true") && strstr(a.line, "\"uid\":0"),
                              "root's request with %u idle connections of uid %u held: got '%s'", n, HOLDER_UID,
                              a.line);
                usec[i] = a.usec;
        }
        qsort(usec, ELEMENTSOF(usec), sizeof(usec[0]), cmp_u64);
        printf("# root's request with %u idle connections of uid %u held: median %.3f ms, max %.3f ms\n", n, HOLDER_UID,
               usec[2] / 1000.0, usec[4] / 1000.0);
        fflush(stdout);
        ck_assert_msg(usec[4] < SEC, "root waited %.3f ms", usec[4] / 1000.0);
        /* Another user is not kept out either. */
        a = live_request(&l, HOLDER_UID + 1);
        ck_assert_msg(strstr(a.line, "\"ok\":true") && strstr(a.line, "\"uid\":60002"), "got '%s'", a.line);
        /* The holder's connections over its limit were refused: logged once, the rest counted. */
        ck_assert_uint_eq(live_log_count(&l, "refused"), 1);
        ck_assert_uint_eq(live_log_count(&l, "uid 60001 has 8 connections open"), 1);
        live_stop(&l);
}

START_TEST(test_control_live_root_not_locked_out) {
        if (!live_tests_can_run("test_control_live_root_not_locked_out"))
                return;
        root_answered_while_held(CONTROL_MAX_CLIENTS);
        root_answered_while_held(200);
}
END_TEST

/* An answer given later: on the next turn of the loop, as a request worked on in slices is. */
static int on_later(sd_event_source *s, uint64_t usec, void *userdata) {
        struct live *l = userdata;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "later", json_object_new_boolean(true));
        ck_assert_int_eq(control_reply(l->control, l->later_client, o), 0);
        /* Answered and gone: a second answer finds nobody. */
        ck_assert_int_eq(control_reply(l->control, l->later_client, json_object_new_object()), -ENOENT);
        return 0;
}

static json_object *later_handler(void *userdata, uint64_t client, const struct ucred *peer,
                                  const struct pw_request *req) {
        struct live *l = userdata;

        l->later_client = client;
        ck_assert_int_ge(sd_event_add_time_relative(l->event, NULL, CLOCK_MONOTONIC, 1000, 0, on_later, l), 0);
        return CONTROL_LATER;
}

START_TEST(test_control_live_later) {
        struct answer a;
        struct live l;

        if (!live_tests_can_run("test_control_live_later"))
                return;
        live_handler = later_handler;
        live_start(&l);
        a = live_request(&l, 0);
        ck_assert_msg(strstr(a.line, "\"later\":true"), "got '%s'", a.line);
        live_stop(&l);
        live_handler = echo_handler;
}
END_TEST

/* An answer far larger than the socket's buffer: sent in many turns of the loop from json-c's own text (not
 * copied), then its newline. */
#define BIG_ANSWER (8u << 20)
static json_object *big_handler(void *userdata, uint64_t client, const struct ucred *peer,
                                const struct pw_request *req) {
        json_object *o = json_object_new_object();
        char *x = malloc(BIG_ANSWER + 1);

        ck_assert_ptr_nonnull(x);
        memset(x, 'x', BIG_ANSWER);
        x[BIG_ANSWER] = '\0';
        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "big", json_object_new_string(x));
        free(x);
        return o;
}

START_TEST(test_control_live_big_answer) {
        static const char expect_head[] = "{\"ok\":true,\"big\":\"";
        struct live l;
        int p[2], status;
        size_t got[3]; /* bytes, newlines, whether the head and the last byte are right */
        pid_t pid;

        if (!live_tests_can_run("test_control_live_big_answer"))
                return;
        live_handler = big_handler;
        live_start(&l);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                const char req[] = "{\"command\":\"version\"}\n";
                char buf[65536], head[sizeof(expect_head)] = "", last = 0;
                size_t n = 0, newlines = 0;
                ssize_t k;
                int fd = connect_to(l.path);

                (void) send(fd, req, strlen(req), MSG_NOSIGNAL);
                while ((k = recv(fd, buf, sizeof(buf), 0)) > 0) {
                        for (ssize_t i = 0; i < k; i++) {
                                if (n + (size_t) i < sizeof(head) - 1)
                                        head[n + (size_t) i] = buf[i];
                                newlines += buf[i] == '\n';
                        }
                        n += (size_t) k;
                        last = buf[k - 1];
                }
                got[0] = n;
                got[1] = newlines;
                got[2] = streq(head, expect_head) && last == '\n';
                (void) !write(p[1], got, sizeof(got));
                _exit(0);
        }
        close(p[1]);
        live_wait_for(&l, p[0]);
        ck_assert_int_eq(read(p[0], got, sizeof(got)), (ssize_t) sizeof(got));
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        /* {"ok":true,"big":"x...x"} and the newline */
        ck_assert_uint_eq(got[0], strlen(expect_head) + BIG_ANSWER + 2 + 1);
        ck_assert_uint_eq(got[1], 1);
        ck_assert_uint_eq(got[2], 1);
        live_stop(&l);
        live_handler = echo_handler;
}
END_TEST

START_TEST(test_control_live_refusals) {
        unsigned users = (CONTROL_MAX_CLIENTS - CONTROL_ROOT_RESERVE) / CONTROL_MAX_CLIENTS_PER_UID;
        struct answer a;
        struct live l;

        if (!live_tests_can_run("test_control_live_refusals"))
                return;
        live_start(&l);
        /* Every user but root holding all they may fills the shared part. */
        for (unsigned i = 0; i < users; i++)
                live_hold(&l, HOLDER_UID + i, CONTROL_MAX_CLIENTS_PER_UID + 2);
        /* What a refused user sees: an error line, at once. */
        a = live_request(&l, HOLDER_UID);
        ck_assert_msg(strstr(a.line, "\"ok\":false") && strstr(a.line, "uid 60001 has 8 connections open") &&
                              strstr(a.line, "\"busy\":true"),
                      "got '%s'", a.line);
        a = live_request(&l, HOLDER_UID + users);
        ck_assert_msg(strstr(a.line, "\"ok\":false") && strstr(a.line, "56 clients are connected"), "got '%s'", a.line);
        /* Root has its reserve. */
        a = live_request(&l, 0);
        ck_assert_msg(strstr(a.line, "\"ok\":true"), "got '%s'", a.line);
        /* One line per user, not per refusal. */
        ck_assert_uint_eq(live_log_count(&l, "refused"), users + 1);
        live_stop(&l);
}
END_TEST

/* ---- root ahead of the events ------------------------------------------- */

/*
 * The events a user's processes cause, as the daemon sees them in a flood:
 * FLOOD_SOURCES descriptors always readable, each costing FLOOD_WORK_USEC a
 * dispatch (as the proc connector, the jobs' cgroup.events, the worker's pipe).
 */
#define FLOOD_SOURCES 32
#define FLOOD_WORK_USEC 2000

struct flood {
        int pipes[FLOOD_SOURCES][2];
        sd_event_source *sources[FLOOD_SOURCES];
        unsigned dispatched, at_answer; /* at_answer: dispatched when the request was handled */
        bool answered;
};

static struct flood *the_flood;

static int on_flood(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct flood *f = userdata;

        f->dispatched++;
        usleep(FLOOD_WORK_USEC); /* and the byte stays: readable again at the next turn */
        return 0;
}

static json_object *counting_handler(void *userdata, uint64_t client, const struct ucred *peer,
                                     const struct pw_request *req) {
        the_flood->at_answer = the_flood->dispatched;
        the_flood->answered = true;
        return echo_handler(userdata, client, peer, req);
}

/* The flood's dispatches between uid's request sent and handled: a child of uid waits for the word, then asks. */
static unsigned dispatches_before_answer(struct live *l, struct flood *f, uid_t uid) {
        int ready[2], go[2], status;
        unsigned before;
        pid_t pid;
        char c;

        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                const char req[] = "{\"command\":\"version\"}\n";
                char line[512];
                int fd;

                become(uid);
                (void) !write(ready[1], "r", 1);
                if (read(go[0], &c, 1) != 1)
                        _exit(102);
                fd = connect_to(l->path);
                (void) send(fd, req, strlen(req), MSG_NOSIGNAL);
                _exit(recv(fd, line, sizeof(line), 0) > 0 ? 0 : 103);
        }
        close(ready[1]);
        close(go[0]);
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        f->answered = false;
        before = f->dispatched;
        ck_assert_int_eq(write(go[1], "g", 1), 1);
        while (waitpid(pid, &status, WNOHANG) == 0)
                ck_assert_int_ge(sd_event_run(l->event, 10 * 1000), 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "request child failed: %d", status);
        ck_assert(f->answered);
        close(ready[0]);
        close(go[1]);
        return f->at_answer - before;
}

START_TEST(test_control_live_root_ahead_of_events) {
        struct flood f = {};
        unsigned root, user;
        struct live l;

        if (!live_tests_can_run("test_control_live_root_ahead_of_events"))
                return;
        the_flood = &f;
        live_handler = counting_handler;
        live_start(&l);
        for (size_t i = 0; i < FLOOD_SOURCES; i++) {
                ck_assert_int_eq(pipe2(f.pipes[i], O_CLOEXEC | O_NONBLOCK), 0);
                ck_assert_int_eq(write(f.pipes[i][1], "x", 1), 1);
                ck_assert_int_ge(sd_event_add_io(l.event, &f.sources[i], f.pipes[i][0], EPOLLIN, on_flood, &f), 0);
        }
        root = dispatches_before_answer(&l, &f, 0);
        user = dispatches_before_answer(&l, &f, HOLDER_UID);
        printf("# with %d event sources always ready (%d us each): root's request waited for %u of their "
               "dispatches, uid %u's for %u\n",
               FLOOD_SOURCES, FLOOD_WORK_USEC, root, (unsigned) HOLDER_UID, user);
        fflush(stdout);
        /* Root's request is handled ahead of the events: a turn for the connection and one for the request, not
         * a turn of every ready source for each (the child's start may cost a few more). */
        ck_assert_uint_lt(root, FLOOD_SOURCES / 2);
        /* Another user's takes its turn with them: a loop of requests cannot starve the events. */
        ck_assert_uint_ge(user, FLOOD_SOURCES / 2);
        for (size_t i = 0; i < FLOOD_SOURCES; i++) {
                sd_event_source_disable_unref(f.sources[i]);
                close(f.pipes[i][0]);
                close(f.pipes[i][1]);
        }
        live_stop(&l);
        live_handler = echo_handler;
}
END_TEST

Suite *control_suite(void) {
        Suite *s = suite_create("control");
        TCase *pure = tcase_create("pure"), *file = tcase_create("file"), *live = tcase_create("live");

        tcase_add_test(pure, test_control_admit_table);
        tcase_add_test(pure, test_control_admit_nobody_locks_out_root);
        tcase_add_test(pure, test_control_admit_invariants);
        tcase_add_test(pure, test_control_ratelimit_one_user);
        tcase_add_test(pure, test_control_ratelimit_many_users);
        tcase_add_test(pure, test_control_ratelimit_invariants);
        suite_add_tcase(s, pure);
        tcase_add_test(file, test_control_socket_mode);
        tcase_add_test(file, test_control_socket_stale);
        tcase_add_test(file, test_control_socket_symlink_refused);
        tcase_add_test(file, test_control_socket_set_access);
        tcase_add_test(file, test_control_socket_symlink_race);
        tcase_set_timeout(file, 30);
        suite_add_tcase(s, file);
        tcase_add_test(live, test_control_live_root_not_locked_out);
        tcase_add_test(live, test_control_live_refusals);
        tcase_add_test(live, test_control_live_later);
        tcase_add_test(live, test_control_live_big_answer);
        tcase_add_test(live, test_control_live_root_ahead_of_events);
        tcase_set_timeout(live, 60);
        suite_add_tcase(s, live);
        return s;
}
