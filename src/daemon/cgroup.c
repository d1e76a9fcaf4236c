/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-engine.h"
#include "cgroup.h"
#include "ledger.h"
#include "log.h"
#include "units.h"
#include "util.h"

/* ---- libcgroup glue ---- */

_printf_(3, 0) static void libcgroup_logger(void *userdata, int level, const char *fmt, va_list ap) {
        char buf[512];

        vsnprintf(buf, sizeof(buf), fmt, ap);
        buf[strcspn(buf, "\n")] = '\0';
        /* libcgroup reports what it tried; the engine reports what failed. */
        log_debug("libcgroup: %s", buf);
}

/* libcgroup's ECG* codes as a negative errno. */
static int lc_errno(int rc) {
        int e;

        switch (rc) {
        case 0:
                return 0;
        case ECGOTHER:
                e = cgroup_get_last_errno();
                return e > 0 ? -e : -EIO;
        case ECGROUPNOTEXIST:
        case ECGROUPVALUENOTEXIST:
                return -ENOENT;
        case ECGROUPNOTMOUNTED:
        case ECGROUPSUBSYSNOTMOUNTED:
                return -ENODEV;
        case ECGROUPNOTALLOWED:
        case ECGROUPNOTOWNER:
                return -EPERM;
        default:
                return -EIO;
        }
}

static int lc_init(void) {
        static int done = 0;
        int rc;

        if (done)
                return done < 0 ? done : 0;
        cgroup_set_logger(libcgroup_logger, CGROUP_LOG_WARNING, NULL);
        rc = cgroup_init();
        done = rc == 0 ? 1 : lc_errno(rc);
        return done < 0 ? done : 0;
}

/*
 * One value into a cgroup's file: open, one write, close.  Not through
 * libcgroup's modify path, which reads /proc/mounts again for every value it
 * writes (four system calls more than the write itself: a move wrote six
 * values, a reload a hundred; under emulation each system call costs tens of
 * microseconds); the engine knows its mount.  The kernel takes or refuses a
 * value whole: a short write is an error.
 */
int cgroup_write_file(struct cgroup_engine *e, const char *path, const char *file, const char *value) {
        _cleanup_free_ char *p = cgroup_abs_path(e, path, file);
        _cleanup_close_ int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        if (!p)
                return -ENOMEM;
        fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        n = write(fd, value, len);
        if (n < 0)
                return -errno;
        return (size_t) n == len ? 0 : -EIO;
}

int engine_write_u64(struct cgroup_engine *e, const char *path, const char *file, uint64_t v) {
        char buf[32];

        cgv_format_limit(v, buf, sizeof(buf));
        return cgroup_write_file(e, path, file, buf);
}

