/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * pagewardenctl's tables: cells added row by row, columns aligned on print,
 * the long free-form columns cut with an ellipsis to fit the terminal
 * (UTF-8 aware: never half a character), states in colour on a terminal.
 *
 * Errors: adding a cell returns nothing; a cell that cannot be added (out
 * of memory) is remembered, and table_print() then returns -ENOMEM and
 * prints nothing.  Write errors are the stream's (ferror()).  Nothing is
 * printed about an error here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* How tables look; the defaults (all zero) suit a pipe: whole cells, headers, no colour. */
struct ctl_print_style {
        unsigned width; /* the columns a table line may take, cells cut with an ellipsis; 0: no limit */
        bool no_legend; /* no column headers */
        bool color;     /* states in colour (ANSI escapes) */
};
void ctl_table_set_style(const struct ctl_print_style *s);

#define COLOR_RED "\033[31m"
#define COLOR_GREEN "\033[32m"
#define COLOR_YELLOW "\033[33m"
#define COLOR_RESET "\033[0m"

struct table {
        size_t n_columns;
        /* The cells' text, each NUL-terminated, one after another: a table of 2,000 jobs makes a few
         * allocations, not one per cell (issue 27). */
        char *text;
        size_t text_len, text_allocated;
        struct table_cell {
                size_t at;         /* in text */
                const char *color; /* COLOR_* or NULL */
        } * cells;
        size_t n_cells, allocated;
        /* The columns that may be cut to fit the terminal (the long, free-form ones), numbered from 1,
         * in the order they are cut; 0 ends the list. */
        unsigned char cut[6];
        bool header; /* the first row names the columns (--no-legend leaves it out) */
        bool oom;    /* a cell could not be added: table_print() fails */
};

void table_done(struct table *t);
/* The column names, counted by the caller (with ELEMENTSOF: no terminator to forget). */
void table_header(struct table *t, const char *const *names, size_t n);
/* Adds s and frees it (NULL: out of memory).  Control characters become '?': they would break the layout. */
void table_take(struct table *t, char *s);
/* A copy of s, "-" for NULL or "". */
void table_add(struct table *t, const char *s);
_printf_(2, 3) void table_addf(struct table *t, const char *fmt, ...);
/* The last cell added is shown in color on a terminal. */
void table_color(struct table *t, const char *color);
/* The table, each line after indent: 0, or -ENOMEM. */
int table_print(FILE *f, const struct table *t, const char *indent);
