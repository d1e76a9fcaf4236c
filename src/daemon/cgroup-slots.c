/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cgroup engine's job slots: a class's slot-N cgroups, labelled by an
 * xattr while a job holds one, reclaimed and kept idle (or removed) when it
 * ends; the scan that finds them again after a restart.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgroup-engine.h"
#include "cgroup.h"
#include "log.h"
#include "units.h"
#include "util.h"

#define JOB_XATTR "user.pagewarden.job"
#define SLOT_PREFIX "slot-"
/* Below this, what is left charged to a released slot is per-CPU stock, not page cache. */
#define RECLAIM_DONE_BYTES (UINT64_C(64) << 10)
/* The worker's reclaim of a released slot: rounds in all, and rounds in a row without progress (dirty pages
 * being written back cannot go yet) of RECLAIM_STALL_USEC each.  2 s without progress: a busy machine's
 * emulated disk took longer than the first 250 ms to write a job's 33 MiB back, and 25 MiB stayed charged
 * (engine-dying@6.1 in CI). */
#define RECLAIM_ROUNDS 64
#define RECLAIM_STALLS 40
#define RECLAIM_STALL_USEC 50000

static int label_format(const struct cgroup_job_label *l, char *buf, size_t len) {
        int n = snprintf(buf, len, "id=%" PRIu64 " uid=%u started=%" PRIu64 " name=%s%s%s", l->id, (unsigned) l->uid,
                         l->started_usec, l->name, l->by[0] ? " by=" : "", l->by);

        return n < 0 || (size_t) n >= len ? -EINVAL : n;
}

/* "id=N uid=N started=N name=NAME[ by=HOW]": names hold no space, HOW is the rest (labels of 0.1 have none). */
static int label_parse(const char *s, struct cgroup_job_label *ret) {
        const char *by;
        unsigned uid;
        int n = 0;

        *ret = (struct cgroup_job_label){};
        if (sscanf(s, "id=%" SCNu64 " uid=%u started=%" SCNu64 " name=%n", &ret->id, &uid, &ret->started_usec, &n) !=
                    3 ||
            n == 0)
                return -EINVAL;
        ret->uid = (uid_t) uid;
        by = strstr(s + n, " by=");
        snprintf(ret->name, sizeof(ret->name), "%.*s", (int) (by ? (size_t) (by - s - n) : strlen(s + n)), s + n);
        if (by)
                snprintf(ret->by, sizeof(ret->by), "%s", by + 4);
        return 0;
}