/* Whether path's file (cgroup.controllers, cgroup.subtree_control) lists every one of the controllers. */
static bool lists_controllers(struct cgroup_engine *e, const char *path, const char *name,
                              const char *const *controllers, size_t n) {
        _cleanup_free_ char *file = cgroup_abs_path(e, path, name), *line = NULL;

        if (!file || read_one_line(file, &line) < 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                const char *p = line;
                size_t len = strlen(controllers[i]);
                bool found = false;

                while (!found && (p = strstr(p, controllers[i]))) {
                        found = (p == line || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ');
                        p += len;
                }
                if (!found)
                        return false;
        }
        return true;
}

/* Whether the cgroup path exists with every one of the controllers (its parent enables them for it). */
static bool has_controllers(struct cgroup_engine *e, const char *path, const char *const *controllers, size_t n) {
        return lists_controllers(e, path, "cgroup.controllers", controllers, n);
}

/* The parent of path, "" for the root's children; NULL without memory. */
static char *parent_of(const char *path) {
        const char *slash = strrchr(path, '/');

        return strndup(path, slash ? (size_t) (slash - path) : 0);
}

/*
 * Creates path (and its missing parents) with the given controllers.  The
 * caller has enabled them in the root's subtree_control: libcgroup enables
 * them in every other ancestor but never in the root.  Succeeds if it exists.
 */
int engine_mkdir(struct cgroup_engine *e, const char *path, const char *const *controllers, size_t n) {
        _cleanup_free_ char *parent = NULL, *abs = NULL;
        struct cgroup *cg;
        int rc;

        /* There already, with its controllers: nothing to do.  libcgroup's create would walk the whole tree
         * below it and chown every file, once per controller: for each class at every reload, which was 95%
         * of a reload's time with 2,000 jobs in 20 classes (tests/vm/scenarios/scale-bench.sh). */
        if (has_controllers(e, path, controllers, n))
                return 0;
        /* A new cgroup whose parent already gives its children the controllers (a job's slot in its class):
         * a mkdir is all it takes, and the kernel makes its files root's, as libcgroup would chown them. */
        parent = parent_of(path);
        if (!parent)
                return -ENOMEM;
        if (lists_controllers(e, parent, "cgroup.subtree_control", controllers, n)) {
                abs = cgroup_abs_path(e, path, NULL);
                if (!abs)
                        return -ENOMEM;
                return mkdir(abs, 0755) >= 0 || errno == EEXIST ? 0 : -errno;
        }
        cg = cgroup_new_cgroup(path);
        if (!cg)
                return -ENOMEM;
        /* Without a controller, libcgroup returns 0 and creates nothing. */
        for (size_t i = 0; i < n; i++)
                if (!cgroup_add_controller(cg, controllers[i])) {
                        cgroup_free(&cg);
                        return -ENOMEM;
                }
        rc = cgroup_create_cgroup(cg, 0);
        cgroup_free(&cg);
        return lc_errno(rc);
}

/* rmdir of an empty cgroup, through libcgroup with exactly one controller
 * listed: with two it reports ENOENT although it removed the group. */
int engine_rmdir(const char *path) {
        struct cgroup *cg = cgroup_new_cgroup(path);
        int rc;

        if (!cg)
                return -ENOMEM;
        if (!cgroup_add_controller(cg, "memory")) {
                cgroup_free(&cg);
                return -ENOMEM;
        }
        rc = cgroup_delete_cgroup_ext(cg, 0);
        cgroup_free(&cg);
        return lc_errno(rc);
}

/* ---- direct reads ---- */

char *cgroup_abs_path(const struct cgroup_engine *e, const char *path, const char *file) {
        char *p;

        if (asprintf(&p, "%s%s%s%s%s", e->mount, *path ? "/" : "", path, file ? "/" : "", file ?: "") < 0)
                return NULL;
        return p;
}

int cgroup_read_file(struct cgroup_engine *e, const char *path, const char *file, char **ret) {
        _cleanup_free_ char *p = cgroup_abs_path(e, path, file);
        _cleanup_close_ int fd = -1;

        if (!p)
                return -ENOMEM;
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_full_fd_ext(fd, 1024 * 1024, true, ret, NULL);
}

/* The contents of dir's file, without the newline. */
static int read_text_at(int dir, const char *file, char **ret) {
        _cleanup_close_ int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
        size_t n = 0;
        int r;

        if (fd < 0)
                return -errno;
        r = read_full_fd_ext(fd, 4096, true, ret, &n);
        if (r < 0)
                return r;
        while (n > 0 && (*ret)[n - 1] == '\n')
                (*ret)[--n] = '\0';
        return 0;
}

/* The BPF programs a cgroup can carry that filter what its processes do. */
static const enum bpf_attach_type bpf_cgroup_types[] = {
        BPF_CGROUP_INET_INGRESS,
        BPF_CGROUP_INET_EGRESS,
        BPF_CGROUP_INET_SOCK_CREATE,
        BPF_CGROUP_SOCK_OPS,
        BPF_CGROUP_DEVICE,
        BPF_CGROUP_INET4_BIND,
        BPF_CGROUP_INET6_BIND,
        BPF_CGROUP_INET4_CONNECT,
        BPF_CGROUP_INET6_CONNECT,
        BPF_CGROUP_INET4_POST_BIND,
        BPF_CGROUP_INET6_POST_BIND,
        BPF_CGROUP_UDP4_SENDMSG,
        BPF_CGROUP_UDP6_SENDMSG,
        BPF_CGROUP_SYSCTL,
        BPF_CGROUP_UDP4_RECVMSG,
        BPF_CGROUP_UDP6_RECVMSG,
        BPF_CGROUP_GETSOCKOPT,
        BPF_CGROUP_SETSOCKOPT,
        BPF_CGROUP_INET4_GETPEERNAME,
        BPF_CGROUP_INET6_GETPEERNAME,
        BPF_CGROUP_INET4_GETSOCKNAME,
        BPF_CGROUP_INET6_GETSOCKNAME,
        BPF_CGROUP_INET_SOCK_RELEASE,
};

/* The number of BPF programs attached to the cgroup dfd of any filtering kind, or a negative errno. */
static int bpf_programs(int dfd) {
        int n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bpf_cgroup_types); i++) {
                union bpf_attr attr = { .query = { .target_fd = (uint32_t) dfd, .attach_type = bpf_cgroup_types[i] } };

                if (syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) < 0) {
                        if (errno == EINVAL)
                                continue; /* a kind this kernel does not have */
                        return -errno;
                }
                n += (int) attr.query.prog_cnt;
        }
        return n;
}

