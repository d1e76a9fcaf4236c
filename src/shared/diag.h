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
 * Whatever the input, diagnostics take bounded memory and output: at most
 * DIAG_MAX_PER_FILE errors of a file are recorded (the others are counted,
 * and printed as "... and N more errors"), a message has at most
 * DIAG_MAX_MESSAGE bytes, and the offending line is kept as a window of
 * DIAG_LINE_WINDOW characters around the column, with "..." where it is cut.
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

/* Errors recorded per file: a file with thousands of errors (one mistake repeated, or a generated file)
 * costs no more than this, and the first ones are those to fix anyway. */
#define DIAG_MAX_PER_FILE 100
/* Characters of the offending line shown around the caret: one terminal line, whatever the line's length. */
#define DIAG_LINE_WINDOW 80
/* Bytes of a message (they quote values from the file), "..." included. */
#define DIAG_MAX_MESSAGE 512

struct diag {
        char *path;
        unsigned line;   /* 1-based; 0: the whole file */
        unsigned column; /* 1-based, in characters */
        char *message;
        char *text;           /* the offending line around column ("..." where cut), or NULL */
        unsigned text_column; /* where column is in text (1-based, in characters) */
        size_t omitted;       /* errors of the same file found after this one and not recorded */
        bool warning;         /* a warning: the input is valid, but something may not be what was meant */
};

struct diag_list {
        struct diag *items;
        size_t n, allocated; /* the recorded diagnostics */
        size_t n_errors;     /* every error reported, recorded or not */
        size_t n_warnings;   /* every warning reported, recorded or not */
        bool oom;            /* a diagnostic was lost for lack of memory */

        /* Private: the file being reported on, and where its last quoted line starts. */
        char *file;
        size_t file_start;  /* items[file_start...] are the file's */
        size_t file_errors; /* errors in the file, recorded or not */
        const char *cursor_text;
        size_t cursor_size, cursor_line_offset, cursor_offset;
        unsigned cursor_line, cursor_column;
};

/* Records an error at a (1-based) position of src; line 0 for the whole file. */
void diag_add(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt, ...)
        _printf_(5, 6);
void diag_addv(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt,
               va_list ap) _printf_(5, 0);
/* Records a warning: the input stays valid (n_errors does not change). */
void diag_warn(struct diag_list *l, const struct source *src, unsigned line, unsigned column, const char *fmt, ...)
        _printf_(5, 6);
/* Whether another error about src would be recorded, not only counted: when not, a caller may skip work that only
 * makes a message more helpful. */
bool diag_would_record(const struct diag_list *l, const struct source *src);
/* An error about a path that could not be loaded at all.  Returns -EINVAL
 * (the path is invalid, and now the list says why), or -ENOMEM. */
int diag_add_path(struct diag_list *l, const char *path, const char *fmt, ...) _printf_(3, 4);
/* A warning about a whole path; 0, or -ENOMEM. */
int diag_warn_path(struct diag_list *l, const char *path, const char *fmt, ...) _printf_(3, 4);

/* Prints every diagnostic, files in the order they were read, each file's errors in line order, with one
 * write of the whole text when memory allows (stderr is unbuffered). */
void diag_print(const struct diag_list *l, FILE *f);
/* All diagnostics as one string (for the control protocol and the journal); NULL when out of memory. */
char *diag_to_string(const struct diag_list *l);
void diag_list_done(struct diag_list *l);

void source_free(struct source *s);
