/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command's process is forked first and waits, before exec, for a byte
 * on a socketpair (a pipe that never raises SIGPIPE on the writer); the
 * request names its pid, and only when pagewardend answers that the
 * process is in its job does the byte go out.  If anything fails, the
 * parent closes its end instead: the child reads EOF and exits without
 * running the command.  A CLOEXEC pipe brings exec's errno back.
 *
 * Signals that the parent must forward or react to (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT) and SIGCHLD are blocked from before the fork and read
 * from a signalfd; the child restores the caller's mask and dispositions,
 * so that the command inherits them unchanged.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "ctl-client.h"
#include "ctl-print.h"
#include "ctl-run.h"
#include "settings.h"
#include "util.h"

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static int exit_status_for_exec_error(int e) {
        return e == ENOENT ? CTL_RUN_NOT_FOUND : CTL_RUN_CANNOT_EXECUTE;
}

/* Without a daemon (--fallback): pagewardenctl becomes the command. */
static int exec_unmanaged(char **argv) {
        int e;

        fflush(stdout);
        execvp(argv[0], argv);
        e = errno;
        fprintf(stderr, "pagewardenctl: %s: %s\n", argv[0], strerror(e));
        return exit_status_for_exec_error(e);
}

_Noreturn static void child(int hold_fd, int err_fd, const sigset_t *mask, const struct sigaction *sigchld,
                            char **argv) {
        ssize_t n;
        char c;
        int e;

        sigaction(SIGCHLD, sigchld, NULL);
        sigprocmask(SIG_SETMASK, mask, NULL);
        do
                n = read(hold_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(CTL_RUN_NOT_RUN);
        execvp(argv[0], argv);
        e = errno;
        if (write(err_fd, &e, sizeof(e)) < 0)
                _exit(CTL_RUN_NOT_RUN);
        _exit(exit_status_for_exec_error(e));
}

/* Exits as the command did: with its signal, without dumping a core of our own. */
_Noreturn static void die_with_signal(int sig) {
        const struct sigaction dfl = { .sa_handler = SIG_DFL };
        const struct rlimit no_core = {};
        sigset_t s;

        (void) setrlimit(RLIMIT_CORE, &no_core);
        (void) prctl(PR_SET_DUMPABLE, 0);
        sigaction(sig, &dfl, NULL);
        raise(sig); /* pending while blocked */
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        _exit(128 + sig); /* a signal that does not terminate */
}

static int wait_child(pid_t pid, int *ret_status) {
        while (waitpid(pid, ret_status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/*
 * Tells the held child to exit without exec (EOF), and reaps it.  SIGKILL too:
 * the daemon may have placed it in a frozen job before the request failed.
 */
static void cancel_child(pid_t pid, int *hold_fd) {
        int status;

        closep(hold_fd);
        *hold_fd = -1;
        (void) kill(pid, SIGKILL);
        (void) wait_child(pid, &status);
}

/* Exits as the child did, or returns its exit status. */
static int child_result(int status) {
        if (WIFSIGNALED(status))
                die_with_signal(WTERMSIG(status));
        return WIFEXITED(status) ? WEXITSTATUS(status) : CTL_RUN_NOT_RUN;
}

/* Signals sent with kill(2) or sigqueue(3); those from the terminal reached the command already. */
static bool sent_by_a_process(const struct signalfd_siginfo *si) {
        int code = si->ssi_code;

        return (code == SI_USER || code == SI_QUEUE || code == SI_TKILL) && si->ssi_pid != 0;
}

/* After exec: forwards signals until the command exits; returns its wait status, or -1 if it cannot be had. */
static int supervise(pid_t pid, int sfd, const sigset_t *with_sigchld) {
        int status;

        if (signalfd(sfd, with_sigchld, SFD_CLOEXEC) < 0)
                goto just_wait;
        for (;;) {
                struct signalfd_siginfo si;
                ssize_t n = read(sfd, &si, sizeof(si));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t) sizeof(si))
                        goto just_wait;
                if (si.ssi_signo == SIGCHLD) {
                        pid_t w = waitpid(pid, &status, WNOHANG);

                        if (w == pid)
                                return status;
                        if (w < 0)
                                goto just_wait;
                } else if (sent_by_a_process(&si))
                        (void) kill(pid, (int) si.ssi_signo);
        }
just_wait:
        if (wait_child(pid, &status) < 0)
                return -1;
        return status;
}

/*
 * The job's end-of-job report, once the daemon has seen it end (at most 3 s), on one line on stderr.
 * Without the daemon's answer, nothing: the command's status is what matters.
 */
static void print_report(const struct ctl_run_options *o, json_object *placed, bool only_oom) {
        json_object *job, *id;
        struct pw_request req = { .command = PW_CMD_SHOW };

        if (!json_object_object_get_ex(placed, "job", &job) || !json_object_object_get_ex(job, "id", &id) ||
            !json_object_is_type(id, json_type_int))
                return;
        snprintf(req.job, sizeof(req.job), "%" PRId64, json_object_get_int64(id));
        for (int i = 0; i < 60; i++) {
                _cleanup_(ctl_response_done) struct ctl_response resp = {};
                _cleanup_close_ int fd = -1;
                json_object *j, *state, *how;

                if (ctl_connect(o->socket, &fd) < 0 || ctl_exchange(fd, &req, -1, &resp) < 0 || !resp.ok)
                        return;
                if (json_object_object_get_ex(resp.obj, "job", &j) && json_object_object_get_ex(j, "state", &state) &&
                    streq(json_object_get_string(state), "ended")) {
                        bool oom = json_object_object_get_ex(j, "how", &how) &&
                                   streq(json_object_get_string(how), "oom-killed");

                        if (oom || !only_oom)
                                ctl_print_report_line(stderr, j);
                        return;
                }
                (void) nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000 }, NULL);
        }
}