/* A limit in force in file, or NULL: "max", a cpu.max of "max PERIOD", an empty io.max and a pids.max of
 * tasks_default limit nothing. */
static bool limit_set(const char *file, const char *value, uint64_t tasks_default) {
        uint64_t v;

        if (streq(file, "io.max"))
                return value[0] != '\0';
        if (streq(file, "cpu.max"))
                return !startswith(value, "max ");
        if (streq(value, "max"))
                return false;
        return !(streq(file, "pids.max") && cgv_parse_limit(value, &v) >= 0 && v == tasks_default);
}

int cgroup_confinement(struct cgroup_engine *e, const char *path, const char *top, uint64_t tasks_default, char *what,
                       size_t len) {
        static const char *const files[] = { "memory.max", "memory.high", "memory.swap.max",
                                             "pids.max",   "cpu.max",     "io.max" };
        _cleanup_free_ char *cur = strdup(path);

        assert(path_under(path, top) || !top[0]);
        if (!cur)
                return -ENOMEM;
        for (;;) {
                _cleanup_free_ char *dir = cgroup_abs_path(e, cur, NULL);
                _cleanup_close_ int dfd = -1;
                char *slash;
                int n;

                if (!dir)
                        return -ENOMEM;
                dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0) {
                        snprintf(what, len, "cannot open /%s: %s", cur, strerror(errno));
                        return -errno;
                }
                for (size_t i = 0; cur[0] && i < ELEMENTSOF(files); i++) {
                        _cleanup_free_ char *v = NULL;

                        if (read_text_at(dfd, files[i], &v) < 0)
                                continue; /* no such controller here: nothing of it in force */
                        if (limit_set(files[i], v, tasks_default)) {
                                snprintf(what, len, "%s %s on /%s", files[i], v, cur);
                                return 1;
                        }
                }
                n = bpf_programs(dfd);
                if (n < 0) {
                        snprintf(what, len, "cannot list the BPF programs of /%s: %s", cur, strerror(-n));
                        return n;
                }
                if (n > 0) {
                        snprintf(what, len, "%d BPF program%s on /%s", n, n == 1 ? "" : "s", cur);
                        return 1;
                }
                if (streq(cur, top) || !cur[0])
                        return 0;
                slash = strrchr(cur, '/');
                if (slash)
                        *slash = '\0';
                else
                        cur[0] = '\0';
        }
}

int cgroup_read_u64(struct cgroup_engine *e, const char *path, const char *file, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        int r = cgroup_read_file(e, path, file, &s);

        if (r < 0)
                return r;
        return cgv_parse_limit(s, ret);
}

static int read_keyed(struct cgroup_engine *e, const char *path, const char *file, const char *key, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        int r = cgroup_read_file(e, path, file, &s);

        if (r < 0)
                return r;
        return cgv_parse_keyed(s, key, ret);
}

static bool has_file(const struct cgroup_engine *e, const char *path, const char *file) {
        _cleanup_free_ char *p = cgroup_abs_path(e, path, file);

        return p && access(p, F_OK) == 0;
}

