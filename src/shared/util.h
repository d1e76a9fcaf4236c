/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Small helpers shared by every module: cleanup attributes, string
 * comparison and array sizes.  Destructors used with _cleanup_ accept NULL.
 * Functions return 0 or a negative errno; out of memory is -ENOMEM, or
 * NULL for those that return a new string.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

/* Hand over ownership of a pointer or fd held by a _cleanup_ variable. */
#define TAKE_PTR(p)                        \
        ({                                 \
                __typeof__(p) _tmp_ = (p); \
                (p) = NULL;                \
                _tmp_;                     \
        })
#define TAKE_FD(fd)               \
        ({                        \
                int _tmp_ = (fd); \
                (fd) = -1;        \
                _tmp_;            \
        })

static inline bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

/* The length of the control character at s: 1 for C0 (NUL aside) and DEL, 2 for a C1 control (U+0080 to
 * U+009F) in UTF-8, 0 for anything else. Terminals act on C1 controls as on C0 ones (U+009B is CSI), and
 * YAML does not allow them raw. */
static inline size_t control_char_len(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        if ((p[0] > 0 && p[0] < 0x20) || p[0] == 0x7f)
                return 1;
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
                return 2;
        return 0;
}

static inline bool has_control_char(const char *s) {
        for (; *s; s++)
                if (control_char_len(s) > 0)
                        return true;
        return false;
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

/* Returns the part after prefix if s starts with it, NULL otherwise. */
static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

/* path is top or below it ("/a/b" is below "/a", "/ab" is not). */
static inline bool path_under(const char *path, const char *top) {
        const char *rest = startswith(path, top);

        return rest && (*rest == '\0' || *rest == '/');
}

/* Decodes the octal escapes (\040 for a space) of a mountinfo or fstab path, in place. */
void mountinfo_unescape(char *s);

static inline bool endswith(const char *s, const char *suffix) {
        size_t ls = strlen(s), lx = strlen(suffix);
        return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

/* end - start of a counter, 0 if it went back (a cgroup made again counts from 0). */
static inline uint64_t counter_since(uint64_t end, uint64_t start) {
        return end >= start ? end - start : 0;
}

/* The clock's time in microseconds (CLOCK_MONOTONIC or CLOCK_REALTIME). */
static inline uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* Grow *array so that it can hold at least need elements of size sz. */
int grow_array(void **array, size_t *allocated, size_t need, size_t sz);
/* Intrusive doubly-linked lists: an item has prev and next, head points at the first (NULL: empty). */
#define LIST_PREPEND(head, item)                     \
        do {                                         \
                (item)->prev = NULL;                 \
                (item)->next = (head);               \
                if ((item)->next)                    \
                        (item)->next->prev = (item); \
                (head) = (item);                     \
        } while (0)
#define LIST_REMOVE(head, item)                            \
        do {                                               \
                if ((item)->prev)                          \
                        (item)->prev->next = (item)->next; \
                else                                       \
                        (head) = (item)->next;             \
                if ((item)->next)                          \
                        (item)->next->prev = (item)->prev; \
                (item)->prev = (item)->next = NULL;        \
        } while (0)

#define GROW(array, allocated, need) grow_array((void **) &(array), &(allocated), (need), sizeof(*(array)))

/* Reads a whole file, at most max bytes (-EFBIG beyond). NUL-terminated. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size);
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_size);
/* The same; short_is_end: a read that does not fill the buffer is the end (a regular file's, or cgroupfs's, whose
 * seq_file fills a read as far as its text goes: one read() for a small file, not two). */
int read_full_fd_ext(int fd, size_t max, bool short_is_end, char **ret, size_t *ret_size);

/* First line of a small file (a sysfs or cgroupfs attribute), without '\n'. */
int read_one_line(const char *path, char **ret);

char *path_join(const char *a, const char *b);

/* Replaces path with text: written to path.tmp, synced, renamed over path;
 * the directory is created (0755) if it is missing. */
/* Writes all len bytes of buf to fd (a short write or EINTR: the rest again); 0 or a negative errno. */
int fd_write_all(int fd, const char *buf, size_t len);
int write_file_atomic(const char *path, const char *text);
/* uid's user name (getpwuid_r, kept 10 s) in buf, which it returns; NULL (buf "") if it has none or it does not
 * fit. */
const char *user_name_of(uid_t uid, char *buf, size_t len);
