/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "ctl-output.h"
#include "ctl-print.h"
#include "ctl-top.h"
#include "util.h"

static volatile sig_atomic_t quit_signal = 0, resized = 0;

static void on_quit(int sig) {
        quit_signal = sig;
}

static void on_winch(int sig) {
        resized = 1;
}

static double now_seconds(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The daemon's status, or NULL with *ret_why saying why not. */
static json_object *fetch_status(const char *socket, char *why, size_t len) {
        const struct pw_request req = { .command = PW_CMD_STATUS };
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        _cleanup_close_ int fd = -1;
        int r = ctl_connect(socket, &fd);

        if (r < 0) {
                snprintf(why, len, "%s (cannot connect to %s: %s)",
                         ctl_not_running(r) ? "pagewardend is not running" : "cannot reach pagewardend", socket,
                         strerror(-r));
                return NULL;
        }
        r = ctl_exchange(fd, &req, -1, &resp);
        if (r < 0) {
                snprintf(why, len, "%s", ctl_strerror(r));
                return NULL;
        }
        if (!resp.ok) {
                snprintf(why, len, "pagewardend: %s", ctl_response_error(&resp));
                return NULL;
        }
        return json_object_get(resp.obj);
}

/* One screen into a string: the status, or why there is none. */
static char *render(json_object *cur, json_object *prev, double seconds, const char *why) {
        char *text = NULL, stamp[32];
        size_t size = 0;
        time_t t = time(NULL);
        struct tm tm;
        FILE *m = open_memstream(&text, &size);

        if (!m)
                return NULL;
        if (!localtime_r(&t, &tm) || strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm) == 0)
                snprintf(stamp, sizeof(stamp), "-");
        if (cur)
                (void) ctl_print_top(m, cur, prev, seconds, stamp);
        else
                fprintf(m, "%s  %s; trying again every refresh\n", stamp, why);
        if (fclose(m) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

/* On a terminal: the first rows - 1 lines of text, from the top left of a cleared screen. */
static void draw(const char *text, unsigned rows) {
        unsigned lines = 0;
        const char *end = text;

        while (*end && (rows < 2 || lines < rows - 1)) {
                const char *nl = strchrnul(end, '\n');

                end = *nl ? nl + 1 : nl;
                lines++;
        }
        fputs("\033[H\033[2J", stdout);
        fwrite(text, 1, (size_t) (end - text), stdout);
        fflush(stdout);
}

int ctl_top(const struct ctl_top_options *o) {
        bool tty = isatty(STDOUT_FILENO), keys = tty && isatty(STDIN_FILENO);
        struct sigaction quit = { .sa_handler = on_quit }, winch = { .sa_handler = on_winch };
        json_object *prev = NULL;
        struct termios saved, raw;
        double prev_at = 0;
        unsigned shown = 0;

        if (!tty && o->iterations == 0) {
                fputs("pagewardenctl: top: standard output is not a terminal: give -n N for N screens\n", stderr);
                return 1;
        }
        if (o->iterations > 0)
                tty = keys = false; /* batch: plain screens one after the other */
        if (keys && tcgetattr(STDIN_FILENO, &saved) == 0) {
                raw = saved;
                raw.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
                raw.c_cc[VMIN] = 0;
                raw.c_cc[VTIME] = 0;
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &raw);
        } else
                keys = false;
        (void) sigaction(SIGINT, &quit, NULL);
        (void) sigaction(SIGTERM, &quit, NULL);
        (void) sigaction(SIGHUP, &quit, NULL);
        (void) sigaction(SIGWINCH, &winch, NULL);
        if (tty)
                fputs("\033[?1049h\033[?25l", stdout); /* the alternate screen, no cursor */

        while (!quit_signal) {
                struct ctl_print_style style;
                struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
                double at = now_seconds(), deadline;
                unsigned cols = 0, rows = 0;
                json_object *cur;
                char why[512];
                char *text;

                cur = fetch_status(o->socket, why, sizeof(why));
                ctl_output_style(o->full, o->no_legend, &style);
                if (tty) {
                        if (!ctl_output_terminal_size(&cols, &rows))
                                cols = 80, rows = 24;
                        if (!o->full)
                                style.width = cols;
                }
                ctl_print_set_style(&style);
                text = render(cur, prev, at - prev_at, why);
                if (text && tty)
                        draw(text, rows);
                else if (text)
                        printf("%s%s", shown > 0 ? "\n" : "", text);
                fflush(stdout);
                free(text);
                if (cur) {
                        json_object_put(prev);
                        prev = cur;
                        prev_at = at;
                }
                if (o->iterations > 0 && ++shown >= o->iterations)
                        break;
                /* Wait for the next refresh, a key, or a resize. */
                deadline = at + o->interval;
                resized = 0;
                while (!quit_signal && !resized) {
                        double left = deadline - now_seconds();
                        char c;

                        if (left <= 0)
                                break;
                        if (poll(keys ? &pfd : NULL, keys ? 1 : 0, (int) (left * 1000) + 1) > 0 &&
                            read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
                                quit_signal = -1;
                }
        }
        if (tty)
                fputs("\033[?25h\033[?1049l", stdout);
        fflush(stdout);
        if (keys)
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        json_object_put(prev);
        ctl_print_set_style(NULL);
        return 0;
}
