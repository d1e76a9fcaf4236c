/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util.h"

int grow_array(void **array, size_t *allocated, size_t need, size_t sz) {
        size_t n;
        void *p;

        assert(array);
        assert(allocated);
        assert(sz > 0);
        if (need <= *allocated)
                return 0;
        n = *allocated ? *allocated : 4;
        while (n < need) {
                if (n > SIZE_MAX / 2 / sz)
                        return -ENOMEM;
                n *= 2;
        }
        p = realloc(*array, n * sz);
        if (!p)
                return -ENOMEM;
        memset((char *) p + *allocated * sz, 0, (n - *allocated) * sz);
        *array = p;
        *allocated = n;
        return 0;
}

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        return read_full_fd_ext(fd, max, false, ret, ret_size);
}

int read_full_fd_ext(int fd, size_t max, bool short_is_end, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        assert(fd >= 0);
        assert(ret);
        for (;;) {
                ssize_t n;

                /* Grown without GROW()'s zeroing: the daemon reads a few cgroup files per job and tick, and an
                 * 8 KiB memset each was up to 15% of its CPU (perf in the scale benchmark). */
                if (allocated - size < 4096 + 1) {
                        size_t want = allocated ? allocated * 2 : 4096 + 1;
                        char *p;

                        if (want < allocated || !(p = realloc(buf, want)))
                                return -ENOMEM;
                        buf = p;
                        allocated = want;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > max)
                        return -EFBIG;
                if (short_is_end && size < allocated - 1)
                        break;
        }
        buf[size] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        return read_full_fd(fd, max, ret, ret_size);
}

int read_one_line(const char *path, char **ret) {
        char *buf;
        int r;

        r = read_full_file(path, 64 * 1024, &buf, NULL);
        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = '\0';
        *ret = buf;
        return 0;
}

char *path_join(const char *a, const char *b) {
        char *p;

        assert(a);
        assert(b);
        if (!*a)
                return strdup(b);
        while (*b == '/')
                b++;
        if (asprintf(&p, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b) < 0)
                return NULL;
        return p;
}

int fd_write_all(int fd, const char *buf, size_t len) {
        for (size_t off = 0; off < len;) {
                ssize_t n = write(fd, buf + off, len - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EIO;
                off += (size_t) n;
        }
        return 0;
}

int write_file_atomic(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL, *dir = strdup(path);
        _cleanup_close_ int fd = -1;
        char *slash = dir ? strrchr(dir, '/') : NULL;
        size_t len = strlen(text);
        int r;

        if (!dir || asprintf(&tmp, "%s.tmp", path) < 0) {
                tmp = NULL; /* undefined after a failure */
                return -ENOMEM;
        }
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        r = fd_write_all(fd, text, len);
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        if (fsync(fd) < 0 || rename(tmp, path) < 0) {
                r = -errno;
                unlink(tmp);
                return r;
        }
        return 0;
}

void mountinfo_unescape(char *s) {
        char *w = s;

        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = '\0';
}

/* The last answers, each for USER_NAME_TTL_USEC: a move asks twice (the class's users, its answer), a job's end
 * once, a status of 2,000 jobs once per job, and each is a read of /etc/passwd (or a question to NSS's other
 * sources) on the event loop.  "No such user" ("") is kept too: jobs of a uid without a name (a container's) are
 * common.  A rename, or a user made just now, takes effect within the TTL. */
#define USER_NAMES_KEPT 32
#define USER_NAME_TTL_USEC (UINT64_C(10) * 1000000)

static struct {
        uid_t uid;
        uint64_t at; /* CLOCK_MONOTONIC; 0: empty */
        char name[64];
} user_names[USER_NAMES_KEPT];
static pthread_mutex_t user_names_lock = PTHREAD_MUTEX_INITIALIZER;

static bool user_name_kept(uid_t uid, uint64_t now, char *buf, size_t len) {
        bool found = false;

        pthread_mutex_lock(&user_names_lock);
        for (size_t i = 0; i < USER_NAMES_KEPT && !found; i++)
                if (user_names[i].at && user_names[i].uid == uid && now - user_names[i].at < USER_NAME_TTL_USEC &&
                    strlen(user_names[i].name) < len) {
                        strcpy(buf, user_names[i].name);
                        found = true;
                }
        pthread_mutex_unlock(&user_names_lock);
        return found;
}

static void user_name_keep(uid_t uid, uint64_t now, const char *name) {
        size_t slot = 0;

        if (strlen(name) >= sizeof(user_names[0].name))
                return;
        pthread_mutex_lock(&user_names_lock);
        for (size_t i = 0; i < USER_NAMES_KEPT; i++) {
                if (user_names[i].uid == uid || !user_names[i].at) {
                        slot = i;
                        break;
                }
                if (user_names[i].at < user_names[slot].at)
                        slot = i; /* the oldest goes */
        }
        user_names[slot].uid = uid;
        user_names[slot].at = now;
        strcpy(user_names[slot].name, name);
        pthread_mutex_unlock(&user_names_lock);
}

const char *user_name_of(uid_t uid, char *buf, size_t len) {
        struct passwd pw, *res = NULL;
        uint64_t now = now_usec(CLOCK_MONOTONIC) ?: 1;
        char tmp[4096];

        if (len)
                buf[0] = '\0';
        if (len && user_name_kept(uid, now, buf, len))
                return buf[0] ? buf : NULL;
        if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) != 0)
                return NULL; /* an error, not an answer: not kept */
        user_name_keep(uid, now, res ? res->pw_name : "");
        if (!res || strlen(res->pw_name) >= len)
                return NULL;
        return strcpy(buf, res->pw_name);
}
