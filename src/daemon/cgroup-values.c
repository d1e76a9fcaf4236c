/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>

#include "cgroup-values.h"
#include "units.h"
#include "util.h"

void cgv_format_limit(uint64_t v, char *buf, size_t len) {
        if (v == UNITS_MAX)
                snprintf(buf, len, "max");
        else
                snprintf(buf, len, "%" PRIu64, v);
}

static int parse_u64(const char *s, const char **end, uint64_t *ret) {
        uint64_t v = 0;

        if (strncmp(s, "max", 3) == 0) {
                *ret = UNITS_MAX;
                *end = s + 3;
                return 0;
        }
        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++)
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t) (*s - '0'), &v))
                        return -ERANGE;
        *end = s;
        *ret = v;
        return 0;
}

int cgv_parse_limit(const char *s, uint64_t *ret) {
        const char *end;
        int r = parse_u64(s, &end, ret);

        if (r < 0)
                return r;
        return (*end == '\0' || streq(end, "\n")) ? 0 : -EINVAL;
}

void cgv_format_io_line(const struct cgv_io_line *l, char *buf, size_t len) {
        char r[24], w[24], ri[24], wi[24];

        cgv_format_limit(l->rbps, r, sizeof(r));
        cgv_format_limit(l->wbps, w, sizeof(w));
        cgv_format_limit(l->riops, ri, sizeof(ri));
        cgv_format_limit(l->wiops, wi, sizeof(wi));
        snprintf(buf, len, "%u:%u rbps=%s wbps=%s riops=%s wiops=%s", l->major, l->minor, r, w, ri, wi);
}

int cgv_parse_io_max(const char *text, struct cgv_io_line **ret, size_t *ret_n) {
        struct cgv_io_line *lines = NULL;
        size_t n = 0, allocated = 0;

        for (const char *p = text; *p;) {
                struct cgv_io_line l = { .rbps = UNITS_MAX, .wbps = UNITS_MAX, .riops = UNITS_MAX, .wiops = UNITS_MAX };
                const char *eol = strchrnul(p, '\n');
                int used = 0;

                if (eol == p) {
                        p++;
                        continue;
                }
                if (sscanf(p, "%u:%u%n", &l.major, &l.minor, &used) != 2)
                        goto fail;
                p += used;
                while (p < eol) {
                        static const char *const keys[] = { "rbps=", "wbps=", "riops=", "wiops=" };
                        uint64_t *fields[] = { &l.rbps, &l.wbps, &l.riops, &l.wiops };
                        size_t i;

                        p += strspn(p, " ");
                        if (p >= eol)
                                break;
                        for (i = 0; i < ELEMENTSOF(keys); i++)
                                if (startswith(p, keys[i]))
                                        break;
                        if (i == ELEMENTSOF(keys) || parse_u64(p + strlen(keys[i]), &p, fields[i]) < 0)
                                goto fail;
                }
                if (GROW(lines, allocated, n + 1) < 0)
                        goto fail;
                lines[n++] = l;
                p = *eol ? eol + 1 : eol;
        }
        *ret = lines;
        *ret_n = n;
        return 0;
fail:
        free(lines);
        return -EINVAL;
}

int cgv_io_plan(const struct pw_io_limit *want, size_t n_want, const struct cgv_io_line *have, size_t n_have,
                struct cgv_io_line **ret, size_t *ret_n) {
        struct cgv_io_line *plan = calloc(n_want + n_have + 1, sizeof(*plan));
        size_t n = 0;

        if (!plan)
                return -ENOMEM;
        for (size_t i = 0; i < n_want; i++)
                if (!want[i].absent) /* no device: nothing to write, until it appears */
                        plan[n++] = (struct cgv_io_line){
                                .major = want[i].major,
                                .minor = want[i].minor,
                                .rbps = want[i].read_bps,
                                .wbps = want[i].write_bps,
                                .riops = want[i].read_iops,
                                .wiops = want[i].write_iops,
                        };
        for (size_t j = 0; j < n_have; j++) {
                bool kept = false;

                for (size_t i = 0; i < n_want; i++)
                        if (!want[i].absent && want[i].major == have[j].major && want[i].minor == have[j].minor)
                                kept = true;
                if (!kept)
                        plan[n++] = (struct cgv_io_line){
                                .major = have[j].major,
                                .minor = have[j].minor,
                                .rbps = UNITS_MAX,
                                .wbps = UNITS_MAX,
                                .riops = UNITS_MAX,
                                .wiops = UNITS_MAX,
                        };
        }
        *ret = plan;
        *ret_n = n;
        return 0;
}

