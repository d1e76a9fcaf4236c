/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cgroup engine's protection I/O: the ledger's (ledger.h) nodes on
 * cgroupfs files, for the backend that owns the ledger.  memory.min,
 * memory.low and memory.swap.max of a protected cgroup and its ancestors,
 * each cgroup pinned by its inode number so that a cgroup removed and made
 * again under the same name is not taken for the one whose original values
 * the ledger keeps.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-engine.h"
#include "cgroup-values.h"
#include "log.h"
#include "util.h"

static bool valid_relative_path(const char *path) {
        _cleanup_free_ char *abs = NULL;

        return asprintf(&abs, "/%s", path) >= 0 && !policy_cgroup_path_problem(abs);
}

int cgroup_protect_ledger_init(struct ledger *l, const char *state_dir) {
        _cleanup_free_ char *file = NULL;

        if (state_dir && asprintf(&file, "%s/protect.state", state_dir) < 0)
                return -ENOMEM;
        return ledger_init(l, file,
                           "# pagewarden: original memory.min memory.low memory.swap.max of cgroups it changed",
                           valid_relative_path);
}

static const char *fs_key(const char *path) {
        return path + (path[0] == '/');
}

/*
 * The cgroup at path, held by its directory: the node with inode number id (0:
 * whichever is there), its number in *ret_id (may be NULL).  Files opened through it are
 * that cgroup's, or fail once it is removed (-ENOENT, -ENODEV), never those
 * of one created again under its name: libcgroup, which goes by name each
 * time, could not promise that.
 */
static int pin_node(struct cgroup_engine *e, const char *path, uint64_t id, uint64_t *ret_id) {
        _cleanup_free_ char *abs = cgroup_abs_path(e, fs_key(path), NULL);
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (!abs)
                return -ENOMEM;
        fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (id && (uint64_t) st.st_ino != id)
                return -ESTALE;
        if (ret_id)
                *ret_id = (uint64_t) st.st_ino;
        return TAKE_FD(fd);
}

static int read_u64_at(int dir, const char *file, uint64_t *ret) {
        _cleanup_close_ int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *s = NULL;
        int r;

        if (fd < 0)
                return -errno;
        r = read_full_fd_ext(fd, 4096, true, &s, NULL);
        return r < 0 ? r : cgv_parse_limit(s, ret);
}

/* Writes v unless the file has it already (a write of the same value is not free: reclaim may run).  O_TRUNC as
 * a shell's '>' has it: cgroupfs ignores it, and a plain file (the unit tests' tree) then holds v alone. */
static int write_u64_at(int dir, const char *file, uint64_t v, uint64_t *ret_now) {
        _cleanup_close_ int fd = -1;
        long page = sysconf(_SC_PAGESIZE);
        uint64_t cur;
        char buf[32];
        int r;

        r = read_u64_at(dir, file, &cur);
        if (r < 0)
                return r;
        *ret_now = cur;
        if (cur == v)
                return 0;
        fd = openat(dir, file, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        cgv_format_limit(v, buf, sizeof(buf));
        if (write(fd, buf, strlen(buf)) < 0)
                return -errno;
        /* The kernel keeps whole pages (page_counter_memparse rounds down). */
        *ret_now = v == UNITS_MAX || page <= 0 ? v : v - v % (uint64_t) page;
        return 0;
}

/* The ledger's reads and writes go through the engine; what they leave in force is kept for the results. */
struct fs_io {
        struct cgroup_engine *e;
        struct cgroup_protect_cache *cache;
};

static void cache_put(struct cgroup_protect_cache *c, const char *path, uint64_t min, uint64_t low);

static int fs_read(void *userdata, const char *path, uint64_t id, bool swap, struct ledger_values *ret,
                   uint64_t *ret_id) {
        struct fs_io *io = userdata;
        _cleanup_close_ int dir = pin_node(io->e, path, id, ret_id);
        int r;

        *ret = (struct ledger_values){};
        if (dir < 0)
                return dir;
        r = read_u64_at(dir, "memory.min", &ret->min);
        if (r >= 0)
                r = read_u64_at(dir, "memory.low", &ret->low);
        if (r >= 0)
                cache_put(io->cache, fs_key(path), ret->min, ret->low);
        if (r >= 0 && swap && io->e->features.swap) {
                r = read_u64_at(dir, "memory.swap.max", &ret->swap_max);
                ret->has_swap = r >= 0;
        }
        return r;
}

static int fs_write(void *userdata, const char *path, uint64_t id, const struct ledger_values *v) {
        struct fs_io *io = userdata;
        _cleanup_close_ int dir = pin_node(io->e, path, id, NULL);
        uint64_t min, low, swap;
        int r;

        if (dir < 0)
                return dir;
        r = write_u64_at(dir, "memory.min", v->min, &min);
        if (r >= 0)
                r = write_u64_at(dir, "memory.low", v->low, &low);
        if (r >= 0)
                cache_put(io->cache, fs_key(path), min, low);
        if (r >= 0 && v->has_swap && io->e->features.swap)
                r = write_u64_at(dir, "memory.swap.max", v->swap_max, &swap);
        return r;
}

struct cgroup_protect_cached {
        char *path;
        bool have_min, have_low;
        uint64_t min, low;
};

void cgroup_protect_cache_done(struct cgroup_protect_cache *c) {
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].path);
        free(c->v);
        *c = (struct cgroup_protect_cache){};
}

