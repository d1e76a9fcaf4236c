/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagewardenctl metrics (src/ctl/ctl-metrics.c): recorded status responses
 * (tests/golden/ctl/status-*.json) as the Prometheus text format, read back
 * by a strict parser of the format (version 0.0.4, as Prometheus and
 * node_exporter's textfile collector read it; stricter where the writer has
 * no reason to use the format's freedoms: no other comments, no empty lines,
 * no timestamps), then values compared with the JSON.  The parser is tested
 * on bad input too, so that these tests can fail.  metrics.ok is the whole
 * output for status-metrics.json (a response of this daemon, with the fields
 * an older one lacks): when it differs, the output is left in
 * ctl-metrics.out in the current directory.
 */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "common.h"
#include "ctl-metrics.h"

#define GOLDEN_DIR TOP_SRCDIR "/tests/golden/ctl/"

/* ---- a strict parser of the text format ---- */

struct sample {
        char *name;   /* as written: a histogram's with _bucket, _sum or _count */
        char *labels; /* name="value" pairs sorted by name, values unescaped, joined by ',' ("": none) */
        char *group;  /* the same without le: a histogram's series */
        char *le;     /* a bucket's le as written, else NULL */
        double value;
};

struct family {
        char *name, *type; /* type NULL until its TYPE line */
        bool help;
        size_t n_samples;
};

struct exposition {
        struct sample *samples;
        size_t n_samples, allocated_samples;
        struct family *families;
        size_t n_families, allocated_families;
        char error[512];
};

static void exposition_done(struct exposition *x) {
        for (size_t i = 0; i < x->n_samples; i++) {
                free(x->samples[i].name);
                free(x->samples[i].labels);
                free(x->samples[i].group);
                free(x->samples[i].le);
        }
        for (size_t i = 0; i < x->n_families; i++) {
                free(x->families[i].name);
                free(x->families[i].type);
        }
        free(x->samples);
        free(x->families);
        *x = (struct exposition){};
}

_printf_(3, 4) static int reject(struct exposition *x, unsigned line, const char *fmt, ...) {
        int n = snprintf(x->error, sizeof(x->error), "line %u: ", line);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(x->error + n, sizeof(x->error) - (size_t) n, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static bool name_char(char c, bool first, bool colon) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':') ||
               (!first && c >= '0' && c <= '9');
}

/* The length of the name at s: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names without ':'. */
static size_t name_length(const char *s, bool colon) {
        size_t n = 0;

        while (s[n] && name_char(s[n], n == 0, colon))
                n++;
        return n;
}

/* Written independently of ctl-metrics.c's: is s (n bytes) UTF-8 (no overlong form, no surrogate)? */
static bool valid_utf8(const char *p, size_t n) {
        const unsigned char *s = (const unsigned char *) p;

        for (size_t i = 0; i < n;) {
                unsigned c = s[i], len = c < 0x80             ? 1
                                         : (c & 0xe0) == 0xc0 ? 2
                                         : (c & 0xf0) == 0xe0 ? 3
                                         : (c & 0xf8) == 0xf0 ? 4
                                                              : 0;
                uint32_t cp;

                if (len == 0 || i + len > n)
                        return false;
                cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
                for (unsigned k = 1; k < len; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (s[i + k] & 0x3f);
                }
                if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += len;
        }
        return true;
}

/* A float as Prometheus writes them, the whole of s: [+-]digits[.digits][e[+-]digits], +Inf, -Inf, NaN. */
static bool parse_float(const char *s, double *ret) {
        const char *p = s;
        size_t digits = 0;

        if (streq(s, "+Inf") || streq(s, "-Inf") || streq(s, "NaN")) {
                *ret = streq(s, "NaN") ? NAN : s[0] == '+' ? INFINITY : -INFINITY;
                return true;
        }
        p += *p == '+' || *p == '-';
        for (; *p >= '0' && *p <= '9'; p++)
                digits++;
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9'; p++)
                        digits++;
        if (digits == 0)
                return false;
        if (*p == 'e' || *p == 'E') {
                p++;
                p += *p == '+' || *p == '-';
                if (!(*p >= '0' && *p <= '9'))
                        return false;
                while (*p >= '0' && *p <= '9')
                        p++;
        }
        if (*p)
                return false;
        *ret = strtod(s, NULL);
        return true;
}

static struct family *find_family(struct exposition *x, const char *name) {
        for (size_t i = 0; i < x->n_families; i++)
                if (streq(x->families[i].name, name))
                        return &x->families[i];
        return NULL;
}

/* "# HELP name text" or "# TYPE name type", before the family's samples, once each, the families one after
 * the other. */