int engine_populated(struct cgroup_engine *e, const char *path, bool *ret) {
        _cleanup_free_ char *s = NULL;
        int r = cgroup_read_file(e, path, "cgroup.events", &s);

        if (r < 0)
                return r;
        return cgv_parse_events(s, ret, NULL);
}

int cgroup_io_read(struct cgroup_engine *e, const char *path, uint64_t *ret_read, uint64_t *ret_written) {
        _cleanup_free_ char *io = NULL;
        int r = cgroup_read_file(e, path, "io.stat", &io);

        return r < 0 ? r : cgv_parse_io_stat(io, ret_read, ret_written);
}

int cgroup_job_read(struct cgroup_engine *e, const char *path, struct cgroup_job_state *ret) {
        _cleanup_free_ char *procs = NULL;
        int r;

        *ret = (struct cgroup_job_state){ .memory_high = UNITS_MAX, .memory_max = UNITS_MAX };
        /* Its processes first: they are there if the cgroup is (whether it is populated, inotify says). */
        r = cgroup_read_file(e, path, "cgroup.procs", &procs);
        if (r < 0)
                return r;
        for (const char *p = procs; *p; p++)
                ret->n_procs += *p == '\n';
        /* Optional: a systemd scope without limits of its own has no memory controller, and none has io. */
        ret->have_io = cgroup_io_read(e, path, &ret->io_read, &ret->io_written) >= 0;
        r = cgroup_read_u64(e, path, "memory.current", &ret->memory_current);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        ret->have_memory = true;
        (void) cgroup_read_u64(e, path, "memory.high", &ret->memory_high);
        (void) cgroup_read_u64(e, path, "memory.max", &ret->memory_max);
        return read_keyed(e, path, "memory.stat", "file", &ret->memory_file);
}

void cgroup_job_counters(struct cgroup_engine *e, const char *path, struct cgroup_job_counters *ret) {
        _cleanup_free_ char *events = NULL, *mp = NULL, *ip = NULL;
        struct cgv_psi psi;

        *ret = (struct cgroup_job_counters){};
        ret->have_io = cgroup_io_read(e, path, &ret->io_read, &ret->io_written) >= 0;
        if (cgroup_read_file(e, path, "memory.events", &events) >= 0)
                ret->have_events = cgv_parse_keyed(events, "high", &ret->high) >= 0 &&
                                   cgv_parse_keyed(events, "max", &ret->max) >= 0 &&
                                   cgv_parse_keyed(events, "oom_kill", &ret->oom_kill) >= 0;
        if (cgroup_read_file(e, path, "memory.pressure", &mp) >= 0 && cgv_parse_psi(mp, &psi) >= 0) {
                ret->memory_stall_usec = psi.some_total;
                ret->have_psi = cgroup_read_file(e, path, "io.pressure", &ip) >= 0 && cgv_parse_psi(ip, &psi) >= 0;
                ret->io_stall_usec = psi.some_total;
        }
        ret->have_peak = cgroup_read_u64(e, path, "memory.peak", &ret->memory_peak) >= 0;
        (void) read_keyed(e, path, "memory.stat", "file", &ret->memory_file);
}

/* ---- the engine ---- */

static int enable_in_root(const char *mount, const char *controller) {
        _cleanup_free_ char *p = NULL, *line = NULL;
        _cleanup_close_ int fd = -1;

        if (asprintf(&p, "%s/cgroup.subtree_control", mount) < 0 || asprintf(&line, "+%s", controller) < 0)
                return -ENOMEM;
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, line, strlen(line)) < 0)
                return -errno;
        return 0;
}

