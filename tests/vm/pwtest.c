/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pwtest: drives the cgroup engine directly, for the real-kernel scenarios
 * of tests/vm (the daemon is not needed to test the engine).
 *
 *   pwtest [--root R] [--state DIR] [--idle N] features
 *   pwtest ... apply POLICY              apply every job class of POLICY
 *   pwtest ... run CLASS NAME -- CMD...  run CMD in a job slot of CLASS
 *                                        (clone3 CLONE_INTO_CGROUP), wait,
 *                                        release the slot; exit with CMD's status
 *   pwtest ... protect POLICY            protect every cgroup: entry of POLICY
 *   pwtest ... unprotect                 withdraw all protection
 *   pwtest ... freeze CLASS 0|1
 *   pwtest ... class CLASS               print the class cgroup's values
 *   pwtest ... scan                      list the slots
 *   pwtest ... release PATH              release a slot whose job has ended
 *
 * Output lines are key=value, for the scenario scripts to parse.
 */
#include <getopt.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "cgroup-discover.h"
#include "cgroup-values.h"
#include "cgroup.h"
#include "log.h"
#include "policy.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

static const char *arg_root = "pagewarden.slice";
static const char *arg_state = "/run/pagewarden";
static unsigned arg_idle = CGROUP_IDLE_SLOTS_DEFAULT;

static int load_policy(const char *path, struct pw_policy *p) {
        struct policy_context ctx;
        struct diag_list d = {};
        int r;

        r = policy_context_default(&ctx);
        if (r < 0)
                return r;
        ctx.check_owner = false;
        r = policy_load_path(&ctx, path, p, &d);
        diag_print(&d, stderr);
        diag_list_done(&d);
        return r;
}

/* A class's memory.high and memory.max, written at once (the daemon's cgroupfs backend sends a write that would
 * reclaim to its worker; this tool has none). */
static int write_memory(struct cgroup_engine *e, const struct pw_job_class *c) {
        const struct {
                const char *file;
                uint64_t v;
        } limits[2] = { { "memory.high", c->memory_high }, { "memory.max", c->memory_max } };
        _cleanup_free_ char *path = NULL;
        char value[32];
        int r = 0;

        if (asprintf(&path, "%s/%s", cgroup_engine_root(e), c->name) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < 2 && r >= 0; i++) {
                cgv_format_limit(limits[i].v, value, sizeof(value));
                r = cgroup_write_file(e, path, limits[i].file, value);
        }
        return r;
}

