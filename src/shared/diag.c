/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stdarg.h>
#include <stdint.h>

#include "diag.h"

/* A copy of line `line` (1-based) of src in *ret, NULL if there is no such line; -ENOMEM. */
static int source_line(const struct source *src, unsigned line, char **ret) {
        const char *p, *end;

        *ret = NULL;
        if (!src || !src->text || line == 0)
                return 0;
        p = src->text;
        for (unsigned i = 1; i < line; i++) {
                p = strchr(p, '\n');
                if (!p)
                        return 0;
                p++;
        }
        end = p + strcspn(p, "\r\n");
        *ret = strndup(p, (size_t) (end - p));
        return *ret ? 0 : -ENOMEM;
}

void diag_addv(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt,
               va_list ap) {
        _cleanup_free_ char *path = NULL, *message = NULL, *text = NULL;
        char *m;

        assert(l);
        assert(fmt);
        path = strdup(src && src->path ? src->path : "?");
        if (vasprintf(&m, fmt, ap) >= 0)
                message = m;
        if (!path || !message || source_line(src, line, &text) < 0 || GROW(l->items, l->allocated, l->n + 1) < 0) {
                l->oom = true;
                return;
        }
        l->items[l->n++] = (struct diag){
                .path = TAKE_PTR(path),
                .line = line,
                .column = column,
                .message = TAKE_PTR(message),
                .text = TAKE_PTR(text),
        };
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
        for (const unsigned char *p = (const unsigned char *) text; *p; p++)
                fputc((*p < 0x20 && *p != '\t') || *p == 0x7f ? '?' : *p, f);
}

static void diag_print_one(const struct diag *d, FILE *f) {
        if (d->line == 0) {
                fprintf(f, "%s: error: %s\n", d->path, d->message);
                return;
        }
        fprintf(f, "%s:%u:%u: error: %s\n", d->path, d->line, d->column, d->message);
        if (d->text) {
                fputs("    ", f);
                print_sanitized(f, d->text);
                fputc('\n', f);
                print_caret(f, d->text, d->column);
        }
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
void diag_print(const struct diag_list *l, FILE *f) {
        const struct diag **order;

        assert(l);
        assert(f);
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
                start = end;
        }
        for (size_t i = 0; i < l->n; i++)
                diag_print_one(order[i], f);
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
        diag_print(l, f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

void diag_list_done(struct diag_list *l) {
        assert(l);
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].path);
                free(l->items[i].message);
                free(l->items[i].text);
        }
        free(l->items);
        *l = (struct diag_list){};
}

void source_free(struct source *s) {
        if (!s)
                return;
        free(s->path);
        free(s->text);
        free(s);
}