/* The label of a slot: 0, -ENODATA when the slot is idle, or another error. */
static int read_label(struct cgroup_engine *e, const char *path, struct cgroup_job_label *ret) {
        _cleanup_free_ char *dir = cgroup_abs_path(e, path, NULL);
        char buf[512];
        ssize_t n;

        if (!dir)
                return -ENOMEM;
        n = getxattr(dir, JOB_XATTR, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return label_parse(buf, ret);
}

static bool slot_number(const char *name, unsigned *ret) {
        const char *rest = startswith(name, SLOT_PREFIX);
        char *end;
        unsigned long v;

        if (!rest || *rest < '0' || *rest > '9')
                return false;
        errno = 0;
        v = strtoul(rest, &end, 10);
        if (errno || *end || v > 100000)
                return false;
        *ret = (unsigned) v;
        return true;
}

/* Idle slots of a class (not labelled, nothing inside), and the lowest unused number. */
static int scan_class_slots(struct cgroup_engine *e, const char *cpath, const char *skip, char **ret_idle,
                            unsigned *ret_n_idle, unsigned *ret_free_number) {
        _cleanup_free_ char *dir = cgroup_abs_path(e, cpath, NULL);
        _cleanup_free_ bool *used = NULL;
        size_t used_len = 0;
        struct dirent *de;
        unsigned n_idle = 0;
        DIR *d;

        if (ret_idle)
                *ret_idle = NULL;
        if (!dir)
                return -ENOMEM;
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_free_ char *spath = NULL;
                struct cgroup_job_label label;
                unsigned num;
                bool populated;

                if (de->d_type != DT_DIR || !slot_number(de->d_name, &num))
                        continue;
                if (num >= used_len && GROW(used, used_len, num + 1) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                used[num] = true;
                if (asprintf(&spath, "%s/%s", cpath, de->d_name) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                if (skip && streq(spath, skip))
                        continue;
                if (read_label(e, spath, &label) != -ENODATA)
                        continue;
                if (engine_populated(e, spath, &populated) < 0 || populated)
                        continue;
                n_idle++;
                if (ret_idle && !*ret_idle)
                        *ret_idle = TAKE_PTR(spath);
        }
        closedir(d);
        if (ret_n_idle)
                *ret_n_idle = n_idle;
        if (ret_free_number) {
                unsigned k = 0;

                while (k < used_len && used[k])
                        k++;
                *ret_free_number = k;
        }
        return 0;
}

int cgroup_job_acquire(struct cgroup_engine *e, const char *class, const struct cgroup_job_label *label,
                       char **ret_path, int *ret_fd) {
        _cleanup_free_ char *cpath = engine_class_path(e, class), *spath = NULL, *dir = NULL;
        /* io too: its io.stat is what the job read and wrote, for its report and top */
        const char *controllers[2] = { "memory", "io" };
        char value[512];
        unsigned free_number;
        int r;

        if (!cpath || policy_name_problem(label->name))
                return -EINVAL;
        if (!e->features.user_xattr)
                return -EOPNOTSUPP;
        r = label_format(label, value, sizeof(value));
        if (r < 0)
                return r;
        /* Another acquirer may take the same idle slot or slot number between our
         * scan and our label (XATTR_CREATE fails then): scan again. */
        for (unsigned attempt = 0;; attempt++) {
                r = scan_class_slots(e, cpath, NULL, &spath, NULL, &free_number);
                if (r < 0)
                        return r;
                if (!spath) {
                        if (asprintf(&spath, "%s/" SLOT_PREFIX "%u", cpath, free_number) < 0)
                                return -ENOMEM;
                        r = engine_mkdir(e, spath, controllers, 2);
                        if (r < 0)
                                return r;
                }
                dir = cgroup_abs_path(e, spath, NULL);
                if (!dir)
                        return -ENOMEM;
                if (setxattr(dir, JOB_XATTR, value, strlen(value), XATTR_CREATE) >= 0)
                        break;
                if (errno != EEXIST || attempt >= 16)
                        return -errno;
                spath = mfree(spath);
                dir = mfree(dir);
        }
        /* A slot whose last job was frozen by an operator (pagewardenctl freeze) and then killed: the next
         * job must not start frozen. */
        if (e->features.freeze)
                (void) cgroup_write_file(e, spath, "cgroup.freeze", "0");
        if (ret_fd) {
                *ret_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (*ret_fd < 0) {
                        r = -errno;
                        (void) removexattr(dir, JOB_XATTR);
                        return r;
                }
        }
        *ret_path = TAKE_PTR(spath);
        return 0;
}

int cgroup_job_set_limits(struct cgroup_engine *e, const char *path, const struct pw_job_limits *l) {
        int r;

        /* max first, so that a lower high never meets an old lower max. */
        r = engine_write_u64(e, path, "memory.max", UNITS_MAX);
        if (r >= 0)
                r = engine_write_u64(e, path, "memory.high", l->memory_high);
        if (r >= 0)
                r = engine_write_u64(e, path, "memory.max", l->memory_max);
        if (r >= 0 && e->features.swap)
                r = engine_write_u64(e, path, "memory.swap.max", l->memory_swap_max);
        return r;
}

int cgroup_job_attach(struct cgroup_engine *e, const char *path, pid_t pid) {
        char buf[32];

        snprintf(buf, sizeof(buf), "%d", (int) pid);
        return cgroup_write_file(e, path, "cgroup.procs", buf);
}

static int reclaim(struct cgroup_engine *e, const char *path, uint64_t *ret_before, uint64_t *ret_after) {
        uint64_t cur;
        int r;

        r = cgroup_read_u64(e, path, "memory.current", &cur);
        if (r < 0)
                return r;
        *ret_before = cur;
        if (e->features.memory_reclaim) {
                unsigned stalls = 0;

                for (unsigned i = 0; i < RECLAIM_ROUNDS && cur > RECLAIM_DONE_BYTES; i++) {
                        uint64_t now;

                        /* EAGAIN: it could not reclaim all it was asked to; what it did counts. */
                        r = engine_write_u64(e, path, "memory.reclaim", cur);
                        if (r < 0 && r != -EAGAIN)
                                return r;
                        r = cgroup_read_u64(e, path, "memory.current", &now);
                        if (r < 0)
                                return r;
                        if (now >= cur) {
                                /* Dirty pages under writeback cannot go yet: give it a moment. */
                                if (++stalls > RECLAIM_STALLS)
                                        break;
                                (void) usleep(RECLAIM_STALL_USEC);
                        } else
                                stalls = 0;
                        cur = now;
                }
        } else if (cur > RECLAIM_DONE_BYTES) {
                /* Before 5.19: memory.max 0 on an empty group reclaims everything it can. */
                r = cgroup_write_file(e, path, "memory.max", "0");
                if (r < 0 && r != -EBUSY)
                        return r;
                r = cgroup_write_file(e, path, "memory.max", "max");
                if (r < 0)
                        return r;
                r = cgroup_read_u64(e, path, "memory.current", &cur);
                if (r < 0)
                        return r;
        }
        *ret_after = cur;
        return 0;
}

int cgroup_job_release(struct cgroup_engine *e, const char *path, struct cgroup_release *ret) {
        _cleanup_free_ char *cpath = strdup(path), *dir = cgroup_abs_path(e, path, NULL);
        struct cgroup_release rel = {};
        unsigned n_idle = 0;
        bool populated;
        char *slash;
        int r;

        if (!cpath || !dir)
                return -ENOMEM;
        slash = strrchr(cpath, '/');
        if (!slash || !startswith(path, e->root))
                return -EINVAL;
        *slash = '\0';

        r = engine_populated(e, path, &populated);
        if (r < 0)
                return r;
        if (populated)
                return -EBUSY;
        r = reclaim(e, path, &rel.before, &rel.after);
        if (r < 0)
                return r;

        r = scan_class_slots(e, cpath, path, NULL, &n_idle, NULL);
        if (r < 0)
                return r;
        /* Beyond the idle pool a slot goes, unless pages are still charged to it (dirty ones under writeback
         * when reclaim gave up): removed, it would linger as a dying memcg; kept, the next job reuses it. */
        if (n_idle >= e->idle_slots && rel.after <= RECLAIM_DONE_BYTES) {
                r = engine_rmdir(path);
                if (r < 0)
                        return r;
                rel.removed = true;
        } else if (removexattr(dir, JOB_XATTR) < 0 && errno != ENODATA)
                return -errno;
        if (ret)
                *ret = rel;
        return 0;
}

int cgroup_scan(struct cgroup_engine *e, struct cgroup_slot **ret, size_t *ret_n) {
        _cleanup_free_ char *rootdir = cgroup_abs_path(e, e->root, NULL);
        struct cgroup_slot *slots = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (!rootdir)
                return -ENOMEM;
        d = opendir(rootdir);
        if (!d)
                return -errno;
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *cpath = NULL, *cdir = NULL;
                struct dirent *se;
                DIR *sd;

                if (de->d_type != DT_DIR || policy_name_problem(de->d_name))
                        continue;
                if (asprintf(&cpath, "%s/%s", e->root, de->d_name) < 0 || !(cdir = cgroup_abs_path(e, cpath, NULL))) {
                        r = -ENOMEM;
                        break;
                }
                sd = opendir(cdir);
                if (!sd)
                        continue; /* removed meanwhile */
                while ((se = readdir(sd))) {
                        struct cgroup_slot s = {};
                        unsigned num;

                        if (se->d_type != DT_DIR || !slot_number(se->d_name, &num))
                                continue;
                        if (asprintf(&s.path, "%s/%s", cpath, se->d_name) < 0 || !(s.class = strdup(de->d_name)) ||
                            GROW(slots, allocated, n + 1) < 0) {
                                free(s.path);
                                free(s.class);
                                r = -ENOMEM;
                                break;
                        }
                        s.labelled = read_label(e, s.path, &s.label) >= 0;
                        if (engine_populated(e, s.path, &s.populated) < 0)
                                s.populated = false;
                        slots[n++] = s;
                }
                closedir(sd);
        }
        closedir(d);
        if (r < 0) {
                cgroup_slots_free(slots, n);
                return r;
        }
        *ret = slots;
        *ret_n = n;
        return 0;
}

void cgroup_slots_free(struct cgroup_slot *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(s[i].class);
                free(s[i].path);
        }
        free(s);
}

int cgroup_class_remove(struct cgroup_engine *e, const char *class) {
        _cleanup_free_ char *cpath = engine_class_path(e, class);
        struct cgroup_slot *slots = NULL;
        size_t n = 0;
        int r;

        if (!cpath)
                return -EINVAL;
        r = cgroup_scan(e, &slots, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                if (streq(slots[i].class, class) && (slots[i].labelled || slots[i].populated))
                        r = -EBUSY;
        for (size_t i = 0; i < n && r >= 0; i++) {
                uint64_t before, after;

                if (!streq(slots[i].class, class))
                        continue;
                r = reclaim(e, slots[i].path, &before, &after);
                if (r >= 0)
                        r = engine_rmdir(slots[i].path);
        }
        cgroup_slots_free(slots, n);
        if (r < 0)
                return r;
        return engine_rmdir(cpath);
}