static int parse_comment(struct exposition *x, unsigned no, const char *line) {
        _cleanup_free_ char *name = NULL;
        const char *rest = startswith(line, "# HELP ") ?: startswith(line, "# TYPE "), *text;
        bool help = startswith(line, "# HELP ");
        struct family *f;
        size_t n;

        if (!rest)
                return reject(x, no, "a comment that is neither # HELP nor # TYPE: %s", line);
        n = name_length(rest, true);
        if (n == 0 || rest[n] != ' ')
                return reject(x, no, "no metric name and space after # %s: %s", help ? "HELP" : "TYPE", line);
        name = strndup(rest, n);
        text = rest + n + 1;
        f = find_family(x, name);
        if (f && f != &x->families[x->n_families - 1])
                return reject(x, no, "%s: # %s again, after other families", name, help ? "HELP" : "TYPE");
        if (!f) {
                ck_assert_int_eq(GROW(x->families, x->allocated_families, x->n_families + 1), 0);
                f = &x->families[x->n_families++];
                *f = (struct family){ .name = TAKE_PTR(name) };
        }
        if (f->n_samples > 0)
                return reject(x, no, "%s: # %s after its samples", f->name, help ? "HELP" : "TYPE");
        if (help) {
                if (f->help)
                        return reject(x, no, "%s: a second # HELP", f->name);
                if (!*text)
                        return reject(x, no, "%s: an empty # HELP", f->name);
                for (const char *p = text; *p; p++)
                        if (*p == '\\' && (p[1] == '\\' || p[1] == 'n'))
                                p++;
                        else if (*p == '\\')
                                return reject(x, no, "%s: # HELP has an escape other than \\\\ and \\n", f->name);
                if (!valid_utf8(text, strlen(text)))
                        return reject(x, no, "%s: # HELP is not UTF-8", f->name);
                f->help = true;
                return 0;
        }
        if (f->type)
                return reject(x, no, "%s: a second # TYPE", f->name);
        if (!streq(text, "counter") && !streq(text, "gauge") && !streq(text, "histogram"))
                return reject(x, no, "%s: type '%s' (counter, gauge or histogram)", f->name, text);
        if (streq(text, "counter") != endswith(f->name, "_total"))
                return reject(x, no, "%s: %s", f->name,
                              streq(text, "counter") ? "a counter's name must end in _total"
                                                     : "only a counter's name ends in _total");
        f->type = strdup(text);
        return 0;
}

struct pair {
        char *name, *value;
};

static int cmp_pair(const void *a, const void *b) {
        return strcmp(((const struct pair *) a)->name, ((const struct pair *) b)->name);
}

/* {name="value",...} at *p: each value escaped (\\, \", \n only) and UTF-8, no name twice. */
static int parse_labels(struct exposition *x, unsigned no, const char **p, struct pair *pairs, size_t max,
                        size_t *ret_n) {
        const char *s = *p + 1;
        size_t n = 0;

        if (*s == '}')
                return reject(x, no, "an empty label set");
        for (;;) {
                size_t len = name_length(s, false), vlen = 0;
                char *value;

                if (len == 0)
                        return reject(x, no, "a bad label name at '%s'", s);
                if (startswith(s, "__"))
                        return reject(x, no, "the label name at '%s' is reserved (__)", s);
                if (n == max)
                        return reject(x, no, "too many labels");
                pairs[n].name = strndup(s, len);
                *ret_n = ++n;
                s += len;
                if (!startswith(s, "=\""))
                        return reject(x, no, "label %s: no =\" after its name", pairs[n - 1].name);
                s += 2;
                value = pairs[n - 1].value = calloc(strlen(s) + 1, 1);
                for (; *s != '"'; s++) {
                        if (!*s)
                                return reject(x, no, "label %s: its value does not end", pairs[n - 1].name);
                        if (*s != '\\') {
                                value[vlen++] = *s;
                                continue;
                        }
                        s++;
                        if (*s != '\\' && *s != '"' && *s != 'n')
                                return reject(x, no, "label %s: the escape \\%c", pairs[n - 1].name, *s ?: '0');
                        value[vlen++] = *s == 'n' ? '\n' : *s;
                }
                s++;
                if (!valid_utf8(value, vlen))
                        return reject(x, no, "label %s: its value is not UTF-8", pairs[n - 1].name);
                for (size_t k = 0; k + 1 < n; k++)
                        if (streq(pairs[k].name, pairs[n - 1].name))
                                return reject(x, no, "label %s twice", pairs[k].name);
                if (*s == '}')
                        break;
                if (*s != ',')
                        return reject(x, no, "',' or '}' expected after label %s", pairs[n - 1].name);
                if (*++s == '}')
                        return reject(x, no, "a ',' before '}'");
        }
        *p = s + 1;
        return 0;
}

/* pairs sorted, as name="value",... (all of them, or without le). */
static char *join_pairs(const struct pair *pairs, size_t n, bool with_le) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        bool first = true;

        ck_assert_ptr_nonnull(f);
        for (size_t i = 0; i < n; i++)
                if (with_le || !streq(pairs[i].name, "le")) {
                        fprintf(f, "%s%s=\"%s\"", first ? "" : ",", pairs[i].name, pairs[i].value);
                        first = false;
                }
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

static void pairs_done(struct pair *pairs, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(pairs[i].name);
                free(pairs[i].value);
        }
}

/* Which sample of its family name is (a histogram's: _bucket, _sum, _count); false if of none. */
static bool of_family(const struct family *f, const char *name) {
        const char *suffix = startswith(name, f->name);

        if (!suffix)
                return false;
        if (!f->type || !streq(f->type, "histogram"))
                return !*suffix;
        return streq(suffix, "_bucket") || streq(suffix, "_sum") || streq(suffix, "_count");
}

