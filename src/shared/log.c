/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "log.h"

static int max_level = LOG_LEVEL_INFO;

void log_set_max_level(int level) {
        max_level = level;
}

int log_internal(int level, int error, const char *fmt, ...) {
        static int prefix = -1;
        int saved = errno;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return -error;
        if (prefix < 0)
                prefix = !isatty(STDERR_FILENO);

        /* %m must print the error we were given, not whatever errno is now. */
        errno = error;
        flockfile(stderr);
        if (prefix)
                fprintf(stderr, "<%d>", level);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        funlockfile(stderr);
        errno = saved;
        return -error;
}

void log_diags(int level, const struct diag_list *diags) {
        _cleanup_free_ char *text = diag_to_string(diags);
        char *save = NULL;

        for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
                log_internal(level, 0, "%s", line);
}
