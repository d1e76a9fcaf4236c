/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>

#include "ctl-table.h"
#include "util.h"

static struct ctl_print_style style = {};

void ctl_table_set_style(const struct ctl_print_style *s) {
        style = s ? *s : (struct ctl_print_style){};
}

void table_done(struct table *t) {
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t->colors);
}

/* Takes s (NULL: out of memory).  Control characters would break the layout. */
void table_take(struct table *t, char *s) {
        if (!s || GROW(t->cells, t->allocated, t->n_cells + 1) < 0 ||
            GROW(t->colors, t->allocated_colors, t->n_cells + 1) < 0) {
                free(s);
                t->oom = true;
                return;
        }
        for (char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        t->colors[t->n_cells] = NULL;
        t->cells[t->n_cells++] = s;
}

void table_add(struct table *t, const char *s) {
        table_take(t, strdup(s && *s ? s : "-"));
}

void table_addf(struct table *t, const char *fmt, ...) {
        char *s;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        table_take(t, s);
}

/* The last cell added is shown in color on a terminal. */
void table_color(struct table *t, const char *color) {
        if (t->n_cells > 0 && !t->oom)
                t->colors[t->n_cells - 1] = color;
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                w += ((unsigned char) *s & 0xc0) != 0x80;
        return w;
}

/* The bytes of s that fill at most w columns (never half a UTF-8 character). */
static size_t prefix_bytes(const char *s, size_t w) {
        size_t i = 0;

        for (size_t cols = 0; s[i]; i++) {
                if (((unsigned char) s[i] & 0xc0) != 0x80 && cols++ == w)
                        break;
        }
        return i;
}

/* A column is not narrowed below this. */
#define COLUMN_MIN 6

/*
 * Narrows the columns that may be cut, in their order, each as far as needed
 * (not below COLUMN_MIN), until a line of indent and columns fits style.width
 * (0: no limit); cells that no longer fit are cut with an ellipsis.  Numbers,
 * names and sizes are never cut: a table that cannot fit without cutting
 * them stays too wide.
 */
static void fit_widths(const struct table *t, size_t *widths, size_t indent) {
        size_t total = indent;

        for (size_t c = 0; c < t->n_columns; c++)
                total += widths[c] + (c > 0 ? 2 : 0);
        for (size_t i = 0; i < ELEMENTSOF(t->cut) && t->cut[i] > 0 && style.width > 0; i++) {
                size_t c = t->cut[i] - 1;

                while (c < t->n_columns && total > style.width && widths[c] > COLUMN_MIN) {
                        widths[c]--;
                        total--;
                }
        }
}

int table_print(FILE *f, const struct table *t, const char *indent) {
        _cleanup_free_ size_t *widths = NULL;
        size_t first = t->header && style.no_legend ? t->n_columns : 0;

        if (t->oom)
                return -ENOMEM;
        widths = calloc(t->n_columns, sizeof(size_t));
        if (!widths)
                return -ENOMEM;
        for (size_t i = first; i < t->n_cells; i++) {
                size_t w = width(t->cells[i]);

                if (w > widths[i % t->n_columns])
                        widths[i % t->n_columns] = w;
        }
        fit_widths(t, widths, width(indent));
        for (size_t i = first; i < t->n_cells; i++) {
                size_t col = i % t->n_columns, w = width(t->cells[i]), shown = w;
                bool last = col + 1 == t->n_columns || i + 1 == t->n_cells;
                const char *color = style.color ? t->colors[i] : NULL;

                fprintf(f, "%s%s", col == 0 ? indent : "  ", color ?: "");
                if (w > widths[col]) { /* narrowed by fit_widths() */
                        fprintf(f, "%.*s\xe2\x80\xa6", (int) prefix_bytes(t->cells[i], widths[col] - 1), t->cells[i]);
                        shown = widths[col];
                } else
                        fputs(t->cells[i], f);
                fputs(color ? COLOR_RESET : "", f);
                if (last)
                        fputc('\n', f);
                else
                        fprintf(f, "%*s", (int) (widths[col] - shown), "");
        }
        return 0;
}

/* The column names, counted by the caller (with ELEMENTSOF: no terminator to forget). */
void table_header(struct table *t, const char *const *names, size_t n) {
        t->n_columns = n;
        t->header = true;
        for (size_t i = 0; i < n; i++)
                table_add(t, names[i]);
}