static int check_sample(struct exposition *x, unsigned no, const struct family *f, const struct sample *s) {
        bool bucket = endswith(s->name, "_bucket") && streq(f->type, "histogram");
        double le;

        if (bucket && (!s->le || !parse_float(s->le, &le) || isnan(le)))
                return reject(x, no, "%s: a bucket without a number for le", s->name);
        if (!bucket && s->le)
                return reject(x, no, "%s: an le label outside a histogram's buckets", s->name);
        if (isnan(s->value) && !streq(f->type, "gauge"))
                return reject(x, no, "%s: NaN", s->name);
        if (streq(f->type, "counter") && s->value < 0)
                return reject(x, no, "%s: a counter below 0", s->name);
        if ((bucket || endswith(s->name, "_count")) && streq(f->type, "histogram") &&
            !(s->value >= 0 && isfinite(s->value) && s->value == floor(s->value)))
                return reject(x, no, "%s: a count that is not a whole number from 0", s->name);
        for (size_t i = 0; i < x->n_samples; i++)
                if (streq(x->samples[i].name, s->name) && streq(x->samples[i].labels, s->labels))
                        return reject(x, no, "%s{%s}: a duplicate series", s->name, s->labels);
        return 0;
}

/* name{labels} value: of the family of the last # HELP and # TYPE. */
static int parse_sample(struct exposition *x, unsigned no, const char *line) {
        struct pair pairs[16] = {};
        struct sample s = {};
        struct family *f = x->n_families ? &x->families[x->n_families - 1] : NULL;
        size_t len = name_length(line, true), n = 0;
        const char *p = line + len;
        int r;

        if (len == 0)
                return reject(x, no, "not a sample: %s", line);
        s.name = strndup(line, len);
        r = *p == '{' ? parse_labels(x, no, &p, pairs, ELEMENTSOF(pairs), &n) : 0;
        if (r >= 0 && *p != ' ')
                r = reject(x, no, "%s: no space before its value", s.name);
        if (r >= 0 && strchr(p + 1, ' '))
                r = reject(x, no, "%s: a timestamp or a space after its value", s.name);
        if (r >= 0 && !parse_float(p + 1, &s.value))
                r = reject(x, no, "%s: the value '%s' is not a float", s.name, p + 1);
        if (r >= 0 && (!f || !of_family(f, s.name)))
                r = reject(x, no, "%s: not of the family whose # HELP and # TYPE came last (%s)", s.name,
                           f ? f->name : "none");
        if (r >= 0 && (!f->help || !f->type))
                r = reject(x, no, "%s: a sample before its # HELP and # TYPE", s.name);
        if (r >= 0) {
                qsort(pairs, n, sizeof(pairs[0]), cmp_pair);
                s.labels = join_pairs(pairs, n, true);
                s.group = join_pairs(pairs, n, false);
                for (size_t i = 0; i < n; i++)
                        if (streq(pairs[i].name, "le"))
                                s.le = strdup(pairs[i].value);
                r = check_sample(x, no, f, &s);
        }
        pairs_done(pairs, n);
        if (r < 0) {
                free(s.name);
                free(s.labels);
                free(s.group);
                free(s.le);
                return r;
        }
        ck_assert_int_eq(GROW(x->samples, x->allocated_samples, x->n_samples + 1), 0);
        x->samples[x->n_samples++] = s;
        f->n_samples++;
        return 0;
}

/* Each series of a histogram: buckets with le rising to +Inf, counts cumulative, +Inf's equal to _count. */
static int check_histogram(struct exposition *x, const struct family *f, const char *group) {
        double prev_le = -INFINITY, prev_count = 0, inf_count = NAN, count = NAN;
        size_t n_sum = 0, n_count = 0;

        for (size_t i = 0; i < x->n_samples; i++) {
                const struct sample *s = &x->samples[i];
                double le;

                if (!of_family(f, s->name) || !streq(s->group, group))
                        continue;
                if (endswith(s->name, "_sum"))
                        n_sum++;
                else if (endswith(s->name, "_count")) {
                        n_count++;
                        count = s->value;
                } else {
                        ck_assert(parse_float(s->le, &le));
                        if (le <= prev_le)
                                return reject(x, 0, "%s{%s}: le %s after %g", s->name, group, s->le, prev_le);
                        if (s->value < prev_count)
                                return reject(x, 0, "%s{%s}: le %s counts less than the one before", s->name, group,
                                              s->le);
                        prev_le = le;
                        prev_count = s->value;
                        if (isinf(le))
                                inf_count = s->value;
                }
        }
        if (!isinf(prev_le))
                return reject(x, 0, "%s{%s}: the buckets do not end with le=\"+Inf\"", f->name, group);
        if (n_sum != 1 || n_count != 1)
                return reject(x, 0, "%s{%s}: %zu _sum and %zu _count, want one each", f->name, group, n_sum, n_count);
        if (inf_count != count)
                return reject(x, 0, "%s{%s}: the +Inf bucket has %g, _count %g", f->name, group, inf_count, count);
        return 0;
}

/* 0, or -EINVAL with x->error saying where and why. */
static int exposition_parse(const char *text, struct exposition *x) {
        unsigned no = 0;
        int r;

        *x = (struct exposition){};
        if (!*text)
                return reject(x, 0, "no text");
        if (!endswith(text, "\n"))
                return reject(x, 0, "the last line does not end with a newline");
        for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
                _cleanup_free_ char *l = strndup(line, strcspn(line, "\n"));

                no++;
                if (!*l)
                        return reject(x, no, "an empty line");
                r = l[0] == '#' ? parse_comment(x, no, l) : parse_sample(x, no, l);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < x->n_families; i++) {
                const struct family *f = &x->families[i];

                if (!f->help || !f->type || f->n_samples == 0)
                        return reject(x, 0, "%s: %s", f->name,
                                      !f->help   ? "no # HELP"
                                      : !f->type ? "no # TYPE"
                                                 : "no samples");
                for (size_t k = 0; streq(f->type, "histogram") && k < x->n_samples; k++)
                        if (of_family(f, x->samples[k].name) && (r = check_histogram(x, f, x->samples[k].group)) < 0)
                                return r;
        }
        return 0;
}