int cgv_parse_io_stat(const char *text, uint64_t *ret_read, uint64_t *ret_written) {
        uint64_t rd = 0, wr = 0;

        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n'), *end = nl ?: p + strlen(p);

                for (const char *f = strchr(p, ' '); f && f < end; f = strchr(f, ' ')) {
                        uint64_t v, *sum = NULL;
                        const char *after;

                        f++;
                        if (strncmp(f, "rbytes=", 7) == 0)
                                sum = &rd;
                        else if (strncmp(f, "wbytes=", 7) == 0)
                                sum = &wr;
                        if (!sum)
                                continue;
                        if (parse_u64(f + 7, &after, &v) < 0 || __builtin_add_overflow(*sum, v, sum))
                                return -EINVAL;
                }
                p = nl ? nl + 1 : NULL;
        }
        *ret_read = rd;
        *ret_written = wr;
        return 0;
}

int cgv_parse_keyed(const char *text, const char *key, uint64_t *ret) {
        size_t len = strlen(key);

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, len) == 0 && p[len] == ' ') {
                        const char *end;
                        char *nl;
                        int r = parse_u64(p + len + 1, &end, ret);

                        if (r < 0)
                                return r;
                        nl = strchr(end, '\n');
                        return (*end == '\0' || end == nl) ? 0 : -EINVAL;
                }
        return -ENOENT;
}

int cgv_parse_events(const char *text, bool *ret_populated, bool *ret_frozen) {
        uint64_t populated, frozen = 0;
        int r;

        r = cgv_parse_keyed(text, "populated", &populated);
        if (r < 0)
                return r;
        r = cgv_parse_keyed(text, "frozen", &frozen); /* since 5.2 */
        if (r < 0 && r != -ENOENT)
                return r;
        *ret_populated = populated != 0;
        if (ret_frozen)
                *ret_frozen = frozen != 0;
        return 0;
}

int cgv_parse_psi(const char *text, struct cgv_psi *ret) {
        bool some = false;

        *ret = (struct cgv_psi){};
        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                double a10, a60, a300;
                unsigned long long total;

                if (sscanf(p, "some avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10, &a60, &a300, &total) == 4) {
                        ret->some_avg10 = a10;
                        ret->some_avg60 = a60;
                        ret->some_total = total;
                        some = true;
                } else if (sscanf(p, "full avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10, &a60, &a300, &total) ==
                           4) {
                        ret->full_avg10 = a10;
                        ret->full_avg60 = a60;
                        ret->full_total = total;
                }
        }
        return some ? 0 : -EINVAL;
}

/* ---- protection ---------------------------------------------------------- */

static int need_cmp(const void *a, const void *b) {
        const struct cgv_protect_need *x = a, *y = b;

        return strcmp(x->path, y->path); /* a parent sorts before its children */
}

static bool is_child_of(const char *child, const char *parent) {
        const char *rest = startswith(child, parent);

        return rest && rest[0] == '/' && !strchr(rest + 1, '/');
}

static uint64_t sat_add(uint64_t a, uint64_t b) {
        uint64_t s;

        return __builtin_add_overflow(a, b, &s) ? UNITS_MAX : s;
}

int cgv_protect_plan(const struct cgv_protect_request *req, size_t n, struct cgv_protect_need **ret, size_t *ret_n) {
        struct cgv_protect_need *needs = NULL;
        size_t n_needs = 0, allocated = 0;

        /* Every requested path and every ancestor below the root, once. */
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = strdup(req[i].path);

                if (!path)
                        goto oom;
                /* path, then each ancestor: cut at the last '/' until only "/" would remain. */
                for (char *end = path + strlen(path); end > path; end = strrchr(path, '/')) {
                        size_t k;

                        *end = '\0';
                        for (k = 0; k < n_needs; k++)
                                if (streq(needs[k].path, path))
                                        break;
                        if (k == n_needs) {
                                if (GROW(needs, allocated, n_needs + 1) < 0)
                                        goto oom;
                                needs[n_needs].path = strdup(path);
                                if (!needs[n_needs].path)
                                        goto oom;
                                n_needs++;
                        }
                        if (streq(path, req[i].path)) {
                                needs[k].requested = true;
                                if (req[i].min > needs[k].min)
                                        needs[k].min = req[i].min;
                                if (req[i].low > needs[k].low)
                                        needs[k].low = req[i].low;
                        }
                }
        }
        if (n_needs)
                qsort(needs, n_needs, sizeof(*needs), need_cmp);

        /* Children sort after their parents: walk backwards to sum bottom-up. */
        for (size_t i = n_needs; i-- > 0;) {
                uint64_t sum_min = 0, sum_low = 0;

                for (size_t j = i + 1; j < n_needs; j++)
                        if (is_child_of(needs[j].path, needs[i].path)) {
                                sum_min = sat_add(sum_min, needs[j].min);
                                sum_low = sat_add(sum_low, needs[j].low);
                        }
                if (sum_min > needs[i].min)
                        needs[i].min = sum_min;
                if (sum_low > needs[i].low)
                        needs[i].low = sum_low;
        }
        *ret = needs;
        *ret_n = n_needs;
        return 0;
oom:
        cgv_protect_needs_free(needs, n_needs);
        return -ENOMEM;
}

void cgv_protect_needs_free(struct cgv_protect_need *needs, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(needs[i].path);
        free(needs);
}
