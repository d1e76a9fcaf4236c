/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Where pagewardenctl's tables go, as systemctl does it: on a terminal, cut to
 * its width, states in colour, and through a pager when taller than the
 * terminal; to a pipe or a file, whole, plain and at once.
 *
 * Errors: negative errno (a failed write or pager); nothing is printed
 * about it here.
 */

#include <stdbool.h>
#include <stddef.h>

#include "ctl-print.h"

/* The size of the terminal standard output is, or false if it is not one. */
bool ctl_output_terminal_size(unsigned *ret_columns, unsigned *ret_rows);

/*
 * The style of tables for standard output: the width is $COLUMNS if set, else
 * the terminal's, else no limit (full: no limit); colour on a terminal unless
 * $NO_COLOR is set or $TERM is dumb.
 */
void ctl_output_style(bool full, bool no_legend, struct ctl_print_style *ret);

/*
 * Writes text to standard output; through the pager ($PAGEWARDEN_PAGER, else
 * $PAGER, else less, with $LESS defaulting to FRXMK) if standard output is a
 * terminal, the text has more lines than it, and no_pager is false.  A pager
 * that is "" or "cat", or cannot be started, means none.  Returns 0 or a
 * negative errno of the write.
 */
int ctl_output_page(const char *text, size_t size, bool no_pager);
