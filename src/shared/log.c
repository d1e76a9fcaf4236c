/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
/* The location would always be this file's. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>
#include <time.h>

#include "diag.h"
#include "log.h"

enum target {
        TARGET_UNKNOWN,
        TARGET_JOURNAL,  /* sd-journal, with fields */
        TARGET_PREFIXED, /* "<6>TEXT" on stderr: the journal's stream, but not its socket */
        TARGET_PLAIN,    /* timestamped lines on stderr */
};

static int max_level = LOG_LEVEL_INFO;
static enum target target = TARGET_UNKNOWN;

void log_set_max_level(int level) {
        max_level = level;
}

void log_reopen(void) {
        target = TARGET_UNKNOWN;
}

/* $JOURNAL_STREAM is "DEVICE:INODE" of the stream systemd connected; it is
 * inherited, so it counts only while stderr is still that stream. */
static enum target find_target(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        char end;

        if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &end) != 2 || fstat(STDERR_FILENO, &st) < 0 ||
            st.st_dev != (dev_t) dev || st.st_ino != (ino_t) ino)
                return TARGET_PLAIN;
        /* sd_journal_send() drops a message silently when journald's socket is missing. */
        return access("/run/systemd/journal/socket", F_OK) == 0 ? TARGET_JOURNAL : TARGET_PREFIXED;
}

static const char *level_name(int level) {
        static const char *const names[] = {
                [LOG_LEVEL_ERR] = "error", [LOG_LEVEL_WARNING] = "warning", [LOG_LEVEL_NOTICE] = "notice",
                [LOG_LEVEL_INFO] = "info", [LOG_LEVEL_DEBUG] = "debug",
        };

        return level >= 0 && level < (int) ELEMENTSOF(names) && names[level] ? names[level] : "error";
}

static void write_plain(int level, const char *msg) {
        char stamp[64] = "", zone[8] = "";
        struct timespec ts;
        struct tm tm;

        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && localtime_r(&ts.tv_sec, &tm)) {
                strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
                strftime(zone, sizeof(zone), "%z", &tm); /* +0100: RFC 3339 wants +01:00 */
        }
        flockfile(stderr);
        if (stamp[0] && strlen(zone) == 5)
                fprintf(stderr, "%s.%03ld%.3s:%s ", stamp, ts.tv_nsec / 1000000, zone, zone + 3);
        fprintf(stderr, "%s: %s\n", level_name(level), msg);
        funlockfile(stderr);
}

static void write_prefixed(int level, const char *msg) {
        fprintf(stderr, "<%d>%s\n", level, msg);
}

/* One message to journald with its fields; false if journald did not take it. */
static bool write_journal(int level, const char *msg, const struct log_fields *f) {
        char prio[16], id[64], job_id[48];
        _cleanup_free_ char *m = NULL, *job = NULL, *klass = NULL, *action = NULL;
        struct iovec iov[8];
        size_t n = 0;

        if (asprintf(&m, "MESSAGE=%s", msg) < 0) {
                m = NULL;
                return false;
        }
        snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
        snprintf(id, sizeof(id), "SYSLOG_IDENTIFIER=%s", program_invocation_short_name);
        iov[n++] = (struct iovec){ m, strlen(m) };
        iov[n++] = (struct iovec){ prio, strlen(prio) };
        iov[n++] = (struct iovec){ id, strlen(id) };
        if (f && f->job && asprintf(&job, "PAGEWARDEN_JOB=%s", f->job) >= 0)
                iov[n++] = (struct iovec){ job, strlen(job) };
        if (f && f->job_id) {
                snprintf(job_id, sizeof(job_id), "PAGEWARDEN_JOB_ID=%" PRIu64, f->job_id);
                iov[n++] = (struct iovec){ job_id, strlen(job_id) };
        }
        if (f && f->klass && asprintf(&klass, "PAGEWARDEN_CLASS=%s", f->klass) >= 0)
                iov[n++] = (struct iovec){ klass, strlen(klass) };
        if (f && f->action && asprintf(&action, "PAGEWARDEN_ACTION=%s", f->action) >= 0)
                iov[n++] = (struct iovec){ action, strlen(action) };
        return sd_journal_sendv(iov, (int) n) >= 0;
}

int log_fields_va(int level, int error, const struct log_fields *fields, const char *fmt, va_list ap) {
        int saved = errno;
        char buf[2048], *msg = buf;
        _cleanup_free_ char *big = NULL;
        va_list aq;
        int len;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return -error;
        if (target == TARGET_UNKNOWN)
                target = find_target();

        /* %m must print the error we were given, not whatever errno is now. */
        errno = error;
        va_copy(aq, ap);
        len = vsnprintf(buf, sizeof(buf), fmt, ap);
        if (len >= (int) sizeof(buf)) {
                errno = error;
                if (vasprintf(&big, fmt, aq) >= 0)
                        msg = big;
                else
                        big = NULL; /* the cut message is still logged */
        } else if (len < 0)
                snprintf(buf, sizeof(buf), "(cannot format the message of %s)", fmt);
        va_end(aq);

        {
                char *escaped = log_escape(msg);

                if (escaped) {
                        free(big);
                        msg = big = escaped;
                }
        }
        if (target == TARGET_PLAIN)
                write_plain(level, msg);
        else if (target == TARGET_PREFIXED || !write_journal(level, msg, fields))
                write_prefixed(level, msg);
        errno = saved;
        return -error;
}

int log_fields_internal(int level, int error, const struct log_fields *fields, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_fields_va(level, error, fields, fmt, ap);
        va_end(ap);
        return r;
}

int log_internal(int level, int error, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_fields_va(level, error, NULL, fmt, ap);
        va_end(ap);
        return r;
}

char *log_escape(char *msg) {
        size_t n = 0, len = 0;
        char *e, *o;

        for (const char *c = msg; *c; c++, len++)
                n += control_char_len(c) > 0;
        if (n == 0)
                return NULL;
        e = malloc(len + 6 * n + 1); /* a C1 control's two bytes become eight */
        if (!e) {
                for (char *c = msg; *c;) {
                        size_t k = control_char_len(c);

                        if (k == 0)
                                c++;
                        for (; k > 0; k--)
                                *c++ = '?';
                }
                return NULL;
        }
        o = e;
        for (const char *c = msg; *c;) {
                size_t k = control_char_len(c);

                if (k == 0)
                        *o++ = *c++;
                for (; k > 0; k--)
                        o += sprintf(o, "\\x%02x", (unsigned char) *c++);
        }
        *o = '\0';
        return e;
}

void log_diags(int level, const struct diag_list *diags) {
        _cleanup_free_ char *text = diag_to_string(diags);
        char *save = NULL;

        for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
                log_internal(level, 0, "%s", line);
}