int cgroup_engine_new(const char *mount, const char *root, bool manage, struct cgroup_engine **ret) {
        _cleanup_(cgroup_engine_freep) struct cgroup_engine *e = NULL;
        const char *controllers[3] = { "memory", "io", "cpu" };
        _cleanup_free_ char *rootdir = NULL;
        const char *why;
        size_t n = 3;
        int r;

        if (asprintf(&rootdir, "/%s", root + (root[0] == '/')) < 0)
                return -ENOMEM;
        why = policy_cgroup_path_problem(rootdir);
        if (why)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        pthread_mutex_init(&e->slots_lock, NULL);
        e->mount = strdup(mount);
        e->root = strdup(root + (root[0] == '/'));
        e->idle_slots = CGROUP_IDLE_SLOTS_DEFAULT;
        if (!e->mount || !e->root)
                return -ENOMEM;

        r = lc_init();
        if (r < 0)
                return r;
        if (!manage) {
                e->features.swap = has_file(e, "system.slice", "memory.swap.max");
                *ret = TAKE_PTR(e);
                return 0;
        }
        /* memory and io are required; cpu (for cpu.weight) only if the kernel lets us. */
        r = enable_in_root(mount, "memory");
        if (r < 0)
                return r;
        r = enable_in_root(mount, "io");
        if (r < 0)
                return r;
        e->features.cpu = enable_in_root(mount, "cpu") >= 0;
        if (!e->features.cpu)
                n = 2;
        r = engine_mkdir(e, e->root, controllers, n);
        if (r < 0)
                return r;

        e->features.memory_reclaim = has_file(e, e->root, "memory.reclaim");
        e->features.swap = has_file(e, e->root, "memory.swap.max");
        e->features.freeze = has_file(e, e->root, "cgroup.freeze");
        e->features.kill = has_file(e, e->root, "cgroup.kill");
        e->features.cpu = e->features.cpu && has_file(e, e->root, "cpu.weight");
        {
                _cleanup_free_ char *dir = cgroup_abs_path(e, e->root, NULL);

                if (!dir)
                        return -ENOMEM;
                e->features.user_xattr = setxattr(dir, "user.pagewarden.probe", "1", 1, 0) == 0;
                (void) removexattr(dir, "user.pagewarden.probe");
        }
        *ret = TAKE_PTR(e);
        return 0;
}

struct cgroup_engine *cgroup_engine_free(struct cgroup_engine *e) {
        if (!e)
                return NULL;
        for (size_t i = 0; i < e->n_slots; i++) { /* cgroup-slots.c's indexes */
                free(e->slots[i].cpath);
                free(e->slots[i].state);
        }
        free(e->slots);
        pthread_mutex_destroy(&e->slots_lock);
        free(e->mount);
        free(e->root);
        free(e);
        return NULL;
}

const struct cgroup_features *cgroup_engine_features(const struct cgroup_engine *e) {
        return &e->features;
}

const char *cgroup_engine_mount(const struct cgroup_engine *e) {
        return e->mount;
}

const char *cgroup_engine_root(const struct cgroup_engine *e) {
        return e->root;
}

void cgroup_engine_set_idle_slots(struct cgroup_engine *e, unsigned n) {
        e->idle_slots = n;
}

/* ---- classes ---- */

char *engine_class_path(const struct cgroup_engine *e, const char *class) {
        char *p;

        if (policy_name_problem(class)) /* names are checked again here: no path escapes */
                return NULL;
        if (asprintf(&p, "%s/%s", e->root, class) < 0)
                return NULL;
        return p;
}

static int write_io(struct cgroup_engine *e, const char *path, const struct pw_io_limit *io, size_t n) {
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct cgv_io_line *have = NULL, *plan = NULL;
        size_t n_have = 0, n_plan = 0;
        int r;

        r = cgroup_read_file(e, path, "io.max", &text);
        if (r < 0)
                return r;
        r = cgv_parse_io_max(text, &have, &n_have);
        if (r < 0)
                return r;
        r = cgv_io_plan(io, n, have, n_have, &plan, &n_plan);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_plan; i++) {
                char line[160];

                cgv_format_io_line(&plan[i], line, sizeof(line));
                r = cgroup_write_file(e, path, "io.max", line);
                if (r < 0)
                        return r;
        }
        return 0;
}

enum cgroup_limit_change cgroup_limit_change(struct cgroup_engine *e, const char *path, const char *file, uint64_t v) {
        uint64_t now, current;

        if (cgroup_read_u64(e, path, file, &now) >= 0 && now == v)
                return CGROUP_LIMIT_SAME;
        if (v != UNITS_MAX && cgroup_read_u64(e, path, "memory.current", &current) >= 0 && current > v)
                return CGROUP_LIMIT_RECLAIMS;
        return CGROUP_LIMIT_WRITE;
}

