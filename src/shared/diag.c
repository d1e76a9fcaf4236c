/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>

#include "diag.h"

static bool utf8_continuation(char c) {
        return ((unsigned char) c & 0xC0) == 0x80;
}

/* The next character after p (at most end). */
static const char *next_char(const char *p, const char *end) {
        if (p < end)
                p++;
        while (p < end && utf8_continuation(*p))
                p++;
        return p;
}

/*
 * Where column `column` (1-based, in characters) of line `line` of src
 * starts, clamped to the line's end; NULL if there is no such line.  The
 * search goes on from the previous one when it can: a file's errors come
 * mostly in order, and neither a file of many lines nor a line of a
 * megabyte is then read again from its start for each error.
 */
static const char *locate(struct diag_list *l, const struct source *src, unsigned line, unsigned column,
                          const char **ret_line, const char **ret_line_end) {
        const char *text = src->text, *end = src->text + src->size, *p = text, *q;
        unsigned i = 1, col = 1;

        if (l->cursor_text == text && l->cursor_size == src->size && l->cursor_line <= line &&
            (l->cursor_line_offset == 0 || text[l->cursor_line_offset - 1] == '\n')) {
                p = text + l->cursor_line_offset;
                i = l->cursor_line;
        }
        for (; i < line; i++) {
                p = memchr(p, '\n', (size_t) (end - p));
                if (!p)
                        return NULL;
                p++;
        }
        *ret_line = p;
        *ret_line_end = p + strcspn(p, "\r\n"); /* stops at the final NUL too */
        q = p;
        if (l->cursor_text == text && l->cursor_size == src->size && l->cursor_line == line &&
            l->cursor_column <= column && text + l->cursor_offset <= *ret_line_end) {
                q = text + l->cursor_offset;
                col = l->cursor_column;
        }
        for (; col < column && q < *ret_line_end; col++)
                q = next_char(q, *ret_line_end);
        l->cursor_text = text;
        l->cursor_size = src->size;
        l->cursor_line = line;
        l->cursor_line_offset = (size_t) (p - text);
        l->cursor_column = col;
        l->cursor_offset = (size_t) (q - text);
        return q;
}

/*
 * At most DIAG_LINE_WINDOW characters of [line, line_end) around q, with
 * "..." where the line is cut, and in *ret_column where q is in it; NULL
 * when out of memory.
 */
static char *line_window(const char *line, const char *line_end, const char *q, unsigned *ret_column) {
        const char *start = q, *stop = q;
        unsigned before = 0, after = 0;
        char *s;

        while (stop < line_end && after < DIAG_LINE_WINDOW / 2) {
                stop = next_char(stop, line_end);
                after++;
        }
        while (start > line && before + after < DIAG_LINE_WINDOW) {
                do
                        start--;
                while (start > line && utf8_continuation(*start));
                before++;
        }
        while (stop < line_end && before + after < DIAG_LINE_WINDOW) {
                stop = next_char(stop, line_end);
                after++;
        }
        if (asprintf(&s, "%s%.*s%s", start > line ? "..." : "", (int) (stop - start), start,
                     stop < line_end ? "..." : "") < 0)
                return NULL;
        *ret_column = before + 1 + (start > line ? 3 : 0);
        return s;
}

/* The window of line `line` around column in *ret (NULL if there is no such line); -ENOMEM. */
static int source_window(struct diag_list *l, const struct source *src, unsigned line, unsigned column, char **ret,
                         unsigned *ret_column) {
        const char *start, *end, *q;

        *ret = NULL;
        *ret_column = 0;
        if (!src || !src->text || line == 0)
                return 0;
        q = locate(l, src, line, column, &start, &end);
        if (!q)
                return 0;
        *ret = line_window(start, end, q, ret_column);
        return *ret ? 0 : -ENOMEM;
}

/* The message, formatted; NULL when out of memory.  Messages quote values from the file: a long one is cut (at a
 * character's start) and ends with "...", without ever being copied whole. */
_printf_(1, 0) static char *message_format(const char *fmt, va_list ap) {
        char buf[DIAG_MAX_MESSAGE], *m;
        int len = vsnprintf(buf, sizeof(buf), fmt, ap);

        if (len < 0)
                return NULL;
        if ((size_t) len >= sizeof(buf)) {
                size_t cut = sizeof(buf) - 4;

                while (cut > 0 && utf8_continuation(buf[cut]))
                        cut--;
                memcpy(buf + cut, "...", 4);
                len = (int) cut + 3;
        }
        m = malloc((size_t) len + 1);
        return m ? memcpy(m, buf, (size_t) len + 1) : NULL;
}

/* Makes path the file being reported on (a new one starts its own count); false when out of memory. */
static bool diag_enter_file(struct diag_list *l, const char *path) {
        char *copy;

        if (l->file && streq(l->file, path))
                return true;
        copy = strdup(path);
        if (!copy)
                return false;
        free(l->file);
        l->file = copy;
        l->file_start = l->n;
        l->file_errors = 0;
        l->cursor_text = NULL;
        return true;
}

bool diag_would_record(const struct diag_list *l, const struct source *src) {
        assert(l);
        return !l->file || !streq(l->file, src && src->path ? src->path : "?") || l->file_errors < DIAG_MAX_PER_FILE;
}