static double msec_since(const struct timespec *t0) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) (t.tv_sec - t0->tv_sec) * 1e3 + (double) (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Sends the request for pid; on failure, says why and that the command was not run. */
static int place(const struct ctl_run_options *o, int *fd, pid_t pid, int sfd, struct ctl_response *resp,
                 int *ret_signal) {
        struct pw_request req = { .command = PW_CMD_RUN,
                                  .pid = pid,
                                  .memory_high = o->memory_high,
                                  .memory_max = o->memory_max,
                                  .memory_swap_max = o->memory_swap_max };
        _cleanup_free_ char *suffix = NULL;
        int r;

        snprintf(req.class, sizeof(req.class), "%s", o->class);
        snprintf(req.name, sizeof(req.name), "%s", strempty(o->name));
        *ret_signal = 0;
        r = ctl_exchange_retry(o->socket, fd, &req, sfd, resp);
        if (r == -EINTR) {
                struct signalfd_siginfo si;

                if (read(sfd, &si, sizeof(si)) != (ssize_t) sizeof(si))
                        si.ssi_signo = SIGTERM;
                *ret_signal = (int) si.ssi_signo;
                return r;
        }
        if (asprintf(&suffix, "; %s was not run", o->argv[0]) < 0)
                suffix = NULL;
        if (r < 0) {
                fprintf(stderr, "pagewardenctl: %s%s\n", ctl_strerror(r), strempty(suffix));
                return r;
        }
        if (!resp->ok) {
                ctl_print_failure(stderr, resp, suffix);
                return -EPERM;
        }
        return 0;
}

static int run_managed(const struct ctl_run_options *o, int connection) {
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        _cleanup_close_ int fd = connection, sfd = -1, hold = -1, err = -1, child_hold = -1, child_err = -1;
        const struct sigaction dfl = { .sa_handler = SIG_DFL };
        struct sigaction old_sigchld;
        sigset_t cancel, all, old_mask;
        struct timespec t0;
        int pair[2], pipefd[2], r, sig, e, status;
        pid_t pid;
        ssize_t n;

        sigemptyset(&cancel);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&cancel, forwarded_signals[i]);
        all = cancel;
        sigaddset(&all, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &all, &old_mask) < 0)
                goto fail;
        /* An ignored SIGCHLD would have the child reaped behind our back. */
        if (sigaction(SIGCHLD, &dfl, &old_sigchld) < 0)
                goto fail;
        sfd = signalfd(-1, &cancel, SFD_CLOEXEC);
        if (sfd < 0)
                goto fail;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                goto fail;
        hold = pair[0];
        child_hold = pair[1];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                goto fail;
        err = pipefd[0];
        child_err = pipefd[1];

        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid = fork();
        if (pid < 0)
                goto fail;
        if (pid == 0) {
                close(hold);
                child(child_hold, child_err, &old_mask, &old_sigchld, o->argv);
        }
        closep(&child_hold);
        closep(&child_err);
        child_hold = child_err = -1;

        r = place(o, &fd, pid, sfd, &resp, &sig);
        closep(&fd);
        fd = -1;
        if (r < 0) {
                cancel_child(pid, &hold);
                if (r == -EINTR)
                        die_with_signal(sig);
                return CTL_RUN_NOT_RUN;
        }
        if (o->verbose)
                ctl_print_placed(stderr, resp.obj, msec_since(&t0));

        /* Release the child.  If it died meanwhile, supervise() reports how. */
        (void) send(hold, "x", 1, MSG_NOSIGNAL);
        closep(&hold);
        hold = -1;
        do
                n = read(err, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t) sizeof(e)) {
                fprintf(stderr, "pagewardenctl: %s: %s\n", o->argv[0], strerror(e));
                (void) wait_child(pid, &status);
                return exit_status_for_exec_error(e);
        }
        status = supervise(pid, sfd, &all);
        if (status < 0)
                return CTL_RUN_NOT_RUN;
        /* -v: what the job cost; without it, only an OOM kill (a SIGKILL that could be one) is told. */
        if (o->verbose || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
                print_report(o, resp.obj, !o->verbose);
        return child_result(status);

fail:
        fprintf(stderr, "pagewardenctl: cannot start %s: %s\n", o->argv[0], strerror(errno));
        return CTL_RUN_NOT_RUN;
}

