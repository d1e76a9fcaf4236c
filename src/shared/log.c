/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>

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
