/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "util.h"

#define FAIL(code, msg)             \
        do {                        \
                *ret_error = (msg); \
                return -(code);     \
        } while (0)

/*
 * Parses "digits[.digits]" at *p.  Returns the integer part and the fraction
 * as numerator/denominator (at most 18 fraction digits, which is enough for
 * any unit we multiply by).  Advances *p past what it consumed.
 */
static int parse_decimal(const char **p, uint64_t *ret_int, uint64_t *ret_num, uint64_t *ret_den,
                         const char **ret_error) {
        const char *s = *p;
        uint64_t v = 0, num = 0, den = 1;

        if (*s == '-')
                FAIL(EINVAL, "negative values are not allowed");
        if (*s < '0' || *s > '9')
                FAIL(EINVAL, "expected a number");
        for (; *s >= '0' && *s <= '9'; s++)
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t) (*s - '0'), &v))
                        FAIL(ERANGE, "number is too large");
        if (*s == '.') {
                s++;
                if (*s < '0' || *s > '9')
                        FAIL(EINVAL, "expected digits after the decimal point");
                for (; *s >= '0' && *s <= '9'; s++) {
                        if (den >= UINT64_C(1000000000000000000))
                                FAIL(EINVAL, "too many digits after the decimal point");
                        num = num * 10 + (uint64_t) (*s - '0');
                        den *= 10;
                }
        }
        *p = s;
        *ret_int = v;
        *ret_num = num;
        *ret_den = den;
        return 0;
}

/* v + num/den, all times mult, rounded down; -ERANGE on overflow. */
static int scale(uint64_t v, uint64_t num, uint64_t den, uint64_t mult, uint64_t *ret) {
        unsigned __int128 t = (unsigned __int128) v * mult + (unsigned __int128) num * mult / den;

        if (t > UINT64_MAX)
                return -ERANGE;
        *ret = (uint64_t) t;
        return 0;
}

/* The multiplier of the suffix s[0..n): K, M, G, T or KiB, MiB, GiB, TiB (both powers of 1024), B, or none. */
static int suffix_multiplier(const char *s, size_t n, uint64_t *ret) {
        static const char letters[] = "KMGT";
        const char *l;

        if (n == 0 || (n == 1 && s[0] == 'B')) {
                *ret = 1;
                return 0;
        }
        if (s[0] == '\0' || !(l = strchr(letters, s[0])) || !(n == 1 || (n == 3 && strncmp(s + 1, "iB", 2) == 0)))
                return -EINVAL;
        *ret = UINT64_C(1) << (10 * (l - letters + 1));
        return 0;
}

/* KB, MB, GB, TB: powers of 1000 to some and of 1024 to others, so refused with their own message. */
static bool suffix_ambiguous(const char *s, size_t n) {
        return n == 2 && s[0] != '\0' && strchr("KMGT", s[0]) && s[1] == 'B';
}

/*
 * "digits[.digits]", then an optional space and K, M, G, T, KiB, MiB, GiB or
 * TiB (powers of 1024) or B, in bytes, then "/s" if per_second: 256M, 256MiB,
 * "256 MiB" and "1.5 GiB" as status prints them.
 */
static int parse_bytes(const char *s, bool per_second, uint64_t *ret, const char **ret_error, const char *bad_suffix,
                       const char *not_whole, const char *too_large) {
        uint64_t v, num, den, mult;
        const char *p = s;
        size_t n;
        int r;

        r = parse_decimal(&p, &v, &num, &den, ret_error);
        if (r < 0)
                return r;
        if (*p == ' ' && p[1] != '\0' && p[1] != '/')
                p++; /* "256 MiB"; but not "256 " nor "256 /s" */
        n = strlen(p);
        if (per_second && endswith(p, "/s"))
                n -= 2;
        if (suffix_ambiguous(p, n))
                FAIL(EINVAL,
                     "KB, MB, GB and TB are ambiguous: write K, M, G, T or KiB, MiB, GiB, TiB (powers of "
                     "1024)");
        if (suffix_multiplier(p, n, &mult) < 0)
                FAIL(EINVAL, bad_suffix);
        if (den > 1 && mult == 1)
                FAIL(EINVAL, not_whole);
        if (scale(v, num, den, mult, ret) < 0)
                FAIL(ERANGE, too_large);
        return 0;
}

int units_parse_percent(const char *s, uint32_t *ret, const char **ret_error) {
        uint64_t v, num, den, hundredths;
        const char *p = s;
        int r;

        assert(s);
        assert(ret);
        assert(ret_error);
        r = parse_decimal(&p, &v, &num, &den, ret_error);
        if (r < 0)
                return r;
        if (!streq(p, "%"))
                FAIL(EINVAL, "expected a percentage such as 25%");
        if (den > 100)
                FAIL(EINVAL, "percentages take at most two decimals");
        if (v > 100)
                FAIL(ERANGE, "percentage is over 100%");
        hundredths = v * 100 + num * (100 / den);
        if (hundredths > UNITS_PERCENT_FULL)
                FAIL(ERANGE, "percentage is over 100%");
        *ret = (uint32_t) hundredths;
        return 0;
}