/*
 * Whether to run the command unmanaged now that the daemon is not running:
 * --fallback or --no-fallback, else run_fallback from the settings file.  A
 * settings file that cannot be read or is invalid fails closed, and says so.
 */
static bool want_fallback(const struct ctl_run_options *o, const char **ret_why) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        _cleanup_(settings_done) struct pw_settings settings = {};
        struct policy_context ctx;
        const char *path = o->config ?: PW_DEFAULT_CONFIG;
        int r;

        *ret_why = o->fallback == CTL_FALLBACK_YES ? "--fallback" : "--no-fallback";
        if (o->fallback != CTL_FALLBACK_SETTING)
                return o->fallback == CTL_FALLBACK_YES;
        *ret_why = "run_fallback";
        r = policy_context_default(&ctx);
        if (r >= 0)
                r = settings_load(&ctx, path, !o->config, &settings, &diags);
        if (r < 0 || diags.n_errors > 0) {
                fprintf(stderr, "pagewardenctl: cannot read run_fallback from %s (%s): failing closed\n", path,
                        r == -EINVAL || diags.n_errors > 0 ? "invalid: see pagewardenctl check" : strerror(-r));
                return false;
        }
        return settings.run_fallback;
}

int ctl_run(const struct ctl_run_options *o) {
        _cleanup_close_ int fd = -1;
        const char *why;
        int r;

        r = ctl_connect(o->socket, &fd);
        if (r < 0 && !ctl_not_running(r)) {
                fprintf(stderr, "pagewardenctl: cannot connect to pagewardend at %s: %s; %s was not run\n", o->socket,
                        strerror(-r), o->argv[0]);
                return CTL_RUN_NOT_RUN;
        }
        if (r < 0 && !want_fallback(o, &why)) {
                fprintf(stderr,
                        "pagewardenctl: pagewardend is not running (cannot connect to %s: %s); %s was not run "
                        "(%s; --fallback or run_fallback: true runs it unmanaged)\n",
                        o->socket, strerror(-r), o->argv[0],
                        o->fallback == CTL_FALLBACK_NO ? "--no-fallback" : "run_fallback is false");
                return CTL_RUN_NOT_RUN;
        }
        if (r < 0) {
                fprintf(stderr,
                        "pagewardenctl: warning: pagewardend is not running (cannot connect to %s: %s): running %s "
                        "outside any job (%s)\n",
                        o->socket, strerror(-r), o->argv[0], why);
                return exec_unmanaged(o->argv);
        }
        return run_managed(o, TAKE_FD(fd));
}
