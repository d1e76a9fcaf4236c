/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-output.h"
#include "util.h"

bool ctl_output_terminal_size(unsigned *ret_columns, unsigned *ret_rows) {
        struct winsize ws = {};

        if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
                return false;
        *ret_columns = ws.ws_col;
        *ret_rows = ws.ws_row;
        return true;
}

void ctl_output_style(bool full, bool no_legend, struct ctl_print_style *ret) {
        const char *columns = getenv("COLUMNS"), *term = getenv("TERM");
        unsigned cols = 0, rows = 0;
        bool tty = ctl_output_terminal_size(&cols, &rows);
        char *end;
        long n;

        *ret = (struct ctl_print_style){ .no_legend = no_legend };
        if (columns && (n = strtol(columns, &end, 10)) > 0 && *end == '\0' && n < 100000)
                cols = (unsigned) n;
        else if (!tty)
                cols = 0;
        ret->width = full ? 0 : cols;
        ret->color = tty && !getenv("NO_COLOR") && !(term && streq(term, "dumb"));
}

static int write_all(FILE *f, const char *text, size_t size) {
        if (size > 0 && fwrite(text, 1, size, f) != size)
                return -errno ?: -EIO;
        return fflush(f) == 0 ? 0 : -errno;
}

int ctl_output_page(const char *text, size_t size, bool no_pager) {
        const char *pager = getenv("PAGEWARDEN_PAGER") ?: getenv("PAGER") ?: "less";
        unsigned cols, rows, lines = 0;
        void (*old)(int);
        FILE *p;
        int status;

        for (size_t i = 0; i < size; i++)
                lines += text[i] == '\n';
        if (no_pager || !ctl_output_terminal_size(&cols, &rows) || rows == 0 || lines < rows || !*pager ||
            streq(pager, "cat"))
                return write_all(stdout, text, size);
        /* F: quit if it fits after all; R: colours; X: leave the text on the screen; M, K: as systemctl. */
        (void) setenv("LESS", "FRXMK", 0);
        if (fflush(stdout) != 0)
                return -errno;
        p = popen(pager, "w");
        if (!p)
                return write_all(stdout, text, size);
        old = signal(SIGPIPE, SIG_IGN); /* q before the end is no error */
        (void) write_all(p, text, size);
        status = pclose(p);
        signal(SIGPIPE, old);
        /* The shell could not find or run it: the text has not been seen. */
        if (status < 0 || (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127)))
                return write_all(stdout, text, size);
        return 0;
}