static const struct sample *find_sample(const struct exposition *x, const char *name, const char *labels) {
        for (size_t i = 0; i < x->n_samples; i++)
                if (streq(x->samples[i].name, name) && streq(x->samples[i].labels, labels))
                        return &x->samples[i];
        return NULL;
}

static size_t count_samples(const struct exposition *x, const char *name) {
        size_t n = 0;

        for (size_t i = 0; i < x->n_samples; i++)
                n += streq(x->samples[i].name, name);
        return n;
}

#define assert_value(x, name, labels, want)                                                                           \
        do {                                                                                                          \
                const struct sample *_s = find_sample((x), (name), (labels));                                         \
                double _want = (want);                                                                                \
                ck_assert_msg(_s, "no sample %s{%s}", (name), (labels));                                              \
                ck_assert_msg(_s->value == _want, "%s{%s} is %.17g, want %.17g", (name), (labels), _s->value, _want); \
        } while (0)

/* ---- the parser itself ---- */

#define HEADER(name, type) "# HELP " name " Some help.\n# TYPE " name " " type "\n"
#define HISTOGRAM HEADER("h_seconds", "histogram")

START_TEST(test_parser_accepts) {
        static const char text[] = HEADER("a_bytes", "gauge") "a_bytes{x=\"q\\\"\\\\\\n\",dev=\"8:0\"} +Inf\n"
                "a_bytes{x=\"\"} 1.5e3\n" HEADER("b_total", "counter") "b_total 0\n" HISTOGRAM
                "h_seconds_bucket{le=\"0.5\"} 1\nh_seconds_bucket{le=\"+Inf\"} 2\nh_seconds_sum 0.75\n"
                "h_seconds_count 2\n";
        struct exposition x;

        ck_assert_msg(exposition_parse(text, &x) == 0, "%s", x.error);
        ck_assert_uint_eq(x.n_families, 3);
        assert_value(&x, "a_bytes", "dev=\"8:0\",x=\"q\"\\\n\"", INFINITY); /* sorted, unescaped */
        assert_value(&x, "a_bytes", "x=\"\"", 1500);
        assert_value(&x, "h_seconds_sum", "", 0.75);
        exposition_done(&x);
}
END_TEST

static const struct {
        const char *text, *why;
} bad[] = {
        { "", "no text" },
        { HEADER("a", "gauge") "a 1", "does not end with a newline" },
        { HEADER("a", "gauge") "\na 1\n", "an empty line" },
        { "# a comment\n", "neither # HELP nor # TYPE" },
        { "a 1\n", "not of the family" },
        { "# TYPE a gauge\na 1\n", "before its # HELP" },
        { "# HELP a x\na 1\n", "before its # HELP and # TYPE" },
        { HEADER("a", "gauge") "# HELP a again\na 1\n", "a second # HELP" },
        { HEADER("a", "gauge") "# TYPE a gauge\na 1\n", "a second # TYPE" },
        { HEADER("a", "gauge") "a 1\n# HELP a late\n", "after its samples" },
        { HEADER("a", "gauge") "a 1\n" HEADER("b", "gauge") "b 1\n" HEADER("a", "gauge"), "after other families" },
        { HEADER("a", "gauge") HEADER("b", "gauge") "a 1\n", "not of the family" },
        { HEADER("a", "gauge") "a 1\n" HEADER("b", "gauge"), "b: no samples" },
        { HEADER("a", "summary") "a 1\n", "type 'summary'" },
        { "# HELP a \n# TYPE a gauge\na 1\n", "an empty # HELP" },
        { "# HELP a tab\\t\n# TYPE a gauge\na 1\n", "an escape other than" },
        { HEADER("1a", "gauge") "1a 1\n", "no metric name" },
        { HEADER("a", "gauge") "a-b 1\n", "no space before its value" },
        { HEADER("a", "counter") "a 1\n", "must end in _total" },
        { HEADER("a_total", "gauge") "a_total 1\n", "only a counter's name ends in _total" },
        { HEADER("a_total", "counter") "a_total -1\n", "a counter below 0" },
        { HEADER("a_total", "counter") "a_total NaN\n", "NaN" },
        { HEADER("a", "gauge") "a 1,5\n", "is not a float" },
        { HEADER("a", "gauge") "a inf\n", "is not a float" },
        { HEADER("a", "gauge") "a 0x10\n", "is not a float" },
        { HEADER("a", "gauge") "a 1 1700000000000\n", "a timestamp" },
        { HEADER("a", "gauge") "a 1 \n", "a timestamp or a space" },
        { HEADER("a", "gauge") "a{} 1\n", "an empty label set" },
        { HEADER("a", "gauge") "a{x=\"1\",} 1\n", "a ',' before '}'" },
        { HEADER("a", "gauge") "a{x=\"1\" 1\n", "',' or '}' expected" },
        { HEADER("a", "gauge") "a{x=1} 1\n", "no =\"" },
        { HEADER("a", "gauge") "a{x=\"1} 1\n", "does not end" },
        { HEADER("a", "gauge") "a{x=\"tab\\t\"} 1\n", "the escape \\t" },
        { HEADER("a", "gauge") "a{x=\"\xff\"} 1\n", "not UTF-8" },
        { HEADER("a", "gauge") "a{x=\"\xc0\xaf\"} 1\n", "not UTF-8" }, /* an overlong '/' */
        { HEADER("a", "gauge") "a{x=\"1\",x=\"2\"} 1\n", "label x twice" },
        { HEADER("a", "gauge") "a{__name__=\"a\"} 1\n", "reserved" },
        { HEADER("a", "gauge") "a{a:b=\"1\"} 1\n", "label a: no =\"" },
        { HEADER("a", "gauge") "a{x=\"1\"} 1\na{x=\"1\"} 2\n", "a duplicate series" },
        { HEADER("a", "gauge") "a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n", "a duplicate series" },
        { HEADER("a", "gauge") "a{le=\"1\"} 1\n", "an le label outside" },
        { HISTOGRAM "h_seconds 1\n", "not of the family" },
        { HISTOGRAM "h_seconds_bucket 1\n", "a bucket without a number for le" },
        { HISTOGRAM "h_seconds_bucket{le=\"+Inf\"} 1\nh_seconds_sum 1\n", "0 _count" },
        { HISTOGRAM "h_seconds_bucket{le=\"1\"} 1\nh_seconds_sum 1\nh_seconds_count 1\n", "do not end with" },
        { HISTOGRAM "h_seconds_bucket{le=\"1\"} 2\nh_seconds_bucket{le=\"+Inf\"} 1\nh_seconds_sum 1\n"
                    "h_seconds_count 1\n",
          "counts less than the one before" },
        { HISTOGRAM "h_seconds_bucket{le=\"2\"} 1\nh_seconds_bucket{le=\"1\"} 1\nh_seconds_bucket{le=\"+Inf\"} 1\n"
                    "h_seconds_sum 1\nh_seconds_count 1\n",
          "le 1 after 2" },
        { HISTOGRAM "h_seconds_bucket{le=\"+Inf\"} 3\nh_seconds_sum 1\nh_seconds_count 2\n", "the +Inf bucket has 3" },
        { HISTOGRAM "h_seconds_bucket{le=\"+Inf\"} 1.5\nh_seconds_sum 1\nh_seconds_count 1.5\n", "a whole number" },
};

