/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagewardend: parse the command line and the configuration, check that this
 * host has what pagewarden needs, build the manager and run its loop.
 */
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup-discover.h"
#include "log.h"
#include "manager.h"
#include "policy.h"
#include "settings.h"

/* Exit statuses, documented in pagewardend(8). */
enum {
        EXIT_OK = 0,
        EXIT_FAILURE_RUNTIME = 1,
        EXIT_USAGE = 2,
        EXIT_CONFIG = 3,
        EXIT_HOST = 4,
};

static const char *arg_config = NULL; /* NULL: the default, which may be missing */
static bool arg_check = false;
static bool arg_thaw = false;
static bool arg_restore = false;

static void help(FILE *f) {
        fprintf(f,
                "Usage: pagewardend [--config FILE] [--check | --thaw | --restore]\n"
                "       pagewardend --help | --version\n"
                "\n"
                "The pagewarden daemon: keeps bulk jobs from pushing important\n"
                "applications out of RAM (see pagewardend(8) for what this version does).\n"
                "\n"
                "  -c, --config FILE   Settings file (default: %s)\n"
                "      --check         Validate the configuration and exit\n"
                "      --thaw          Thaw every job class of a daemon that is not\n"
                "                      running any more, and exit (the unit's ExecStopPost=)\n"
                "      --restore       The same, and give every application it protected\n"
                "                      its original values back (the package's removal)\n"
                "  -h, --help          Print this help and exit\n"
                "  -V, --version       Print the version and exit\n"
                "\n"
                "Runs in the foreground; SIGHUP reloads, SIGTERM stops. See pagewardend(8).\n",
                PW_DEFAULT_CONFIG);
}