int units_parse_size(const char *s, uint64_t ram_bytes, uint64_t *ret, const char **ret_error) {
        int r;

        assert(s);
        assert(ret);
        assert(ret_error);
        if (streq(s, "max")) {
                *ret = UNITS_MAX;
                return 0;
        }
        if (endswith(s, "%")) {
                uint32_t pct;

                r = units_parse_percent(s, &pct, ret_error);
                if (r < 0)
                        return r;
                if (ram_bytes == 0)
                        FAIL(EINVAL, "percentages of RAM need the machine's RAM size");
                *ret = (uint64_t) ((unsigned __int128) ram_bytes * pct / UNITS_PERCENT_FULL);
                return 0;
        }
        r = parse_bytes(s, false, ret, ret_error,
                        "expected a size such as 512M or 1.5 GiB: a number with K, M, G, T or KiB, MiB, GiB, TiB "
                        "(powers of 1024), a percentage of RAM, or max",
                        "a size in bytes must be a whole number", "size is too large");
        if (r < 0)
                return r;
        if (*ret == UNITS_MAX)
                FAIL(ERANGE, "size is too large (write max for no limit)");
        return 0;
}

int units_parse_bandwidth(const char *s, uint64_t *ret, const char **ret_error) {
        int r;

        assert(s);
        assert(ret);
        assert(ret_error);
        if (streq(s, "max")) {
                *ret = UNITS_MAX;
                return 0;
        }
        r = parse_bytes(s, true, ret, ret_error,
                        "expected a bandwidth such as 80M or 80 MiB/s (bytes per second; K/M/G/T and KiB/MiB/GiB/TiB "
                        "are "
                        "powers of 1024) or max",
                        "a bandwidth in bytes must be a whole number", "bandwidth is too large");
        if (r < 0)
                return r;
        if (*ret == UNITS_MAX)
                FAIL(ERANGE, "bandwidth is too large");
        if (*ret == 0)
                FAIL(ERANGE, "a bandwidth of 0 would stop all I/O");
        return 0;
}

int units_parse_iops(const char *s, uint64_t *ret, const char **ret_error) {
        assert(s);
        assert(ret);
        if (streq(s, "max")) {
                *ret = UNITS_MAX;
                return 0;
        }
        int r = units_parse_uint(s, 0, UNITS_MAX - 1, ret, ret_error);

        if (r < 0)
                return r;
        if (*ret == 0)
                FAIL(ERANGE, "at least 1 operation per second (0 would stop all I/O; write max for no limit)");
        return 0;
}

int units_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret, const char **ret_error) {
        uint64_t v, num, den;
        const char *p = s;
        int r;

        assert(s);
        assert(ret);
        assert(ret_error);
        r = parse_decimal(&p, &v, &num, &den, ret_error);
        if (r < 0)
                return r;
        if (*p != '\0' || den != 1)
                FAIL(EINVAL, "expected a whole number");
        if (v < min || v > max)
                FAIL(ERANGE, "number is out of range");
        *ret = v;
        return 0;
}

int units_parse_duration(const char *s, uint64_t *ret_usec, const char **ret_error) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } table[] = {
                { "ms", UINT64_C(1000) },
                { "s", UINT64_C(1000000) },
                { "m", UINT64_C(60000000) },
        };
        uint64_t v, num, den;
        const char *p = s;
        int r;

        assert(s);
        assert(ret_usec);
        assert(ret_error);
        r = parse_decimal(&p, &v, &num, &den, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(p, table[i].suffix)) {
                        if (scale(v, num, den, table[i].usec, ret_usec) < 0)
                                FAIL(ERANGE, "duration is too long");
                        return 0;
                }
        if (*p == '\0')
                FAIL(EINVAL, "a duration needs a unit: ms, s or m (500ms, 10s, 5m)");
        FAIL(EINVAL, "unknown duration unit: use ms, s or m (500ms, 10s, 5m)");
}

void units_format_size(uint64_t v, char *buf, size_t len) {
        if (v == UNITS_MAX)
                snprintf(buf, len, "max");
        else
                snprintf(buf, len, "%" PRIu64, v);
}

void units_format_duration(uint64_t usec, char *buf, size_t len) {
        if (usec % UINT64_C(60000000) == 0 && usec > 0)
                snprintf(buf, len, "%" PRIu64 "m", usec / UINT64_C(60000000));
        else if (usec % UINT64_C(1000000) == 0)
                snprintf(buf, len, "%" PRIu64 "s", usec / UINT64_C(1000000));
        else if (usec % 1000 == 0)
                snprintf(buf, len, "%" PRIu64 "ms", usec / 1000);
        else /* not reachable from the parser's units, but stays exact */
                snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 "ms", usec / 1000, usec % 1000);
}

void units_format_percent(uint32_t v, char *buf, size_t len) {
        if (v % 100 == 0)
                snprintf(buf, len, "%u%%", v / 100);
        else if (v % 10 == 0)
                snprintf(buf, len, "%u.%u%%", v / 100, (v % 100) / 10);
        else
                snprintf(buf, len, "%u.%02u%%", v / 100, v % 100);
}

void units_format_runtime(uint64_t sec, char *buf, size_t len) {
        if (sec >= 3600)
                snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", sec / 3600, sec / 60 % 60);
        else if (sec >= 60)
                snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", sec / 60, sec % 60);
        else
                snprintf(buf, len, "%" PRIu64 "s", sec);
}

void units_format_human(uint64_t v, char *buf, size_t len) {
        static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        unsigned i = 0;
        double d = (double) v;

        if (v == UNITS_MAX) {
                snprintf(buf, len, "max");
                return;
        }
        while (d >= 1024.0 && i + 1 < ELEMENTSOF(names)) {
                d /= 1024.0;
                i++;
        }
        if (i == 0 || d >= 100.0 || d == (double) (uint64_t) d)
                snprintf(buf, len, "%.0f %s", d, names[i]);
        else
                snprintf(buf, len, "%.1f %s", d, names[i]);
}