START_TEST(test_parser_rejects) {
        struct exposition x;

        ck_assert_msg(exposition_parse(bad[_i].text, &x) == -EINVAL, "accepted: %s", bad[_i].text);
        ck_assert_msg(strstr(x.error, bad[_i].why), "%s: the error is \"%s\", want \"%s\"", bad[_i].text, x.error,
                      bad[_i].why);
        exposition_done(&x);
}
END_TEST

/* ---- the metrics ---- */

static json_object *load_json(const char *name) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        json_object *o;

        ck_assert_int_ge(asprintf(&path, GOLDEN_DIR "%s.json", name), 0);
        ck_assert_msg(read_full_file(path, 1 << 20, &text, NULL) >= 0, "cannot read %s", path);
        o = json_tokener_parse(text);
        ck_assert_msg(json_object_is_type(o, json_type_object), "%s is not a JSON object", path);
        return o;
}

static char *metrics_text(json_object *resp) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ctl_metrics_print(f, resp), 0);
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

/* The metrics of resp, parsed (the test fails if they do not parse). */
static void parse_metrics(json_object *resp, struct exposition *x) {
        _cleanup_free_ char *text = metrics_text(resp);

        ck_assert_msg(exposition_parse(text, x) == 0, "%s in:\n%s", x->error, text);
        for (size_t i = 0; i < x->n_samples; i++)
                ck_assert_msg(startswith(x->samples[i].name, "pagewarden_"), "%s", x->samples[i].name);
        ck_assert_uint_eq(count_samples(x, "pagewarden_up"), 1);
}

/* Every response recorded, odd ones too (another daemon's, fields of other types, control characters). */
static const char *const responses[] = {
        "status-idle", "status-jobs", "status-left-policy", "status-empty", "status-odd", "status-metrics",
};

START_TEST(test_metrics_parse) {
        json_object *resp = load_json(responses[_i]);
        struct exposition x;

        parse_metrics(resp, &x);
        assert_value(&x, "pagewarden_up", "", 1);
        json_object_put(resp);
        exposition_done(&x);
}
END_TEST

static json_object *get(json_object *o, const char *key) {
        json_object *v = NULL;

        ck_assert_msg(json_object_object_get_ex(o, key, &v), "no \"%s\"", key);
        return v;
}

/* A size of the JSON as its sample has it: "max" is +Inf. */
static double limit(json_object *v) {
        if (json_object_is_type(v, json_type_string)) {
                ck_assert_str_eq(json_object_get_string(v), "max");
                return INFINITY;
        }
        ck_assert(json_object_is_type(v, json_type_int));
        return (double) json_object_get_uint64(v);
}

/* Each class's limits in force and configured are the JSON's. */
static void assert_class_limits(const struct exposition *x, json_object *resp) {
        static const char *const keys[] = { "memory_high", "memory_max", "memory_swap_max" };
        json_object *classes = get(resp, "classes");

        for (size_t i = 0; i < json_object_array_length(classes); i++) {
                json_object *c = json_object_array_get_idx(classes, i);
                _cleanup_free_ char *labels = NULL;

                ck_assert_int_ge(asprintf(&labels, "class=\"%s\"", json_object_get_string(get(c, "name"))), 0);
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        char in_force[128], configured[128];

                        snprintf(in_force, sizeof(in_force), "pagewarden_class_%s_bytes", keys[k]);
                        snprintf(configured, sizeof(configured), "pagewarden_class_%s_configured_bytes", keys[k]);
                        assert_value(x, in_force, labels, limit(get(get(c, "in_force"), keys[k])));
                        assert_value(x, configured, labels, limit(get(get(c, "configured"), keys[k])));
                }
        }
}

