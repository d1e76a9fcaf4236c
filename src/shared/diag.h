/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Diagnostics for configuration files: every error is kept with its file,
 * line and column and the text of the offending line, so that all errors of
 * a file can be reported, gcc-style:
 *
 *   FILE:LINE:COLUMN: error: MESSAGE
 *       offending line
 *       ^
 *
 * Out of memory: recording a diagnostic never aborts.  When memory runs out
 * the diagnostic is dropped and the list's oom flag is set; it stays set
 * until diag_list_done(), and every function that fills the list (the YAML
 * reader, the policy and settings parsers) then returns -ENOMEM, so that
 * an incomplete list is never taken for the whole story.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* A loaded configuration file. */
struct source {
        char *path;
        char *text; /* NUL-terminated */
        size_t size;
};

struct diag {
        char *path;
        unsigned line;   /* 1-based; 0: the whole file */
        unsigned column; /* 1-based, in characters */
        char *message;
        char *text; /* the offending line, or NULL */
};

struct diag_list {
        struct diag *items;
        size_t n, allocated;
        bool oom; /* a diagnostic was lost for lack of memory */
};

/* Records an error at a (1-based) position of src; line 0 for the whole file. */
void diag_add(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt, ...)
        _printf_(5, 6);
void diag_addv(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt,
               va_list ap) _printf_(5, 0);
/* An error about a path that could not be loaded at all.  Returns -EINVAL
 * (the path is invalid, and now the list says why), or -ENOMEM. */
int diag_add_path(struct diag_list *l, const char *path, const char *fmt, ...) _printf_(3, 4);

void diag_print(const struct diag_list *l, FILE *f);
/* All diagnostics as one string (for the control protocol and the journal); NULL when out of memory. */
char *diag_to_string(const struct diag_list *l);
void diag_list_done(struct diag_list *l);

void source_free(struct source *s);