/* Keeps (or updates) what is in force on path, as read or written just now. */
static void cache_put(struct cgroup_protect_cache *c, const char *path, uint64_t min, uint64_t low) {
        struct cgroup_protect_cached v = { .have_min = true, .have_low = true, .min = min, .low = low };

        for (size_t i = 0; c && i < c->n; i++)
                if (streq(c->v[i].path, path)) {
                        v.path = c->v[i].path;
                        c->v[i] = v;
                        return;
                }
        if (c && GROW(c->v, c->allocated, c->n + 1) >= 0 && (v.path = strdup(path)))
                c->v[c->n++] = v;
}

/* An ancestor's values, from the cache or read (and kept) now. */
static struct cgroup_protect_cached ancestor(struct cgroup_engine *e, const char *path,
                                             struct cgroup_protect_cache *cache) {
        struct cgroup_protect_cached v = {};

        for (size_t i = 0; cache && i < cache->n; i++)
                if (streq(cache->v[i].path, path))
                        return cache->v[i];
        v.have_min = cgroup_read_u64(e, path, "memory.min", &v.min) >= 0;
        v.have_low = cgroup_read_u64(e, path, "memory.low", &v.low) >= 0;
        if (cache && GROW(cache->v, cache->allocated, cache->n + 1) >= 0 && (v.path = strdup(path))) {
                cache->v[cache->n++] = v;
                v.path = NULL; /* the cache's */
        }
        return v;
}

int cgroup_protect_read(struct cgroup_engine *e, const char *path, struct cgroup_protect_cache *cache,
                        struct cgroup_protect_result *res) {
        _cleanup_free_ char *p = strdup(path);

        *res = (struct cgroup_protect_result){ .effective_min = UNITS_MAX, .effective_low = UNITS_MAX };
        if (!p)
                return -ENOMEM;
        {
                struct cgroup_protect_cached own = ancestor(e, path, cache); /* its own, as for an ancestor */

                if (!own.have_min || !own.have_low) {
                        *res = (struct cgroup_protect_result){ .error = -ENOENT };
                        return -ENOENT;
                }
                res->min = own.min;
                res->low = own.low;
        }
        /* A cgroup is protected only as far as each ancestor is. */
        res->effective_min = res->min;
        res->effective_low = res->low;
        for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
                struct cgroup_protect_cached v;

                *slash = '\0';
                v = ancestor(e, p, cache);
                if (v.have_min && v.min < res->effective_min)
                        res->effective_min = v.min;
                if (v.have_low && v.low < res->effective_low)
                        res->effective_low = v.low;
        }
        return 0;
}

int cgroup_protect_set(struct cgroup_engine *e, struct ledger *l, const struct ledger_request *req, size_t n,
                       struct cgroup_protect_result *results) {
        struct cgroup_protect_cache cache = {};
        struct fs_io fs = { .e = e, .cache = &cache };
        const struct ledger_io io = { .key = fs_key, .read = fs_read, .write = fs_write, .userdata = &fs };
        _cleanup_free_ int *errs = calloc(n + 1, sizeof(int));
        int r;

        if (!errs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (req[i].path && policy_cgroup_path_problem(req[i].path))
                        return -EINVAL;
        r = ledger_apply(l, req, n, &io, errs);
        for (size_t i = 0; r != -ENOMEM && r != -EINVAL && results && i < n; i++)
                if (errs[i] < 0)
                        results[i] = (struct cgroup_protect_result){ .error = errs[i] };
                else
                        (void) cgroup_protect_read(e, fs_key(req[i].path), &cache, &results[i]);
        cgroup_protect_cache_done(&cache);
        return r;
}
