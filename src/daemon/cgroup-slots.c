/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cgroup engine's job slots: a class's slot-N cgroups, labelled by an
 * xattr while a job holds one, reclaimed and kept idle (or removed) when it
 * ends; the scan that finds them again after a restart.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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

/* ---- each class's slots, indexed ---- */

/*
 * Which numbers of a class are idle slots, busy ones or free, so that a job's
 * acquisition and release do not read every slot of its class (a getxattr
 * and a cgroup.events each: with 2,000 jobs in 20 classes, 100 of each per
 * move, and most of a job end's CPU in the scale benchmark's profile).  Made
 * by a scan of the class the first time it is needed, kept by acquire and
 * release, and dropped, to be made again, when the tree is not as it says
 * (another acquirer labelled a slot first, a slot went).  Acquire runs on the
 * loop, release on the worker thread: under the engine's slots_lock.
 */

static void index_free(struct slot_index *x) {
        free(x->cpath);
        free(x->state);
}

static int index_set(struct slot_index *x, unsigned num, enum slot_state state) {
        if (GROW(x->state, x->allocated, (size_t) num + 1) < 0) /* what it adds is SLOT_NONE (0) */
                return -ENOMEM;
        if (num >= x->n)
                x->n = (size_t) num + 1;
        x->state[num] = state;
        return 0;
}

