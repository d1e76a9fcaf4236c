/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagewardenctl: the control command.  `check` validates policy files without
 * a daemon; the other commands talk to pagewardend over its control socket.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config.h"
#include "policy.h"
#include "util.h"

/* Exit statuses, documented in pagewardenctl(8). */
enum {
        EXIT_OK = 0,
        EXIT_INVALID = 1, /* the policy is invalid, or the request failed */
        EXIT_USAGE = 2,
};

static const char *arg_config = NULL;

static void help(FILE *f) {
        fprintf(f,
                "Usage: pagewardenctl [OPTIONS] COMMAND [ARGS...]\n"
                "\n"
                "Control the pagewarden daemon and validate its policy files.\n"
                "\n"
                "Commands:\n"
                "  check [--print] [--ram SIZE] [--quiet] [FILE|DIR...]\n"
                "                      Validate policy files (default: the settings file and\n"
                "                      its policy directory); --print writes the effective\n"
                "                      policy, --ram resolves percentages for another RAM size\n"
                "  version             Print the version\n"
                "  help                Print this help\n"
                "\n"
                "Options:\n"
                "  -c, --config FILE   Settings file (default: %s)\n"
                "  -h, --help          Print this help\n"
                "  -V, --version       Print the version\n"
                "\n"
                "See pagewardenctl(8) and pagewarden.yaml(5).\n",
                PW_DEFAULT_CONFIG);
}

_printf_(1, 2) static int usage_error(const char *fmt, ...) {
        va_list ap;

        fputs("pagewardenctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\nTry 'pagewardenctl --help'.\n", stderr);
        return EXIT_USAGE;
}

static void print_summary(FILE *f, const char *prefix, const struct pw_policy *p, size_t n_files) {
        fprintf(f, "%s%zu %s checked: %zu job class%s, %zu protected application%s\n", prefix, n_files,
                n_files == 1 ? "source" : "sources", p->n_classes, p->n_classes == 1 ? "" : "es", p->n_protects,
                p->n_protects == 1 ? "" : "s");
}

static int cmd_check(int argc, char *argv[]) {
        static const struct option options[] = {
                { "print", no_argument, NULL, 'p' },
                { "ram", required_argument, NULL, 'r' },
                { "config", required_argument, NULL, 'c' },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(diag_list_done) struct diag_list diags = {};
        _cleanup_(policy_done) struct pw_policy policy = {};
        _cleanup_(settings_done) struct pw_settings settings = {};
        struct policy_context ctx;
        bool print = false, quiet = false, with_settings;
        size_t n_sources = 0;
        int c, r;

        r = policy_context_default(&ctx);
        if (r < 0) {
                fprintf(stderr, "pagewardenctl: cannot read the machine's RAM size: %s\n", strerror(-r));
                return EXIT_INVALID;
        }
        optind = 0;
        /* Options may follow the files, as with most commands ("--" ends them). */
        while ((c = getopt_long(argc, argv, "pr:c:qh", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        print = true;
                        break;
                case 'q':
                        quiet = true;
                        break;
                case 'c':
                        arg_config = optarg;
                        break;
                case 'r': {
                        const char *e;

                        if (units_parse_size(optarg, 0, &ctx.ram_bytes, &e) < 0 || ctx.ram_bytes == UNITS_MAX ||
                            ctx.ram_bytes == 0)
                                return usage_error("--ram: expected a size such as 64G, got '%s'", optarg);
                        break;
                }
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        return usage_error("check: bad option");
                }

        /* Without operands: the settings file and its policy directory.  With
         * operands: those policy files; the settings file only if named. */
        with_settings = optind >= argc || arg_config;
        if (with_settings) {
                r = settings_load(&ctx, arg_config ?: PW_DEFAULT_CONFIG, !arg_config, &settings, &diags);
                if (r == -ENOMEM)
                        goto oom;
                n_sources++;
        }
        if (optind >= argc) {
                r = policy_load_path(&ctx, settings.policy_dir, &policy, &diags);
                if (r == -ENOMEM)
                        goto oom;
                n_sources++;
        }
        for (int i = optind; i < argc; i++) {
                r = policy_load_path(&ctx, argv[i], &policy, &diags);
                if (r == -ENOMEM)
                        goto oom;
                n_sources++;
        }

        if (diags.n > 0) {
                diag_print(&diags, stderr);
                fprintf(stderr, "%zu error%s\n", diags.n, diags.n == 1 ? "" : "s");
                return EXIT_INVALID;
        }
        if (print) {
                print_summary(stdout, "# pagewarden effective policy; ", &policy, n_sources);
                if (with_settings) {
                        _cleanup_free_ char *buf = NULL;
                        size_t size = 0;
                        FILE *m = open_memstream(&buf, &size);

                        if (!m)
                                goto oom;
                        settings_print(&settings, m);
                        if (fclose(m) != 0)
                                goto oom;
                        printf("# settings (%s):\n", settings.path);
                        for (char *line = buf, *nl; *line; line = nl + 1) {
                                nl = strchrnul(line, '\n');
                                printf("#   %.*s\n", (int) (nl - line), line);
                                if (!*nl)
                                        break;
                        }
                }
                policy_print(&policy, stdout);
        } else if (!quiet)
                print_summary(stdout, "", &policy, n_sources);
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "pagewardenctl: cannot write output: %s\n", strerror(errno));
                return EXIT_INVALID;
        }
        return EXIT_OK;
oom:
        fprintf(stderr, "pagewardenctl: out of memory\n");
        return EXIT_INVALID;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *cmd;
        int c;

        while ((c = getopt_long(argc, argv, "+c:hV", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        arg_config = optarg;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                case 'V':
                        puts(PACKAGE_STRING);
                        return EXIT_OK;
                default:
                        return usage_error("bad option");
                }
        if (optind >= argc)
                return usage_error("missing command");
        cmd = argv[optind];
        argc -= optind;
        argv += optind;

        if (streq(cmd, "check"))
                return cmd_check(argc, argv);
        if (streq(cmd, "version")) {
                puts(PACKAGE_STRING);
                return EXIT_OK;
        }
        if (streq(cmd, "help")) {
                help(stdout);
                return EXIT_OK;
        }
        return usage_error("unknown command '%s'", cmd);
}