_printf_(6, 0) static void diag_record(struct diag_list *l, bool warning, const struct source *src, unsigned line,
                                       unsigned column, const char *fmt, va_list ap) {
        _cleanup_free_ char *path = NULL, *message = NULL, *text = NULL;
        const char *file = src && src->path ? src->path : "?";
        unsigned text_column;

        assert(l);
        assert(fmt);
        if (warning)
                l->n_warnings++;
        else
                l->n_errors++;
        if (!diag_enter_file(l, file)) {
                l->oom = true;
                return;
        }
        if (++l->file_errors > DIAG_MAX_PER_FILE) {
                /* Counted, not recorded: nothing is formatted, copied or looked up. */
                if (l->n > l->file_start)
                        l->items[l->n - 1].omitted++;
                return;
        }
        path = strdup(file);
        message = message_format(fmt, ap);
        if (!path || !message || source_window(l, src, line, column, &text, &text_column) < 0 ||
            GROW(l->items, l->allocated, l->n + 1) < 0) {
                l->oom = true;
                return;
        }
        l->items[l->n++] = (struct diag){
                .path = TAKE_PTR(path),
                .line = line,
                .column = column,
                .message = TAKE_PTR(message),
                .text = TAKE_PTR(text),
                .text_column = text_column,
                .warning = warning,
        };
}

void diag_addv(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt,
               va_list ap) {
        diag_record(l, false, src, line, column, fmt, ap);
}

void diag_warn(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_record(l, true, src, line, column, fmt, ap);
        va_end(ap);
}

void diag_add(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(l, src, line, column, fmt, ap);
        va_end(ap);
}

int diag_add_path(struct diag_list *l, const char *path, const char *fmt, ...) {
        struct source s = { .path = (char *) path };
        va_list ap;

        assert(path);
        va_start(ap, fmt);
        diag_addv(l, &s, 0, 0, fmt, ap);
        va_end(ap);
        return l->oom ? -ENOMEM : -EINVAL;
}

int diag_warn_path(struct diag_list *l, const char *path, const char *fmt, ...) {
        struct source s = { .path = (char *) path };
        va_list ap;

        assert(path);
        va_start(ap, fmt);
        diag_record(l, true, &s, 0, 0, fmt, ap);
        va_end(ap);
        return l->oom ? -ENOMEM : 0;
}

/* Writes the caret line: the offending line's leading whitespace kept, then '^'. */
static void print_caret(FILE *f, const char *text, unsigned column) {
        const unsigned char *p = (const unsigned char *) text;
        unsigned col = 1;

        fputs("    ", f);
        while (col < column && *p) {
                /* One character may be several UTF-8 bytes; it is one column. */
                fputc(*p == '\t' ? '\t' : ' ', f);
                p++;
                while ((*p & 0xC0) == 0x80)
                        p++;
                col++;
        }
        fputs("^\n", f);
}

/* Control characters in an offending line would garble the terminal. */
static void print_sanitized(FILE *f, const char *text) {
        for (const char *p = text; *p;) {
                size_t k = *p == '\t' ? 0 : control_char_len(p);

                fputc(k > 0 ? '?' : *p, f);
                p += k ?: 1;
        }
}

static void diag_print_one(const struct diag *d, FILE *f) {
        if (d->line == 0) {
                fprintf(f, "%s: %s: %s\n", d->path, d->warning ? "warning" : "error", d->message);
                return;
        }
        fprintf(f, "%s:%u:%u: %s: %s\n", d->path, d->line, d->column, d->warning ? "warning" : "error", d->message);
        if (d->text) {
                fputs("    ", f);
                print_sanitized(f, d->text);
                fputc('\n', f);
                print_caret(f, d->text, d->text_column);
        }
}

/* After the errors of a file: how many more it had. */
static void diag_print_omitted(const struct diag *const *order, size_t n, FILE *f) {
        size_t omitted = 0;

        for (size_t i = 0; i < n; i++)
                omitted += order[i]->omitted;
        if (omitted > 0)
                fprintf(f, "%s: ... and %zu more error%s (at most %d are shown per file)\n", order[0]->path, omitted,
                        omitted == 1 ? "" : "s", DIAG_MAX_PER_FILE);
}

static int diag_position_cmp(const void *a, const void *b) {
        const struct diag *x = *(const struct diag *const *) a, *y = *(const struct diag *const *) b;

        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        if (x->column != y->column)
                return x->column < y->column ? -1 : 1;
        return x < y ? -1 : x > y; /* stable: keep the order they were found in */
}

/* Files in the order they were read; within a file, errors in line order. */
static void diag_format(const struct diag_list *l, FILE *f) {
        const struct diag **order;

        order = malloc(l->n * sizeof(*order));
        if (!order) { /* out of memory: the same errors, unsorted */
                for (size_t i = 0; i < l->n; i++)
                        diag_print_one(&l->items[i], f);
                return;
        }
        for (size_t i = 0; i < l->n; i++)
                order[i] = &l->items[i];
        for (size_t start = 0; start < l->n;) {
                size_t end = start + 1;

                while (end < l->n && streq(order[end]->path, order[start]->path))
                        end++;
                qsort(order + start, end - start, sizeof(*order), diag_position_cmp);
                for (size_t i = start; i < end; i++)
                        diag_print_one(order[i], f);
                diag_print_omitted(order + start, end - start, f);
                start = end;
        }
        free(order);
}

char *diag_to_string(const struct diag_list *l) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        assert(l);
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        diag_format(l, f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

void diag_print(const struct diag_list *l, FILE *f) {
        _cleanup_free_ char *text = NULL;

        assert(l);
        assert(f);
        text = diag_to_string(l);
        if (text)
                fwrite(text, 1, strlen(text), f);
        else
                diag_format(l, f); /* out of memory: the same text, piece by piece */
}

void diag_list_done(struct diag_list *l) {
        assert(l);
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].path);
                free(l->items[i].message);
                free(l->items[i].text);
        }
        free(l->items);
        free(l->file);
        *l = (struct diag_list){};
}

void source_free(struct source *s) {
        if (!s)
                return;
        free(s->path);
        free(s->text);
        free(s);
}
