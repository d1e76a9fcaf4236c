/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>

#include "ctl-table.h"
#include "util.h"

static struct ctl_print_style style = {};

void ctl_table_set_style(const struct ctl_print_style *s) {
        style = s ? *s : (struct ctl_print_style){};
}

void table_done(struct table *t) {
        free(t->text);
        free(t->cells);
}

/* Room for a cell of len bytes (and its NUL) at the end of the text: where it goes, or NULL (t->oom). */
static char *cell_room(struct table *t, size_t len) {
        if (t->oom || GROW(t->cells, t->allocated, t->n_cells + 1) < 0 ||
            GROW(t->text, t->text_allocated, t->text_len + len + 1) < 0) {
                t->oom = true;
                return NULL;
        }
        t->cells[t->n_cells] = (struct table_cell){ .at = t->text_len };
        return t->text + t->text_len;
}

/* The cell written at cell_room()'s place, len bytes: each control character (C1 ones too, which a
 * terminal may act on) becomes a '?', as it would break the layout or drive the terminal. */
static void cell_done(struct table *t, size_t len) {
        char *s = t->text + t->text_len;
        size_t j = 0;

        for (size_t i = 0; i < len; j++) {
                size_t k = control_char_len(s + i);

                s[j] = k > 0 ? '?' : s[i];
                i += k ?: 1;
        }
        s[j] = '\0';
        t->text_len += j + 1;
        t->n_cells++;
}

static const char *cell_text(const struct table *t, size_t i) {
        return t->text + t->cells[i].at;
}

void table_add(struct table *t, const char *s) {
        size_t len;
        char *at;

        if (!s || !*s)
                s = "-";
        len = strlen(s);
        at = cell_room(t, len);
        if (!at)
                return;
        memcpy(at, s, len);
        cell_done(t, len);
}

void table_take(struct table *t, char *s) {
        if (s)
                table_add(t, s);
        else
                t->oom = true;
        free(s);
}

void table_addf(struct table *t, const char *fmt, ...) {
        va_list ap, aq;
        char *at;
        int n;

        va_start(ap, fmt);
        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        at = n >= 0 ? cell_room(t, (size_t) n) : NULL;
        if (at) {
                (void) vsnprintf(at, (size_t) n + 1, fmt, aq);
                cell_done(t, (size_t) n);
        } else
                t->oom = true;
        va_end(aq);
}

/* The last cell added is shown in color on a terminal. */
void table_color(struct table *t, const char *color) {
        if (t->n_cells > 0 && !t->oom)
                t->cells[t->n_cells - 1].color = color;
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
                size_t w = width(cell_text(t, i));

                if (w > widths[i % t->n_columns])
                        widths[i % t->n_columns] = w;
        }
        fit_widths(t, widths, width(indent));
        for (size_t i = first; i < t->n_cells; i++) {
                const char *text = cell_text(t, i), *color = style.color ? t->cells[i].color : NULL;
                size_t col = i % t->n_columns, w = width(text), shown = w;
                bool last = col + 1 == t->n_columns || i + 1 == t->n_cells;

                fprintf(f, "%s%s", col == 0 ? indent : "  ", color ?: "");
                if (w > widths[col]) { /* narrowed by fit_widths() */
                        fprintf(f, "%.*s\xe2\x80\xa6", (int) prefix_bytes(text, widths[col] - 1), text);
                        shown = widths[col];
                } else
                        fputs(text, f);
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
