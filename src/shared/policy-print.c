/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>

#include "policy-print.h"
#include "units.h"

/* The code point of the 3-byte UTF-8 sequence at p, or 0 if p does not start one. */
static unsigned utf8_3(const unsigned char *p) {
        if ((p[0] & 0xf0) != 0xe0 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
                return 0;
        return (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
}

/* A YAML double-quoted scalar that reads back as exactly s (valid UTF-8, as the parser gives): what
 * YAML does not allow raw (control characters, C1 ones too; U+FEFF, U+FFFE, U+FFFF) and the line and
 * paragraph separators (which a quoted scalar folds) are escaped. */
static void print_quoted(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                size_t n = control_char_len((const char *) p);
                unsigned cp = utf8_3(p);

                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (n > 0) {
                        fprintf(f, "\\x%02x", p[n - 1]);
                        p += n - 1;
                } else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff) {
                        fprintf(f, "\\u%04x", cp);
                        p += 2;
                } else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* key: "value" and a newline. */
static void print_string(FILE *f, const char *indent, const char *key, const char *value) {
        fprintf(f, "%s%s: ", indent, key);
        print_quoted(f, value);
        fputc('\n', f);
}

/* A size or bandwidth in bytes, with a rounded human form as a comment. */
static void print_bytes(FILE *f, const char *indent, const char *key, uint64_t v, const char *per) {
        char buf[32];

        units_format_size(v, buf, sizeof(buf));
        if (v != UNITS_MAX && v >= 1024) {
                char human[32];

                units_format_human(v, human, sizeof(human));
                fprintf(f, "%s%s: %s  # %s%s\n", indent, key, buf, human, per);
        } else
                fprintf(f, "%s%s: %s\n", indent, key, buf);
}

static void print_size(FILE *f, const char *indent, const char *key, uint64_t v) {
        print_bytes(f, indent, key, v, "");
}

static void print_bandwidth(FILE *f, const char *indent, const char *key, uint64_t v) {
        print_bytes(f, indent, key, v, "/s");
}

static void print_protect_size(FILE *f, const char *key, const struct pw_protect_size *ps) {
        switch (ps->mode) {
        case PW_PROTECT_UNSET:
                break;
        case PW_PROTECT_AUTO:
                fprintf(f, "      %s: auto\n", key);
                break;
        case PW_PROTECT_BYTES:
                print_size(f, "      ", key, ps->bytes);
                break;
        }
}

static void print_io_limit(FILE *f, const struct pw_io_limit *io) {
        char buf[32];

        if (io->absent) {
                /* Kept as written: it resolves when the device appears. */
                fputs("      - device: ", f);
                print_quoted(f, io->device);
                fputs("  # not there now: applies once it is\n", f);
        } else {
                fprintf(f, "      - device: \"%u:%u\"  # %s, from ", io->major, io->minor, io->disk);
                print_quoted(f, io->device);
                fputc('\n', f);
        }
        print_bandwidth(f, "        ", "read_bps", io->read_bps);
        print_bandwidth(f, "        ", "write_bps", io->write_bps);
        units_format_size(io->read_iops, buf, sizeof(buf));
        fprintf(f, "        read_iops: %s\n", buf);
        units_format_size(io->write_iops, buf, sizeof(buf));
        fprintf(f, "        write_iops: %s\n", buf);
}

static void print_patterns(FILE *f, const char *key, const struct pw_patterns *p) {
        fprintf(f, "      %s:%s\n", key, p->n ? "" : " []");
        for (size_t i = 0; i < p->n; i++) {
                fputs("        - ", f);
                print_quoted(f, p->v[i].text);
                fputc('\n', f);
        }
}

/* Only for a class that has rules: no match: means none. */
static void print_match(FILE *f, const struct pw_match *m) {
        fputs("    match:\n", f);
        print_patterns(f, "units", &m->units);
        print_patterns(f, "exe", &m->exe);
        print_patterns(f, "cmdline", &m->cmdline);
        print_patterns(f, "user", &m->user);
        print_patterns(f, "under", &m->under);
}

static void print_class(FILE *f, const struct pw_job_class *c) {
        char buf[32];

        fprintf(f, "  %s:  # %s:%u%s%s\n", c->name, c->source, c->line, c->extended ? ", extended at " : "",
                strempty(c->extended));
        fputs("    memory:\n", f);
        print_size(f, "      ", "high", c->memory_high);
        print_size(f, "      ", "max", c->memory_max);
        print_size(f, "      ", "swap_max", c->memory_swap_max);
        fputs("    per_job:\n      memory:\n", f);
        print_size(f, "        ", "high", c->per_job.memory_high);
        print_size(f, "        ", "max", c->per_job.memory_max);
        print_size(f, "        ", "swap_max", c->per_job.memory_swap_max);
        fprintf(f, "    cpu:\n      weight: %" PRIu64 "\n", c->cpu_weight);
        fprintf(f, "    io:%s\n", c->n_io ? "" : " []");
        for (size_t j = 0; j < c->n_io; j++)
                print_io_limit(f, &c->io[j]);
        fputs("    under_pressure:\n", f);
        print_size(f, "      ", "memory_high_floor", c->memory_high_floor);
        print_bandwidth(f, "      ", "io_floor", c->io_floor);
        fprintf(f, "      freeze: %s\n", c->freeze ? "true" : "false");
        units_format_duration(c->freeze_max_usec, buf, sizeof(buf));
        fprintf(f, "      freeze_max: %s\n", buf);
        fprintf(f, "    users:%s\n", c->n_users ? "" : " []");
        for (size_t j = 0; j < c->n_users; j++) {
                fputs("      - ", f);
                print_quoted(f, c->users[j]);
                fputc('\n', f);
        }
        if (policy_class_matches(c))
                print_match(f, &c->match);
}

static void print_protect(FILE *f, const struct pw_protect *pr) {
        fprintf(f, "  %s:  # %s:%u\n", pr->name, pr->source, pr->line);
        if (pr->unit)
                print_string(f, "    ", "unit", pr->unit);
        else
                print_string(f, "    ", "cgroup", pr->cgroup);
        fputs("    memory:\n", f);
        print_protect_size(f, "min", &pr->min);
        print_protect_size(f, "low", &pr->low);
        fprintf(f, "      swap: %s\n", pr->swap_deny ? "deny" : "allow");
}

void policy_print(const struct pw_policy *p, FILE *f) {
        assert(p);
        assert(f);
        fprintf(f, "jobs:%s\n", p->n_classes ? "" : " {}");
        for (size_t i = 0; i < p->n_classes; i++)
                print_class(f, &p->classes[i]);
        fprintf(f, "protect:%s\n", p->n_protects ? "" : " {}");
        for (size_t i = 0; i < p->n_protects; i++)
                print_protect(f, &p->protects[i]);
}

void settings_print(const struct pw_settings *s, FILE *f) {
        char buf[32];

        assert(s);
        assert(f);
        print_string(f, "", "policy_dir", s->policy_dir);
        print_string(f, "", "socket", s->socket);
        if (s->socket_group)
                print_string(f, "", "socket_group", s->socket_group);
        print_string(f, "", "cgroup_root", s->cgroup_root);
        fprintf(f, "backend: %s\n", pw_backend_to_string(s->backend));
        fprintf(f, "restore_on_stop: %s\n", s->restore_on_stop ? "true" : "false");
        fprintf(f, "run_fallback: %s\n", s->run_fallback ? "true" : "false");
        fprintf(f, "history_jobs: %" PRIu64 "\n", s->history_jobs);
        fprintf(f, "history_days: %" PRIu64 "\n", s->history_days);
        print_string(f, "", "history_file", s->history_file);
        fprintf(f, "log_level: %s\n", pw_log_level_to_string(s->log_level));
        if (s->reserve != UNITS_MAX) {
                units_format_size(s->reserve, buf, sizeof(buf));
                fprintf(f, "reserve: %s\n", buf);
        } else
                fputs("# reserve: a tenth of the RAM, at least 64 MiB (the default)\n", f);
        fputs("pressure:\n", f);
        units_format_percent(s->pressure.threshold, buf, sizeof(buf));
        fprintf(f, "  threshold: %s\n", buf);
        units_format_duration(s->pressure.window_usec, buf, sizeof(buf));
        fprintf(f, "  window: %s\n", buf);
        units_format_percent(s->pressure.release, buf, sizeof(buf));
        fprintf(f, "  release: %s\n", buf);
        units_format_duration(s->pressure.cooldown_usec, buf, sizeof(buf));
        fprintf(f, "  cooldown: %s\n", buf);
}