START_TEST(test_metrics_values) {
        json_object *resp = load_json("status-metrics");
        struct exposition x;

        parse_metrics(resp, &x);
        assert_class_limits(&x, resp);
        assert_value(&x, "pagewarden_info", "backend=\"cgroupfs\",cgroup_root=\"pagewarden.slice\",version=\"0.1.0\"",
                     1);
        assert_value(&x, "pagewarden_policy_not_in_force", "", 1); /* cache: cgroup not found */
        /* The daemon. */
        assert_value(&x, "pagewarden_daemon_start_time_seconds", "", 1714550400);
        assert_value(&x, "pagewarden_daemon_resident_memory_bytes", "", 9437184);
        assert_value(&x, "pagewarden_daemon_cpu_seconds_total", "", 12.345678);
        assert_value(&x, "pagewarden_jobs_ended_total", "", 41);
        assert_value(&x, "pagewarden_jobs_oom_killed_total", "", 2);
        assert_value(&x, "pagewarden_loop_longest_dispatch_seconds", "", 0.04125);
        assert_value(&x, "pagewarden_loop_slow_dispatches_total", "", 3);
        /* Classes. */
        assert_value(&x, "pagewarden_class_jobs", "class=\"backup\"", 2);
        assert_value(&x, "pagewarden_class_memory_high_bytes", "class=\"backup\"", 2147483648.0);
        assert_value(&x, "pagewarden_class_memory_high_configured_bytes", "class=\"backup\"", 4294967296.0);
        assert_value(&x, "pagewarden_class_memory_high_bytes", "class=\"scratch\"", INFINITY);
        assert_value(&x, "pagewarden_class_memory_current_bytes", "class=\"backup\"", 1932735283);
        assert_value(&x, "pagewarden_class_frozen", "class=\"batch\"", 1);
        assert_value(&x, "pagewarden_class_frozen", "class=\"backup\"", 0);
        assert_value(&x, "pagewarden_class_io_max_bytes_per_second",
                     "class=\"backup\",device=\"254:0\",direction=\"write\"", 20971520);
        assert_value(&x, "pagewarden_class_io_max_configured_bytes_per_second",
                     "class=\"backup\",device=\"254:0\",direction=\"write\"", 83886080);
        assert_value(&x, "pagewarden_class_io_max_iops", "class=\"backup\",device=\"254:0\",direction=\"read\"",
                     INFINITY);
        assert_value(&x, "pagewarden_class_io_max_configured_iops",
                     "class=\"backup\",device=\"254:0\",direction=\"write\"", 2000);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_class_io_max_bytes_per_second"), 2); /* batch has none */
        assert_value(&x, "pagewarden_class_governor_tightenings_total", "class=\"backup\"", 5);
        assert_value(&x, "pagewarden_class_governor_relaxations_total", "class=\"backup\"", 3);
        assert_value(&x, "pagewarden_class_governor_freezes_total", "class=\"batch\"", 2);
        /* Protected applications. */
        assert_value(&x, "pagewarden_protected_info", "cgroup=\"/system.slice/postgresql.service\",name=\"db\"", 1);
        assert_value(&x, "pagewarden_protected_in_force", "name=\"db\"", 1);
        assert_value(&x, "pagewarden_protected_in_force", "name=\"cache\"", 0);
        assert_value(&x, "pagewarden_protected_memory_current_bytes", "name=\"db\"", 1610612736);
        assert_value(&x, "pagewarden_protected_memory_min_bytes", "name=\"db\"", 1073741824);
        assert_value(&x, "pagewarden_protected_memory_min_effective_bytes", "name=\"db\"", 536870912);
        assert_value(&x, "pagewarden_protected_memory_low_bytes", "name=\"db\"", 1610612736);
        ck_assert_ptr_null(
                find_sample(&x, "pagewarden_protected_memory_low_configured_bytes", "name=\"db\"")); /* auto */
        assert_value(&x, "pagewarden_protected_memory_low_configured_bytes", "name=\"cache\"", 268435456);
        ck_assert_ptr_null(find_sample(&x, "pagewarden_protected_memory_current_bytes", "name=\"cache\"")); /* null */
        assert_value(&x, "pagewarden_protected_pressure_memory_waiting_seconds_total", "name=\"db\"", 48.213377);
        assert_value(&x, "pagewarden_protected_pressure_memory_stalled_seconds_total", "name=\"db\"", 9.120456);
        assert_value(&x, "pagewarden_protected_refaults_total", "name=\"db\"", 183204);
        assert_value(&x, "pagewarden_protected_major_faults_total", "name=\"db\"", 5127);
        /* The governor. */
        assert_value(&x, "pagewarden_governor_active", "", 1);
        assert_value(&x, "pagewarden_governor_under_pressure", "", 1);
        assert_value(&x, "pagewarden_governor_actions_total", "", 4);
        assert_value(&x, "pagewarden_governor_longest_write_seconds", "", 0.0153);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_bucket", "le=\"0.00025\"", 2);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_bucket", "le=\"0.001\"", 8);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_bucket", "le=\"10\"", 12);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_bucket", "le=\"+Inf\"", 12);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_sum", "", 0.01509);
        assert_value(&x, "pagewarden_governor_reaction_latency_seconds_count", "", 12);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_governor_reaction_latency_seconds_bucket"), 16);
        json_object_put(resp);
        exposition_done(&x);
}
END_TEST