/* A class's slots as they are now: idle (no label, nothing inside) or busy, by number. */
static int scan_class(struct cgroup_engine *e, const char *cpath, struct slot_index *ret) {
        _cleanup_free_ char *dir = cgroup_abs_path(e, cpath, NULL);
        struct slot_index x = { .cpath = strdup(cpath) };
        struct dirent *de;
        int r = 0;
        DIR *d;

        if (!dir || !x.cpath) {
                index_free(&x);
                return -ENOMEM;
        }
        d = opendir(dir);
        if (!d) {
                index_free(&x);
                return -errno;
        }
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *spath = NULL;
                struct cgroup_job_label label;
                bool populated = true;
                unsigned num;

                if (de->d_type != DT_DIR || !slot_number(de->d_name, &num))
                        continue;
                if (asprintf(&spath, "%s/%s", cpath, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                r = index_set(&x, num,
                              read_label(e, spath, &label) == -ENODATA && engine_populated(e, spath, &populated) >= 0 &&
                                              !populated
                                      ? SLOT_IDLE
                                      : SLOT_BUSY);
        }
        closedir(d);
        if (r < 0) {
                index_free(&x);
                return r;
        }
        *ret = x;
        return 0;
}

/* Under the lock: the class's index, NULL if there is none. */
static struct slot_index *index_find(struct cgroup_engine *e, const char *cpath) {
        for (size_t i = 0; i < e->n_slots; i++)
                if (streq(e->slots[i].cpath, cpath))
                        return &e->slots[i];
        return NULL;
}

/* Under the lock: the class's index, made by a scan if there is none. */
static int index_get(struct cgroup_engine *e, const char *cpath, struct slot_index **ret) {
        struct slot_index fresh;
        int r;

        *ret = index_find(e, cpath);
        if (*ret)
                return 0;
        r = scan_class(e, cpath, &fresh);
        if (r < 0)
                return r;
        if (GROW(e->slots, e->allocated_slots, e->n_slots + 1) < 0) {
                index_free(&fresh);
                return -ENOMEM;
        }
        e->slots[e->n_slots] = fresh;
        *ret = &e->slots[e->n_slots++];
        return 0;
}

/* The tree is not as the class's index says: made again by a scan when it is next needed. */
static void index_forget(struct cgroup_engine *e, const char *cpath) {
        pthread_mutex_lock(&e->slots_lock);
        for (size_t i = 0; i < e->n_slots; i++)
                if (streq(e->slots[i].cpath, cpath)) {
                        index_free(&e->slots[i]);
                        e->slots[i] = e->slots[--e->n_slots];
                        break;
                }
        pthread_mutex_unlock(&e->slots_lock);
}

/* A number for a job, marked busy: the class's lowest idle slot (*ret_idle), else its lowest free number. */
static int index_take(struct cgroup_engine *e, const char *cpath, unsigned *ret, bool *ret_idle) {
        struct slot_index *x;
        size_t k = 0;
        int r;

        pthread_mutex_lock(&e->slots_lock);
        r = index_get(e, cpath, &x);
        if (r >= 0) {
                while (k < x->n && x->state[k] != SLOT_IDLE)
                        k++;
                *ret_idle = k < x->n;
                if (!*ret_idle)
                        for (k = 0; k < x->n && x->state[k] != SLOT_NONE;)
                                k++;
                r = k > 100000 ? -ENOSPC : index_set(x, (unsigned) k, SLOT_BUSY);
                *ret = (unsigned) k;
        }
        pthread_mutex_unlock(&e->slots_lock);
        return r;
}

/* How many idle slots the class has besides number num (its index made by a scan if there is none). */
static int index_idle_besides(struct cgroup_engine *e, const char *cpath, unsigned num, unsigned *ret) {
        struct slot_index *x;
        int r;

        pthread_mutex_lock(&e->slots_lock);
        r = index_get(e, cpath, &x);
        *ret = 0;
        for (size_t k = 0; r >= 0 && k < x->n; k++)
                *ret += k != num && x->state[k] == SLOT_IDLE;
        pthread_mutex_unlock(&e->slots_lock);
        return r;
}

/* Number num of the class is in state now, if the class has an index. */
static void index_mark(struct cgroup_engine *e, const char *cpath, unsigned num, enum slot_state state) {
        struct slot_index *x;

        pthread_mutex_lock(&e->slots_lock);
        x = index_find(e, cpath);
        if (x && index_set(x, num, state) < 0) {
                index_free(x);
                *x = e->slots[--e->n_slots]; /* out of memory: scanned again next time */
        }
        pthread_mutex_unlock(&e->slots_lock);
}

int cgroup_job_acquire(struct cgroup_engine *e, const char *class, const struct cgroup_job_label *label,
                       char **ret_path, int *ret_fd) {
        _cleanup_free_ char *cpath = engine_class_path(e, class), *spath = NULL, *dir = NULL;
        /* io too: its io.stat is what the job read and wrote, for its report and top */
        const char *controllers[2] = { "memory", "io" };
        char value[512];
        bool idle = false;
        int r;

        if (!cpath || policy_name_problem(label->name))
                return -EINVAL;
        if (!e->features.user_xattr)
                return -EOPNOTSUPP;
        r = label_format(label, value, sizeof(value));
        if (r < 0)
                return r;
        /* The label is the arbiter: another acquirer may have taken the slot or the number the index gave (then
         * XATTR_CREATE fails), or the slot may have gone: the class is scanned again. */
        for (unsigned attempt = 0;;) {
                unsigned num;
                bool populated;

                spath = mfree(spath);
                dir = mfree(dir);
                r = index_take(e, cpath, &num, &idle);
                if (r < 0)
                        return r;
                if (asprintf(&spath, "%s/" SLOT_PREFIX "%u", cpath, num) < 0)
                        return -ENOMEM;
                if (idle && (engine_populated(e, spath, &populated) < 0 || populated))
                        continue; /* processes but no label (an operator's, a job's child left behind): busy now */
                if (!idle) {
                        r = engine_mkdir(e, spath, controllers, 2);
                        if (r < 0) {
                                index_forget(e, cpath);
                                return r;
                        }
                }
                dir = cgroup_abs_path(e, spath, NULL);
                if (!dir) {
                        index_forget(e, cpath);
                        return -ENOMEM;
                }
                if (setxattr(dir, JOB_XATTR, value, strlen(value), XATTR_CREATE) >= 0)
                        break;
                r = -errno;
                index_forget(e, cpath);
                if ((r != -EEXIST && r != -ENOENT) || ++attempt >= 16)
                        return r;
        }
        /* A slot whose last job was frozen by an operator (pagewardenctl freeze) and then killed: the next
         * job must not start frozen.  (A new cgroup is not.) */
        if (e->features.freeze && idle)
                (void) cgroup_write_file(e, spath, "cgroup.freeze", "0");
        if (ret_fd) {
                *ret_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (*ret_fd < 0) {
                        r = -errno;
                        (void) removexattr(dir, JOB_XATTR);
                        index_forget(e, cpath); /* idle again, or gone: the next acquisition scans */
                        return r;
                }
        }
        *ret_path = TAKE_PTR(spath);
        return !idle;
}

/* A value for a slot: a new one has the kernel's defaults ("max"), which need no write. */
static int slot_write(struct cgroup_engine *e, const char *path, bool fresh, const char *file, uint64_t v) {
        return fresh && v == UNITS_MAX ? 0 : engine_write_u64(e, path, file, v);
}

int cgroup_job_set_limits(struct cgroup_engine *e, const char *path, bool fresh, const struct pw_job_limits *l) {
        int r;

        /* max first, so that a lower high never meets an old lower max. */
        r = slot_write(e, path, fresh, "memory.max", UNITS_MAX);
        if (r >= 0)
                r = slot_write(e, path, fresh, "memory.high", l->memory_high);
        if (r >= 0)
                r = slot_write(e, path, fresh, "memory.max", l->memory_max);
        if (r >= 0 && e->features.swap)
                r = slot_write(e, path, fresh, "memory.swap.max", l->memory_swap_max);
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
        unsigned n_idle = 0, num = UINT_MAX;
        bool populated, numbered;
        char *slash;
        int r;

        if (!cpath || !dir)
                return -ENOMEM;
        slash = strrchr(cpath, '/');
        if (!slash || !startswith(path, e->root))
                return -EINVAL;
        *slash = '\0';
        numbered = slot_number(slash + 1, &num);

        r = engine_populated(e, path, &populated);
        if (r < 0)
                return r;
        if (populated)
                return -EBUSY;
        r = reclaim(e, path, &rel.before, &rel.after);
        if (r < 0)
                return r;

        r = index_idle_besides(e, cpath, num, &n_idle);
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
        if (numbered)
                index_mark(e, cpath, num, rel.removed ? SLOT_NONE : SLOT_IDLE);
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