int cgroup_class_apply(struct cgroup_engine *e, const struct pw_job_class *c) {
        const char *controllers[3] = { "memory", "io", "cpu" };
        _cleanup_free_ char *path = engine_class_path(e, c->name);
        int r;

        if (!path)
                return -EINVAL;
        r = engine_mkdir(e, path, controllers, e->features.cpu ? 3 : 2);
        if (r >= 0 && e->features.swap)
                r = engine_write_u64(e, path, "memory.swap.max", c->memory_swap_max);
        if (r >= 0 && e->features.cpu)
                r = engine_write_u64(e, path, "cpu.weight", c->cpu_weight);
        if (r >= 0)
                r = write_io(e, path, c->io, c->n_io);
        return r;
}

int cgroup_class_set_io(struct cgroup_engine *e, const char *class, const struct pw_io_limit *io, size_t n) {
        _cleanup_free_ char *path = engine_class_path(e, class);

        return path ? write_io(e, path, io, n) : -EINVAL;
}

int cgroup_class_freeze(struct cgroup_engine *e, const char *class, bool frozen) {
        _cleanup_free_ char *path = engine_class_path(e, class);

        if (!path)
                return -EINVAL;
        if (!e->features.freeze)
                return -EOPNOTSUPP;
        return cgroup_write_file(e, path, "cgroup.freeze", frozen ? "1" : "0");
}

int cgroup_class_read(struct cgroup_engine *e, const char *path, struct cgroup_class_state *ret) {
        _cleanup_free_ char *io = NULL, *events = NULL;
        bool populated;
        int r;

        *ret = (struct cgroup_class_state){ .memory_swap_max = UNITS_MAX, .cpu_weight = PW_DEFAULT_CPU_WEIGHT };
        r = cgroup_read_u64(e, path, "memory.high", &ret->memory_high);
        if (r < 0)
                return r;
        r = cgroup_read_u64(e, path, "memory.max", &ret->memory_max);
        if (r >= 0)
                r = cgroup_read_u64(e, path, "memory.current", &ret->memory_current);
        /* Optional files: swap accounting, the cpu and io controllers may be off. */
        if (r >= 0)
                (void) cgroup_read_u64(e, path, "memory.swap.max", &ret->memory_swap_max);
        if (r >= 0)
                (void) cgroup_read_u64(e, path, "cpu.weight", &ret->cpu_weight);
        if (r >= 0 && cgroup_read_file(e, path, "io.max", &io) >= 0)
                r = cgv_parse_io_max(io, &ret->io, &ret->n_io);
        if (r >= 0) {
                r = cgroup_read_file(e, path, "cgroup.events", &events);
                if (r >= 0)
                        r = cgv_parse_events(events, &populated, &ret->frozen);
        }
        return r;
}

void cgroup_class_state_done(struct cgroup_class_state *s) {
        free(s->io);
        s->io = NULL;
        s->n_io = 0;
}

int cgroup_thaw_all(struct cgroup_engine *e) {
        _cleanup_free_ char *rootdir = cgroup_abs_path(e, e->root, NULL);
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (!e->features.freeze)
                return 0;
        if (!rootdir)
                return -ENOMEM;
        d = opendir(rootdir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                int k;

                if (de->d_type != DT_DIR || policy_name_problem(de->d_name))
                        continue;
                k = cgroup_class_freeze(e, de->d_name, false);
                if (k < 0 && k != -ENOENT && r == 0)
                        r = k;
        }
        closedir(d);
        return r;
}

/* ---- pressure ---- */

int cgroup_psi_trigger(struct cgroup_engine *e, const char *path, const char *resource, const char *spec, int *ret_fd) {
        _cleanup_free_ char *file = NULL, *p = NULL;
        _cleanup_close_ int fd = -1;

        if (asprintf(&file, "%s.pressure", resource) < 0)
                return -ENOMEM;
        p = path ? cgroup_abs_path(e, path, file) : path_join("/proc/pressure", resource);
        if (!p)
                return -ENOMEM;
        fd = open(p, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, spec, strlen(spec) + 1) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}