/* An older daemon's response: what it has, nothing made up for what it lacks. */
START_TEST(test_metrics_older_daemon) {
        json_object *resp = load_json("status-jobs");
        struct exposition x;

        parse_metrics(resp, &x);
        assert_class_limits(&x, resp);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_governor_reaction_latency_seconds_count"), 0);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_daemon_resident_memory_bytes"), 0);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_class_governor_tightenings_total"), 0);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_protected_refaults_total"), 0);
        assert_value(&x, "pagewarden_governor_actions_total", "", 4);
        json_object_put(resp);
        exposition_done(&x);
}
END_TEST

/* The daemon did not answer: pagewarden_up 0 and nothing else. */
START_TEST(test_metrics_down) {
        _cleanup_free_ char *text = metrics_text(NULL);
        struct exposition x;

        ck_assert_msg(exposition_parse(text, &x) == 0, "%s", x.error);
        ck_assert_uint_eq(x.n_samples, 1);
        assert_value(&x, "pagewarden_up", "", 0);
        exposition_done(&x);
}
END_TEST

static void add_class(json_object *classes, json_object *name, int jobs) {
        json_object *c = json_object_new_object();

        json_object_object_add(c, "name", name);
        json_object_object_add(c, "jobs", json_object_new_int(jobs));
        json_object_array_add(classes, c);
}

/* Label values escaped; a name twice, empty or missing gives no second series, none at all. */
START_TEST(test_metrics_labels) {
        static const char bad_bytes[] = "bad\xff\xc0\xafx\xed\xa0\x80"; /* not UTF-8, overlong, a surrogate */
        json_object *resp = json_object_new_object(), *classes = json_object_new_array();
        struct exposition x;

        json_object_object_add(resp, "ok", json_object_new_boolean(true));
        json_object_object_add(resp, "classes", classes);
        add_class(classes, json_object_new_string("a\"b\\c\nd"), 1);
        add_class(classes, json_object_new_string("a\"b\\c\nd"), 2);
        add_class(classes, json_object_new_string(""), 3);
        add_class(classes, NULL, 4);
        add_class(classes, json_object_new_string("ctl\001x\x7f"), 5);
        add_class(classes, json_object_new_string("\xc3\xa9t\xc3\xa9 \xe2\x9c\x93"), 6);
        add_class(classes, json_object_new_string_len(bad_bytes, sizeof(bad_bytes) - 1), 7);
        add_class(classes, json_object_new_string("cut\xe2\x9c"), 8);
        parse_metrics(resp, &x);
        assert_value(&x, "pagewarden_class_jobs", "class=\"a\"b\\c\nd\"", 1);
        assert_value(&x, "pagewarden_class_jobs", "class=\"ctl?x?\"", 5);
        assert_value(&x, "pagewarden_class_jobs", "class=\"\xc3\xa9t\xc3\xa9 \xe2\x9c\x93\"", 6);
        assert_value(&x, "pagewarden_class_jobs", "class=\"bad???x???\"", 7);
        assert_value(&x, "pagewarden_class_jobs", "class=\"cut??\"", 8);
        ck_assert_uint_eq(count_samples(&x, "pagewarden_class_jobs"), 5);
        json_object_put(resp);
        exposition_done(&x);
}
END_TEST

static json_object *latency_response(const char *latency) {
        _cleanup_free_ char *text = NULL;

        ck_assert_int_ge(asprintf(&text, "{\"ok\":true,\"governor\":{\"reaction_latency\":%s}}", latency), 0);
        return json_tokener_parse(text);
}