static int cmd_run(struct cgroup_engine *e, const char *class, const char *name, char **argv) {
        struct cgroup_job_label label = { .uid = getuid(), .started_usec = now_usec(CLOCK_REALTIME) };
        struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
        _cleanup_free_ char *path = NULL;
        struct cgroup_release rel;
        uint64_t t0, t1, t2;
        int fd = -1, status, r;
        pid_t pid;

        label.id = (uint64_t) getpid();
        snprintf(label.name, sizeof(label.name), "%s", name);
        t0 = now_usec(CLOCK_MONOTONIC);
        r = cgroup_job_acquire(e, class, &label, &path, &fd);
        if (r < 0) {
                fprintf(stderr, "pwtest: acquire: %s\n", strerror(-r));
                return 125;
        }
        args.cgroup = (uint64_t) fd;
        t1 = now_usec(CLOCK_MONOTONIC);
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid < 0) {
                fprintf(stderr, "pwtest: clone3: %m\n");
                return 125;
        }
        if (pid == 0) {
                execvp(argv[0], argv);
                _exit(127);
        }
        close(fd);
        if (waitpid(pid, &status, 0) < 0)
                return 125;
        t2 = now_usec(CLOCK_MONOTONIC);
        r = cgroup_job_release(e, path, &rel);
        if (r < 0) {
                fprintf(stderr, "pwtest: release %s: %s\n", path, strerror(-r));
                return 125;
        }
        fprintf(stderr,
                "job slot=%s acquire_us=%" PRIu64 " run_us=%" PRIu64 " release_us=%" PRIu64 " before=%" PRIu64
                " after=%" PRIu64 " removed=%d\n",
                path, t1 - t0, t2 - t1, now_usec(CLOCK_MONOTONIC) - t2, rel.before, rel.after, rel.removed);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmd_protect(struct cgroup_engine *e, struct ledger *l, const char *file) {
        struct pw_policy p = {};
        struct ledger_request *req;
        struct cgroup_protect_result *res;
        size_t n = 0;
        int r;

        if (load_policy(file, &p) < 0)
                return 1;
        req = calloc(p.n_protects + 1, sizeof(*req));
        res = calloc(p.n_protects + 1, sizeof(*res));
        for (size_t i = 0; i < p.n_protects; i++) {
                const struct pw_protect *pr = &p.protects[i];

                if (!pr->cgroup)
                        continue;
                req[n++] = (struct ledger_request){
                        .path = pr->cgroup,
                        .min = pr->min.mode == PW_PROTECT_BYTES ? pr->min.bytes : 0,
                        .low = pr->low.mode == PW_PROTECT_BYTES ? pr->low.bytes : 0,
                        .swap_deny = pr->swap_deny,
                };
        }
        r = cgroup_protect_set(e, l, req, n, res);
        for (size_t i = 0; i < n; i++)
                printf("protect path=%s error=%d min=%" PRIu64 " low=%" PRIu64 " effective_min=%" PRIu64
                       " effective_low=%" PRIu64 "\n",
                       req[i].path + 1, res[i].error, res[i].min, res[i].low, res[i].effective_min,
                       res[i].effective_low);
        printf("saved=%zu\n", l->n);
        free(req);
        free(res);
        policy_done(&p);
        if (r < 0)
                fprintf(stderr, "pwtest: protect: %s\n", strerror(-r));
        return r < 0 ? 1 : 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },
                { "state", required_argument, NULL, 's' },
                { "idle", required_argument, NULL, 'i' },
                {},
        };
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        _cleanup_(ledger_done) struct ledger protection = {}; /* the engine's I/O, its originals: a backend's */
        _cleanup_free_ char *why = NULL;
        struct cgroup_mount m;
        const char *cmd;
        int c, r;

        while ((c = getopt_long(argc, argv, "+r:s:i:", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        arg_root = optarg;
                        break;
                case 's':
                        arg_state = optarg;
                        break;
                case 'i':
                        arg_idle = (unsigned) atoi(optarg);
                        break;
                default:
                        return 2;
                }
        if (optind >= argc)
                return 2;
        cmd = argv[optind++];
        if (getenv("PWTEST_DEBUG"))
                log_set_max_level(LOG_LEVEL_DEBUG);

        r = cgroup_discover("", "/proc/self/mountinfo", "/proc/pressure", &m, &why);
        if (r < 0) {
                fprintf(stderr, "pwtest: %s\n", why);
                return 1;
        }
        r = cgroup_engine_new(m.path, arg_root, true, &e);
        if (r >= 0)
                r = cgroup_protect_ledger_init(&protection, arg_state);
        if (r < 0) {
                fprintf(stderr, "pwtest: engine: %s\n", strerror(-r));
                return 1;
        }
        cgroup_engine_set_idle_slots(e, arg_idle);

        if (streq(cmd, "features")) {
                const struct cgroup_features *f = cgroup_engine_features(e);

                printf("memory_reclaim=%d swap=%d freeze=%d kill=%d cpu=%d user_xattr=%d\n", f->memory_reclaim, f->swap,
                       f->freeze, f->kill, f->cpu, f->user_xattr);
                return 0;
        }
        if (streq(cmd, "apply") && optind < argc) {
                struct pw_policy p = {};

                if (load_policy(argv[optind], &p) < 0)
                        return 1;
                for (size_t i = 0; i < p.n_classes; i++) {
                        r = cgroup_class_apply(e, &p.classes[i]);
                        if (r >= 0)
                                r = write_memory(e, &p.classes[i]);
                        printf("apply class=%s r=%d\n", p.classes[i].name, r);
                        if (r < 0)
                                return 1;
                }
                policy_done(&p);
                return 0;
        }
        if (streq(cmd, "run") && optind + 3 < argc && streq(argv[optind + 2], "--"))
                return cmd_run(e, argv[optind], argv[optind + 1], argv + optind + 3);
        if (streq(cmd, "protect") && optind < argc)
                return cmd_protect(e, &protection, argv[optind]);
        if (streq(cmd, "unprotect")) {
                r = cgroup_protect_set(e, &protection, NULL, 0, NULL);
                printf("saved=%zu\n", protection.n);
                return r < 0 ? 1 : 0;
        }
        if (streq(cmd, "freeze") && optind + 1 < argc)
                return cgroup_class_freeze(e, argv[optind], streq(argv[optind + 1], "1")) < 0;
        if (streq(cmd, "class") && optind < argc) {
                struct cgroup_class_state s;
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s", arg_root, argv[optind]) < 0)
                        return 1;
                r = cgroup_class_read(e, path, &s);
                if (r < 0) {
                        fprintf(stderr, "pwtest: class: %s\n", strerror(-r));
                        return 1;
                }
                printf("memory_high=%" PRIu64 " memory_max=%" PRIu64 " swap_max=%" PRIu64 " cpu_weight=%" PRIu64
                       " current=%" PRIu64 " frozen=%d io_lines=%zu\n",
                       s.memory_high, s.memory_max, s.memory_swap_max, s.cpu_weight, s.memory_current, s.frozen,
                       s.n_io);
                cgroup_class_state_done(&s);
                return 0;
        }
        if (streq(cmd, "release") && optind < argc) {
                struct cgroup_release rel;

                r = cgroup_job_release(e, argv[optind], &rel);
                printf("release r=%d before=%" PRIu64 " after=%" PRIu64 " removed=%d\n", r, rel.before, rel.after,
                       rel.removed);
                return r < 0 ? 1 : 0;
        }
        if (streq(cmd, "scan")) {
                struct cgroup_slot *slots;
                size_t n;

                r = cgroup_scan(e, &slots, &n);
                if (r < 0)
                        return 1;
                for (size_t i = 0; i < n; i++)
                        printf("slot class=%s path=%s labelled=%d populated=%d name=%s\n", slots[i].class,
                               slots[i].path, slots[i].labelled, slots[i].populated,
                               slots[i].labelled ? slots[i].label.name : "-");
                printf("slots=%zu\n", n);
                cgroup_slots_free(slots, n);
                return 0;
        }
        fprintf(stderr, "pwtest: bad command\n");
        return 2;
}