static int parse_argv(int argc, char *argv[]) {
        /* clang-format off */
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "check", no_argument, NULL, 'k' },
                { "thaw", no_argument, NULL, 't' },
                { "restore", no_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        /* clang-format on */
        int c;

        while ((c = getopt_long(argc, argv, "c:hV", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        arg_config = optarg;
                        break;
                case 'k':
                        arg_check = true;
                        break;
                case 't':
                        arg_thaw = true;
                        break;
                case 'r':
                        arg_thaw = arg_restore = true;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                case 'V':
                        puts(PACKAGE_STRING);
                        return 0;
                default:
                        fputs("Try 'pagewardend --help'.\n", stderr);
                        return -EINVAL;
                }
        if (arg_check && arg_thaw) {
                fprintf(stderr, "pagewardend: --check and --%s exclude each other\nTry 'pagewardend --help'.\n",
                        arg_restore ? "restore" : "thaw");
                return -EINVAL;
        }
        if (optind < argc) {
                fprintf(stderr, "pagewardend: unexpected argument '%s'\nTry 'pagewardend --help'.\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/*
 * A move holds a pidfd per process (1,024 at most) while it is worked on,
 * beside the daemon's other fds: the soft limit of 1,024 is too low.  The
 * hard limit is ours to take (up to 64 Ki).
 */
static void raise_fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * The heap of a daemon that runs for months, with thousands of jobs coming
 * and going and large transient answers (a status of 2,000 jobs): one arena
 * (the worker thread's allocations are few; a second arena is memory held
 * twice), and a fixed mmap threshold, so that a large buffer is always its
 * own mapping and goes back to the kernel when freed (glibc's default raises
 * the threshold after the first such free, and the next large buffers then
 * fragment the heap).  With 1,200 jobs under the scale benchmark, the heap
 * held 3.2 MiB in use in a 9 MiB arena.
 */
static void heap_setup(void) {
        (void) mallopt(M_ARENA_MAX, 1);
        (void) mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/*
 * One daemon per control socket.  A second one started by hand must stop
 * before it writes a limit, a protection or a thaw, so the lock is taken
 * before the host is touched: an flock on PATH.lock beside the socket, which
 * the kernel releases however the holder dies (no stale lock after kill -9).
 * The fd stays open, unused, for the daemon's life.
 */
static int lock_instance(const char *socket_path) {
        _cleanup_free_ char *dir = strdup(socket_path), *path = NULL;
        char *slash;
        int fd;

        if (!dir || asprintf(&path, "%s.lock", socket_path) < 0)
                return log_error("Out of memory"), -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Cannot create %s: %m", dir);
        }
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", path);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = -errno;

                close(fd);
                if (r == -EWOULDBLOCK)
                        return log_error_errno(EBUSY, "Another pagewardend runs for %s (it holds %s): not starting",
                                               socket_path, path);
                return log_error_errno(r, "Cannot lock %s: %m", path);
        }
        return fd;
}

/* The cgroup2 mount: 0 (EXIT_OK), or the exit status to stop with, the cause logged. */
static int find_cgroup2(struct cgroup_mount *ret) {
        _cleanup_free_ char *why = NULL;
        int r = cgroup_discover("", "/proc/self/mountinfo", "/proc/pressure", ret, &why);

        if (r == -ENOMEM)
                return log_error("Out of memory"), EXIT_FAILURE_RUNTIME;
        if (r < 0)
                return log_error("This host cannot run pagewarden: %s", why), EXIT_HOST;
        return EXIT_OK;
}

/*
 * --thaw: a daemon that died while the governor held a class frozen (kill -9,
 * a stop past its timeout, a crash) leaves it frozen until a daemon starts
 * again, which may be never.  This undoes it from outside, as the unit's
 * ExecStopPost=, through the same backend the daemon uses (with systemd,
 * ThawUnit, so that systemd's idea of the unit's state stays true).  Only
 * the settings are read: a broken policy must not keep jobs frozen.  It
 * takes the instance lock, so it never thaws behind a running daemon's back.
 */
static void thawed(void *userdata) {
        (void) sd_event_exit(userdata, 0);
}

static int thaw(void) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        _cleanup_(settings_done) struct pw_settings settings = {};
        _cleanup_(backend_freep) struct backend *b = NULL;
        struct policy_context ctx;
        struct cgroup_mount mount;
        sd_event *event = NULL;
        int lock, r;

        r = policy_context_default(&ctx);
        if (r < 0)
                return log_error_errno(r, "Cannot read the machine's memory size: %m"), EXIT_FAILURE_RUNTIME;
        r = settings_load(&ctx, arg_config ?: PW_DEFAULT_CONFIG, !arg_config, &settings, &diags);
        if (r == -ENOMEM)
                return log_error("Out of memory"), EXIT_FAILURE_RUNTIME;
        if (r < 0) {
                log_error("Invalid settings (%zu error%s):", diags.n_errors, diags.n_errors == 1 ? "" : "s");
                log_diags(LOG_LEVEL_ERR, &diags);
                return EXIT_CONFIG;
        }
        lock = lock_instance(settings.socket);
        if (lock < 0)
                return EXIT_FAILURE_RUNTIME;
        r = find_cgroup2(&mount);
        if (r != EXIT_OK) {
                close(lock);
                return r;
        }
        r = sd_event_default(&event);
        if (r < 0)
                return log_error_errno(r, "Cannot create an event loop: %m"), EXIT_FAILURE_RUNTIME;
        /* --restore: the originals of what the daemon protected are in its state directory. */
        r = backend_open(&(struct backend_setup){ .event = event,
                                                  .mount = mount.path,
                                                  .root = settings.cgroup_root,
                                                  .want = settings.backend,
                                                  .state_dir = arg_restore ? RUNSTATEDIR "/pagewarden" : NULL },
                         &b);
        if (r >= 0)
                r = backend_thaw_all(b);
        if (r >= 0 && arg_restore)
                r = backend_protect_set(b, NULL, 0, NULL);
        /* With systemd the thaws are sent without waiting: wait here for their answers (10 s at most each). */
        if (r >= 0 && backend_when_answered(b, thawed, event) > 0)
                r = sd_event_loop(event);
        b = backend_free(b);
        sd_event_unref(event);
        close(lock);
        if (r < 0)
                return log_error_errno(r, "Cannot thaw every job class below /%s: %m", settings.cgroup_root),
                       EXIT_FAILURE_RUNTIME;
        log_info("Every job class below /%s is thawed%s", settings.cgroup_root,
                 arg_restore ? "; protected applications have their original values" : "");
        return EXIT_OK;
}

int main(int argc, char *argv[]) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        _cleanup_(settings_done) struct pw_settings settings = {};
        _cleanup_(policy_done) struct pw_policy policy = {};
        _cleanup_(manager_freep) struct manager *m = NULL;
        struct policy_context ctx;
        struct cgroup_mount mount;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;

        if (arg_thaw)
                return thaw();
        raise_fd_limit();
        heap_setup();
        r = policy_context_default(&ctx);
        if (r < 0)
                return log_error_errno(r, "Cannot read the machine's memory size: %m"), EXIT_FAILURE_RUNTIME;
        /* --check warns, as pagewardenctl check does, of exe: programs that cannot match; the daemon itself says
         * it once it applies the rules. */
        ctx.check_programs = arg_check;
        r = config_load(&ctx, arg_config ?: PW_DEFAULT_CONFIG, !arg_config, &settings, &policy, &diags);
        if (r == -ENOMEM)
                return log_error("Out of memory"), EXIT_FAILURE_RUNTIME;
        if (r < 0) {
                log_error("Invalid configuration (%zu error%s):", diags.n_errors, diags.n_errors == 1 ? "" : "s");
                log_diags(LOG_LEVEL_ERR, &diags);
                return EXIT_CONFIG;
        }
        log_set_max_level(settings.log_level);
        log_diags(LOG_LEVEL_WARNING, &diags); /* warnings only: a device not there yet, a program not installed */
        if (arg_check) {
                printf("%s: valid; %zu job class%s, %zu protected application%s from %s\n",
                       settings.path ?: "(no settings file, defaults)", policy.n_classes,
                       policy.n_classes == 1 ? "" : "es", policy.n_protects, policy.n_protects == 1 ? "" : "s",
                       settings.policy_dir);
                return EXIT_OK;
        }

        if (lock_instance(settings.socket) < 0)
                return EXIT_FAILURE_RUNTIME;
        r = find_cgroup2(&mount);
        if (r != EXIT_OK)
                return r;
        if (!mount.psi)
                log_warning("Pressure stall information is off (boot with psi=1): pressure cannot be watched");

        r = manager_new(arg_config ?: PW_DEFAULT_CONFIG, !arg_config, &ctx, &settings, &policy, &mount, &m);
        if (r < 0)
                return log_error_errno(r, "Cannot start: %m"), EXIT_FAILURE_RUNTIME;
        r = manager_start(m);
        if (r < 0)
                return EXIT_FAILURE_RUNTIME;
        log_info("pagewarden %s running: %zu job class%s, %zu protected application%s, %u job%s adopted",
                 PACKAGE_VERSION, m->policy.n_classes, m->policy.n_classes == 1 ? "" : "es", m->policy.n_protects,
                 m->policy.n_protects == 1 ? "" : "s", m->jobs.n, m->jobs.n == 1 ? "" : "s");
        r = manager_run(m);
        return r < 0 ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