/* Buckets that are not whole and consistent give no histogram (it would be invalid), the rest stays. */
START_TEST(test_metrics_bad_buckets) {
        static const struct {
                const char *latency;
                size_t n_buckets; /* with +Inf */
        } cases[] = {
                { "{\"count\":3,\"sum_us\":900,\"buckets\":[{\"le_us\":500,\"count\":1},{\"le_us\":1000,\"count\":3}]}",
                  3 },
                { "{\"count\":0,\"sum_us\":0,\"buckets\":[{\"le_us\":1,\"count\":0}]}", 2 },
                { "{\"count\":3,\"sum_us\":900,\"buckets\":[{\"le_us\":500,\"count\":2},{\"le_us\":1000,\"count\":1}]}",
                  0 },
                { "{\"count\":3,\"sum_us\":900,\"buckets\":[{\"le_us\":1000,\"count\":1},{\"le_us\":500,\"count\":2}]}",
                  0 },
                { "{\"count\":1,\"sum_us\":900,\"buckets\":[{\"le_us\":500,\"count\":2}]}", 0 },
                { "{\"count\":3,\"sum_us\":900,\"buckets\":[{\"le_us\":\"500\",\"count\":2}]}", 0 },
                { "{\"count\":3,\"sum_us\":900,\"buckets\":[]}", 0 },
                { "{\"count\":3,\"buckets\":[{\"le_us\":500,\"count\":2}]}", 0 },
                { "{\"count\":-3,\"sum_us\":900,\"buckets\":[{\"le_us\":500,\"count\":2}]}", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_object *resp = latency_response(cases[i].latency);
                struct exposition x;

                ck_assert_ptr_nonnull(resp);
                parse_metrics(resp, &x);
                ck_assert_msg(count_samples(&x, "pagewarden_governor_reaction_latency_seconds_bucket") ==
                                      cases[i].n_buckets,
                              "%s", cases[i].latency);
                json_object_put(resp);
                exposition_done(&x);
        }
}
END_TEST

/* The whole output for status-metrics.json, as metrics.ok has it. */
START_TEST(test_metrics_golden) {
        json_object *resp = load_json("status-metrics");
        _cleanup_free_ char *text = metrics_text(resp), *expected = NULL;

        json_object_put(resp);
        ck_assert_msg(read_full_file(GOLDEN_DIR "metrics.ok", 1 << 20, &expected, NULL) >= 0, "no metrics.ok");
        if (streq(text, expected))
                return;
        ck_assert_int_eq(write_file_atomic("ctl-metrics.out", text), 0);
        ck_abort_msg("the output differs from " GOLDEN_DIR "metrics.ok: diff it with ctl-metrics.out");
}
END_TEST

/* ---- the file for node_exporter ---- */

static char *file_text(const char *path) {
        char *text = NULL;

        ck_assert_int_ge(read_full_file(path, 1 << 20, &text, NULL), 0);
        return text;
}

START_TEST(test_metrics_write_file) {
        char *dir = tmpdir_new();
        _cleanup_free_ char *path = NULL, *missing = NULL, *text = NULL;
        char buf[64] = "";
        struct stat st;
        mode_t old_umask = umask(077);
        FILE *before;
        size_t n = 0;
        DIR *d;

        ck_assert_int_ge(asprintf(&path, "%s/pagewarden.prom", dir), 0);
        ck_assert_int_eq(ctl_metrics_write_file(path, "first\n"), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0644); /* for node_exporter's user, whatever the umask */
        text = file_text(path);
        ck_assert_str_eq(text, "first\n");
        /* Replaced, not rewritten in place: a reader of the old file reads it whole. */
        before = fopen(path, "re");
        ck_assert_ptr_nonnull(before);
        ck_assert_int_eq(ctl_metrics_write_file(path, "second\n"), 0);
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), before));
        ck_assert_str_eq(buf, "first\n");
        fclose(before);
        free(text);
        text = file_text(path);
        ck_assert_str_eq(text, "second\n");
        /* No temporary file left. */
        d = opendir(dir);
        ck_assert_ptr_nonnull(d);
        for (struct dirent *de; (de = readdir(d));)
                n += de->d_name[0] != '.';
        closedir(d);
        ck_assert_uint_eq(n, 1);
        /* A directory that is not there: an error, nothing made. */
        ck_assert_int_ge(asprintf(&missing, "%s/none/pagewarden.prom", dir), 0);
        ck_assert_int_eq(ctl_metrics_write_file(missing, "x\n"), -ENOENT);
        /* A directory on the way replaced by a link (by the account that owns its parent): refused, and
         * nothing is written where the link leads. */
        {
                _cleanup_free_ char *real = NULL, *link = NULL, *via = NULL, *there = NULL;

                ck_assert_int_ge(asprintf(&real, "%s/elsewhere", dir), 0);
                ck_assert_int_ge(asprintf(&link, "%s/textfile", dir), 0);
                ck_assert_int_ge(asprintf(&via, "%s/textfile/pagewarden.prom", dir), 0);
                ck_assert_int_ge(asprintf(&there, "%s/elsewhere/pagewarden.prom", dir), 0);
                ck_assert_int_eq(mkdir(real, 0755), 0);
                ck_assert_int_eq(symlink(real, link), 0);
                ck_assert_int_eq(ctl_metrics_write_file(via, "x\n"), -ELOOP);
                ck_assert_int_eq(access(there, F_OK), -1);
                ck_assert_int_eq(unlink(link), 0);
                ck_assert_int_eq(rmdir(real), 0);
        }
        /* A link named like the file is replaced, not written through. */
        {
                _cleanup_free_ char *target = NULL, *t = NULL;

                ck_assert_int_ge(asprintf(&target, "%s/target", dir), 0);
                ck_assert_int_eq(unlink(path), 0);
                ck_assert_int_eq(symlink(target, path), 0);
                ck_assert_int_eq(ctl_metrics_write_file(path, "third\n"), 0);
                ck_assert_int_eq(access(target, F_OK), -1);
                t = file_text(path);
                ck_assert_str_eq(t, "third\n");
        }
        umask(old_umask);
        tmpdir_cleanup(dir);
}
END_TEST

Suite *ctl_metrics_suite(void) {
        Suite *s = suite_create("ctl-metrics");
        TCase *parser = tcase_create("parser"), *tc = tcase_create("metrics");

        tcase_add_test(parser, test_parser_accepts);
        tcase_add_loop_test(parser, test_parser_rejects, 0, ELEMENTSOF(bad));
        suite_add_tcase(s, parser);
        tcase_add_loop_test(tc, test_metrics_parse, 0, ELEMENTSOF(responses));
        tcase_add_test(tc, test_metrics_values);
        tcase_add_test(tc, test_metrics_older_daemon);
        tcase_add_test(tc, test_metrics_down);
        tcase_add_test(tc, test_metrics_labels);
        tcase_add_test(tc, test_metrics_bad_buckets);
        tcase_add_test(tc, test_metrics_golden);
        tcase_add_test(tc, test_metrics_write_file);
        suite_add_tcase(s, tc);
        return s;
}
