/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagewardenctl: the control command.  `check` validates policy files without
 * a daemon; the other commands talk to pagewardend over its control socket
 * (ctl-client), print its answers (ctl-print) or run a command in a job
 * (ctl-run).
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "ctl-client.h"
#include "ctl-metrics.h"
#include "ctl-output.h"
#include "ctl-print.h"
#include "ctl-run.h"
#include "ctl-suggest.h"
#include "ctl-top.h"
#include "policy-print.h"
#include "policy.h"
#include "settings.h"
#include "util.h"

/* Exit statuses, documented in pagewardenctl(8); run has its own (ctl-run.h). */
enum {
        EXIT_OK = 0,
        EXIT_INVALID = 1, /* the policy is invalid, or the request failed */
        EXIT_USAGE = 2,
        EXIT_UNREACHABLE = 3,  /* the daemon cannot be reached */
        EXIT_NOT_IN_FORCE = 4, /* status: something the policy asks for is not in force */
};

/* Long options without a short form. */
enum {
        ARG_SOCKET = 0x100,
        ARG_JSON,
        ARG_JOB,
        ARG_NAME,
        ARG_TREE,
        ARG_FALLBACK,
        ARG_NO_FALLBACK,
        ARG_NO_PAGER,
        ARG_NO_LEGEND,
};

static const char *arg_config = NULL;
static const char *arg_socket = NULL;
static bool arg_json = false;
static bool arg_no_pager = false;
static bool arg_no_legend = false;
static bool arg_full = false;
static bool arg_quiet = false;
static bool arg_all = false;

static void help(FILE *f) {
        fprintf(f,
                "Usage: pagewardenctl [OPTIONS] COMMAND [ARGS...]\n"
                "\n"
                "Control the pagewarden daemon and validate its policy files.\n"
                "\n"
                "Commands:\n"
                "  run --job CLASS [--name NAME] [-p KEY=VALUE]... [--[no-]fallback] [-v]\n"
                "      [--] COMMAND [ARGS...]\n"
                "                      Run COMMAND in a new job of class CLASS: it starts\n"
                "                      only once it is in the job's cgroup\n"
                "  move --job CLASS [--name NAME] [--tree] PID...\n"
                "                      Move running processes (--tree: with their\n"
                "                      descendants) into a new job of class CLASS\n"
                "  status [-q]         Show job classes, jobs, protected applications and\n"
                "                      the daemon's recent actions; exit 4 if something the\n"
                "                      policy asks for is not in force (-q: print nothing)\n"
                "  list [-a]           List the jobs (--all: and the ended ones kept, with\n"
                "                      how they ended)\n"
                "  top [-d SEC] [-n N] A live view, refreshed every SEC (default 1): classes,\n"
                "                      jobs with memory and I/O rates, protected applications,\n"
                "                      the governor; q quits (-n: N screens, then exit)\n"
                "  show JOB            Show a job, by id or name; an ended one with its\n"
                "                      end-of-job report\n"
                "  stop JOB            Send SIGTERM to the job's processes (thawed first),\n"
                "                      SIGKILL to those left 10 s later\n"
                "  kill [--signal SIG] JOB\n"
                "                      Send SIG (default TERM; HUP INT QUIT KILL USR1 USR2 TERM\n"
                "                      CONT STOP TSTP) to the job's processes\n"
                "  freeze JOB          Freeze the job's processes; thaw JOB lets them go on\n"
                "  metrics [-o FILE]   Print the daemon's status as metrics in Prometheus's text\n"
                "                      format; -o, --output FILE: write them to FILE atomically\n"
                "                      (for node_exporter's textfile collector)\n"
                "  suggest [--policy]  What observation found: unplaced work that streamed while\n"
                "                      protected applications lost memory, and a policy file\n"
                "                      that places it (--policy: the file alone); root only\n"
                "  reload              Make the daemon reload its settings and policy files\n"
                "  check [--print] [--ram SIZE] [--quiet] [--strict] [FILE|DIR...]\n"
                "                      Validate policy files (default: the settings file and\n"
                "                      its policy directory); --print writes the effective\n"
                "                      policy, --ram resolves percentages for another RAM size,\n"
                "                      --strict refuses warnings too (a device not there now,\n"
                "                      a program an exe: rule names that cannot match here)\n"
                "  version             Print the versions of pagewardenctl and pagewardend\n"
                "  help                Print this help\n"
                "\n"
                "Options:\n"
                "      --socket PATH   The daemon's control socket (default:\n"
                "                      $PAGEWARDEN_SOCKET, else %s)\n"
                "      --json          Print the daemon's response as it is, a line of JSON\n"
                "                      (all commands but run, check, metrics and help)\n"
                "      --no-pager      Do not pipe long output into a pager\n"
                "      --no-legend     Do not print the column headers of tables\n"
                "  -l, --full          Do not cut table cells to the terminal's width\n"
                "  -c, --config FILE   Settings file, for check and run's run_fallback\n"
                "                      (default: %s)\n"
                "  -h, --help          Print this help\n"
                "  -V, --version       Print the version\n"
                "\n"
                "Options of run:\n"
                "      --job CLASS     The job class (required)\n"
                "      --name NAME     A name for the job\n"
                "  -p, --property KEY=VALUE\n"
                "                      The job's own MemoryHigh, MemoryMax or MemorySwapMax,\n"
                "                      at most what the class gives each job\n"
                "      --fallback      Run COMMAND outside any job if pagewardend is not running\n"
                "      --no-fallback   Do not (the default, unless the settings file says\n"
                "                      run_fallback: true)\n"
                "  -v, --verbose       Print the job and how long placing COMMAND in it took,\n"
                "                      and its end-of-job report when it ends (an OOM kill is\n"
                "                      reported without -v)\n"
                "\n"
                "Exit status: 0 success; 1 the daemon answered with an error, or check found\n"
                "invalid files (with --strict, warnings too); 2 usage error;\n"
                "3 the daemon cannot be reached; 4 status found something not in force.  run exits with COMMAND's "
                "status, or 125 if\n"
                "COMMAND was not run (including usage errors), 126 if it could not be\n"
                "executed, 127 if it was not found.\n"
                "\n"
                "See pagewardenctl(8) and pagewarden.yaml(5).\n",
                PW_DEFAULT_SOCKET, PW_DEFAULT_CONFIG);
}

_printf_(2, 0) static int usage_errorv(int status, const char *fmt, va_list ap) {
        fputs("pagewardenctl: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs("\nTry 'pagewardenctl --help'.\n", stderr);
        return status;
}

_printf_(1, 2) static int usage_error(const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = usage_errorv(EXIT_USAGE, fmt, ap);
        va_end(ap);
        return r;
}

/* run exits 125 instead of 2, which the command itself may well use. */
_printf_(1, 2) static int run_usage_error(const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = usage_errorv(CTL_RUN_NOT_RUN, fmt, ap);
        va_end(ap);
        return r;
}

static int flush_stdout(void) {
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "pagewardenctl: cannot write output: %s\n", strerror(errno));
                return EXIT_INVALID;
        }
        return EXIT_OK;
}

static void print_summary(FILE *f, const char *prefix, const struct pw_policy *p, size_t n_files) {
        fprintf(f, "%s%zu %s checked: %zu job class%s, %zu protected application%s\n", prefix, n_files,
                n_files == 1 ? "source" : "sources", p->n_classes, p->n_classes == 1 ? "" : "es", p->n_protects,
                p->n_protects == 1 ? "" : "s");
}

/* What an option parser or a check returns when the command goes on (any other value is its exit status). */
#define GO_ON (-1)

/* Prints the diagnostics and their count: EXIT_INVALID for errors (or warnings with --strict), else GO_ON. */
static int check_verdict(const struct diag_list *diags, bool strict) {
        if (diags->n_errors == 0 && diags->n_warnings == 0)
                return GO_ON;
        /* One write for the lot (stderr is unbuffered), however many errors. */
        diag_print(diags, stderr);
        if (diags->n_errors > 0 && diags->n_warnings > 0)
                fprintf(stderr, "%zu error%s, %zu warning%s\n", diags->n_errors, diags->n_errors == 1 ? "" : "s",
                        diags->n_warnings, diags->n_warnings == 1 ? "" : "s");
        else if (diags->n_errors > 0)
                fprintf(stderr, "%zu error%s\n", diags->n_errors, diags->n_errors == 1 ? "" : "s");
        else
                fprintf(stderr, "%zu warning%s%s\n", diags->n_warnings, diags->n_warnings == 1 ? "" : "s",
                        strict ? " (--strict: invalid)" : "");
        return diags->n_errors > 0 || strict ? EXIT_INVALID : GO_ON;
}

/* check --print's settings, as YAML comments above the policy: 0, or -ENOMEM. */
static int print_settings_commented(const struct pw_settings *settings) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&buf, &size);

        if (!m)
                return -ENOMEM;
        settings_print(settings, m);
        if (fclose(m) != 0)
                return -ENOMEM;
        printf("# settings (%s):\n", settings->path);
        for (char *line = buf, *nl; *line; line = nl + 1) {
                nl = strchrnul(line, '\n');
                printf("#   %.*s\n", (int) (nl - line), line);
                if (!*nl)
                        break;
        }
        return 0;
}

struct check_args {
        struct policy_context ctx;
        bool print, quiet, strict;
        int first_file; /* argv's first operand (argc: none) */
};

/* check's options (they may follow the files, as with most commands; "--" ends them): GO_ON, or an exit status. */
static int check_parse_args(int argc, char *argv[], struct check_args *a) {
        /* clang-format off */
        static const struct option options[] = {
                { "print", no_argument, NULL, 'p' },
                { "ram", required_argument, NULL, 'r' },
                { "config", required_argument, NULL, 'c' },
                { "quiet", no_argument, NULL, 'q' },
                { "strict", no_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        /* clang-format on */
        int c, r;

        *a = (struct check_args){};
        r = policy_context_default(&a->ctx);
        if (r < 0) {
                fprintf(stderr, "pagewardenctl: cannot read the machine's RAM size: %s\n", strerror(-r));
                return EXIT_INVALID;
        }
        optind = 0;
        while ((c = getopt_long(argc, argv, "pr:c:qh", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        a->print = true;
                        break;
                case 'q':
                        a->quiet = true;
                        break;
                case 's':
                        a->strict = true;
                        break;
                case 'c':
                        arg_config = optarg;
                        break;
                case 'r': {
                        const char *e;

                        if (units_parse_size(optarg, 0, &a->ctx.ram_bytes, &e) < 0 || a->ctx.ram_bytes == UNITS_MAX ||
                            a->ctx.ram_bytes == 0)
                                return usage_error("--ram: expected a size such as 64G, got '%s'", optarg);
                        break;
                }
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        return usage_error("check: bad option");
                }
        a->first_file = optind;
        /* A file named here is being validated, often a configuration tool's temporary copy owned by whoever
         * connected: an owner the daemon would refuse is a warning (the ownership rule protects what the
         * daemon loads, which the files it loads are checked for without operands).  With operands, that
         * includes a --config file. */
        a->ctx.owner_warns = optind < argc;
        /* Files are validated for this machine, whichever way they are named (a configuration tool validates
         * on the host it installs to): an exe: program that cannot match here is a warning. */
        a->ctx.check_programs = true;
        return GO_ON;
}

/*
 * Without operands: the settings file and its policy directory.  With operands: those policy files; the
 * settings file only if named.  *ret_n_sources: how many were read.  -ENOMEM, else 0 (errors are in diags).
 */
static int check_load(const struct check_args *a, int argc, char *argv[], struct pw_settings *settings,
                      struct pw_policy *policy, struct diag_list *diags, size_t *ret_n_sources) {
        size_t n = 0;
        int r;

        if (a->first_file >= argc || arg_config) {
                r = settings_load(&a->ctx, arg_config ?: PW_DEFAULT_CONFIG, !arg_config, settings, diags);
                if (r == -ENOMEM)
                        return r;
                n++;
        }
        if (a->first_file >= argc) {
                r = policy_load_path(&a->ctx, settings->policy_dir, policy, diags);
                if (r == -ENOMEM)
                        return r;
                n++;
        }
        for (int i = a->first_file; i < argc; i++) {
                r = policy_load_path(&a->ctx, argv[i], policy, diags);
                if (r == -ENOMEM)
                        return r;
                n++;
        }
        *ret_n_sources = n;
        return 0;
}

static int cmd_check(int argc, char *argv[]) {
        _cleanup_(diag_list_done) struct diag_list diags = {};
        _cleanup_(policy_done) struct pw_policy policy = {};
        _cleanup_(settings_done) struct pw_settings settings = {};
        struct check_args a;
        bool with_settings;
        size_t n_sources = 0;
        int r;

        r = check_parse_args(argc, argv, &a);
        if (r != GO_ON)
                return r;
        with_settings = a.first_file >= argc || arg_config;
        if (check_load(&a, argc, argv, &settings, &policy, &diags, &n_sources) < 0)
                goto oom;
        r = check_verdict(&diags, a.strict);
        if (r != GO_ON)
                return r;
        if (a.print) {
                print_summary(stdout, "# pagewarden effective policy; ", &policy, n_sources);
                if (with_settings && print_settings_commented(&settings) < 0)
                        goto oom;
                policy_print(&policy, stdout);
        } else if (!a.quiet)
                print_summary(stdout, "", &policy, n_sources);
        return flush_stdout();
oom:
        fprintf(stderr, "pagewardenctl: out of memory\n");
        return EXIT_INVALID;
}

/* ---- commands that talk to pagewardend ---- */

/* Sends req; on failure says why and returns the exit status, else EXIT_OK with *ret filled in. */
static int call(const struct pw_request *req, struct ctl_response *ret) {
        const char *socket = ctl_socket_path(arg_socket);
        _cleanup_close_ int fd = -1;
        int r;

        r = ctl_connect(socket, &fd);
        if (r < 0) {
                if (ctl_not_running(r))
                        fprintf(stderr, "pagewardenctl: pagewardend is not running (cannot connect to %s: %s)\n",
                                socket, strerror(-r));
                else
                        fprintf(stderr, "pagewardenctl: cannot connect to pagewardend at %s: %s\n", socket,
                                strerror(-r));
                return EXIT_UNREACHABLE;
        }
        r = ctl_exchange_retry(socket, &fd, req, -1, ret);
        if (r < 0) {
                fprintf(stderr, "pagewardenctl: %s\n", ctl_strerror(r));
                return r == -ETIMEDOUT ? EXIT_UNREACHABLE : EXIT_INVALID;
        }
        return EXIT_OK;
}

/* Prints resp with print, to the terminal's width and through a pager if it is long. */
static int print_response(int (*print)(FILE *f, json_object *resp), json_object *resp) {
        _cleanup_free_ char *text = NULL;
        struct ctl_print_style style;
        size_t size = 0;
        FILE *m;
        int r;

        ctl_output_style(arg_full, arg_no_legend, &style);
        ctl_print_set_style(&style);
        m = open_memstream(&text, &size);
        if (!m)
                goto oom;
        r = print(m, resp);
        if (fclose(m) != 0 || r < 0)
                goto oom;
        r = ctl_output_page(text, size, arg_no_pager);
        if (r < 0) {
                fprintf(stderr, "pagewardenctl: cannot write output: %s\n", strerror(-r));
                return EXIT_INVALID;
        }
        return EXIT_OK;
oom:
        fprintf(stderr, "pagewardenctl: out of memory\n");
        return EXIT_INVALID;
}

/* Sends req and prints the response: as it is with --json, else with print; *ret keeps it if not NULL. */
static int request_keep(const struct pw_request *req, int (*print)(FILE *f, json_object *resp),
                        struct ctl_response *ret) {
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        int r;

        r = call(req, &resp);
        if (r != EXIT_OK)
                return r;
        if (arg_json)
                puts(resp.line);
        if (!resp.ok) {
                (void) flush_stdout();
                ctl_print_failure(stderr, &resp, NULL);
                return EXIT_INVALID;
        }
        if (!arg_json && print && (r = print_response(print, resp.obj)) != EXIT_OK)
                return r;
        r = flush_stdout();
        if (ret) {
                *ret = resp;
                resp = (struct ctl_response){};
        }
        return r;
}

static int request(const struct pw_request *req, int (*print)(FILE *f, json_object *resp)) {
        return request_keep(req, print, NULL);
}

/* The options every command that prints tables takes, before or after the command; true if c was one. */
static bool display_option(int c) {
        switch (c) {
        case ARG_JSON:
                arg_json = true;
                return true;
        case ARG_NO_PAGER:
                arg_no_pager = true;
                return true;
        case ARG_NO_LEGEND:
                arg_no_legend = true;
                return true;
        case 'l':
                arg_full = true;
                return true;
        default:
                return false;
        }
}

#define DISPLAY_OPTIONS                                                                           \
        { "json", no_argument, NULL, ARG_JSON }, { "no-pager", no_argument, NULL, ARG_NO_PAGER }, \
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND }, {                              \
                "full", no_argument, NULL, 'l'                                                    \
        }

/*
 * Parses the options of a command that takes no other option than --json and
 * checks its number of operands.  Returns GO_ON, or an exit status.
 */
static int parse_json_option(int argc, char *argv[], int n_operands, const char *operands) {
        static const struct option options[] = {
                DISPLAY_OPTIONS,
                { "quiet", no_argument, NULL, 'q' },
                { "all", no_argument, NULL, 'a' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "ahlq", options, NULL)) >= 0)
                switch (c) {
                case 'a':
                        if (!streq(argv[0], "list"))
                                return usage_error("%s: bad option '--all' (only list takes it)", argv[0]);
                        arg_all = true;
                        break;
                case 'q':
                        if (!streq(argv[0], "status"))
                                return usage_error("%s: bad option '-q' (only status takes it)", argv[0]);
                        arg_quiet = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        if (!display_option(c))
                                return usage_error("%s: bad option", argv[0]);
                }
        if (argc - optind < n_operands)
                return usage_error("%s: missing %s", argv[0], operands);
        if (argc - optind > n_operands)
                return usage_error("%s: unexpected argument '%s'", argv[0], argv[optind + n_operands]);
        return GO_ON;
}

/* A job class or job name, as the daemon accepts it: GO_ON if valid, else an exit status. */
static int check_name(const char *cmd, const char *what, const char *name, int (*error)(const char *fmt, ...)) {
        const char *why = policy_name_problem(name);

        if (why)
                return error("%s: invalid %s '%s': %s", cmd, what, name, why);
        return GO_ON;
}

/* The status, and exit 4 when something the policy asks for is not in force (each said on stderr, unless -q). */
static int cmd_status(int argc, char *argv[]) {
        const struct pw_request req = { .command = PW_CMD_STATUS };
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        int r = parse_json_option(argc, argv, 0, NULL);

        if (r != GO_ON)
                return r;
        if (arg_quiet) {
                r = call(&req, &resp);
                if (r != EXIT_OK)
                        return r;
                if (!resp.ok)
                        return EXIT_INVALID;
        } else if ((r = request_keep(&req, ctl_print_status, &resp)) != EXIT_OK)
                return r;
        return ctl_status_problems(arg_quiet ? NULL : stderr, resp.obj) > 0 ? EXIT_NOT_IN_FORCE : EXIT_OK;
}

/*
 * The status as metrics, on standard output or atomically into a file (-o).  When the daemon does not
 * answer, the metrics are pagewarden_up 0 alone, and the exit status is status's.
 */
static int cmd_metrics(int argc, char *argv[]) {
        static const struct option options[] = {
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const struct pw_request req = { .command = PW_CMD_STATUS };
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        _cleanup_free_ char *text = NULL;
        const char *output = NULL;
        size_t size = 0;
        FILE *m;
        int c, r, w;

        optind = 0;
        while ((c = getopt_long(argc, argv, "ho:", options, NULL)) >= 0)
                switch (c) {
                case 'o':
                        if (!*optarg)
                                return usage_error("metrics: --output: empty path");
                        output = optarg;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        return usage_error("metrics: bad option");
                }
        if (optind < argc)
                return usage_error("metrics: unexpected argument '%s'", argv[optind]);
        if (arg_json)
                return usage_error("metrics: --json does not apply (the metrics are text)");

        r = call(&req, &resp);
        if (r == EXIT_OK && !resp.ok) {
                ctl_print_failure(stderr, &resp, NULL);
                r = EXIT_INVALID;
        }
        m = open_memstream(&text, &size);
        if (!m)
                goto oom;
        w = ctl_metrics_print(m, r == EXIT_OK ? resp.obj : NULL);
        if (fclose(m) != 0 || w < 0)
                goto oom;
        if (!output) {
                fputs(text, stdout);
                w = flush_stdout();
                return w != EXIT_OK ? w : r;
        }
        w = ctl_metrics_write_file(output, text);
        if (w < 0) {
                fprintf(stderr, "pagewardenctl: cannot write %s: %s\n", output, strerror(-w));
                return EXIT_INVALID;
        }
        return r;
oom:
        fprintf(stderr, "pagewardenctl: out of memory\n");
        return EXIT_INVALID;
}

static int cmd_list(int argc, char *argv[]) {
        struct pw_request req = { .command = PW_CMD_LIST };
        int r = parse_json_option(argc, argv, 0, NULL);

        req.all = arg_all;
        return r != GO_ON ? r : request(&req, ctl_print_list);
}

static int print_suggest(FILE *f, json_object *resp) {
        return ctl_print_suggest(f, resp, false);
}

static int print_suggest_policy(FILE *f, json_object *resp) {
        return ctl_print_suggest(f, resp, true);
}

/* What observation found, and a policy file that places it (--policy: the file alone, for a redirection). */
static int cmd_suggest(int argc, char *argv[]) {
        static const struct option options[] = {
                DISPLAY_OPTIONS,
                { "policy", no_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const struct pw_request req = { .command = PW_CMD_SUGGEST };
        bool policy = false;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hl", options, NULL)) >= 0)
                switch (c) {
                case 'P':
                        policy = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        if (!display_option(c))
                                return usage_error("suggest: bad option");
                }
        if (optind < argc)
                return usage_error("suggest: unexpected argument '%s'", argv[optind]);
        if (policy && arg_json)
                return usage_error("suggest: --policy and --json exclude each other");
        if (policy)
                arg_no_pager = true; /* a file, not a page */
        return request(&req, policy ? print_suggest_policy : print_suggest);
}

static int cmd_reload(int argc, char *argv[]) {
        const struct pw_request req = { .command = PW_CMD_RELOAD };
        int r = parse_json_option(argc, argv, 0, NULL);

        return r != GO_ON ? r : request(&req, ctl_print_reloaded);
}

static int cmd_top(int argc, char *argv[]) {
        static const struct option options[] = {
                DISPLAY_OPTIONS,
                { "delay", required_argument, NULL, 'd' },
                { "iterations", required_argument, NULL, 'n' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct ctl_top_options o = { .socket = ctl_socket_path(arg_socket), .interval = 1 };
        uint64_t n;
        const char *e;
        char *end;
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hld:n:", options, NULL)) >= 0)
                switch (c) {
                case 'd':
                        o.interval = strtod(optarg, &end);
                        if (end == optarg || *end || !(o.interval >= 0.1 && o.interval <= 3600))
                                return usage_error("top: --delay: want seconds from 0.1 to 3600, got '%s'", optarg);
                        break;
                case 'n':
                        if (units_parse_uint(optarg, 1, 1000000, &n, &e) < 0)
                                return usage_error("top: --iterations: %s: '%s'", e, optarg);
                        o.iterations = (unsigned) n;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        if (c == ARG_JSON || !display_option(c))
                                return usage_error("top: bad option");
                }
        if (optind < argc)
                return usage_error("top: unexpected argument '%s'", argv[optind]);
        o.full = arg_full;
        o.no_legend = arg_no_legend;
        return ctl_top(&o) == 0 ? EXIT_OK : EXIT_USAGE;
}

/* show, stop, freeze, thaw JOB */
static int cmd_job_verb(int argc, char *argv[]) {
        struct pw_request req = {};
        int r = parse_json_option(argc, argv, 1, "JOB (an id or a name)");

        if (r != GO_ON)
                return r;
        r = check_name(argv[0], "job", argv[optind], usage_error);
        if (r != GO_ON)
                return r;
        req.command = (enum pw_command) pw_command_from_string(argv[0]);
        snprintf(req.job, sizeof(req.job), "%s", argv[optind]);
        return request(&req, req.command == PW_CMD_SHOW   ? ctl_print_show
                             : req.command == PW_CMD_STOP ? ctl_print_signalled
                                                          : ctl_print_job_state);
}

/* TERM, SIGTERM, 15: one of PW_SIGNALS; -1 if none of these. */
static int parse_signal(const char *s) {
        const char *e;
        uint64_t n;

        if (units_parse_uint(s, 1, 64, &n, &e) >= 0)
                return pw_signal_allowed((int) n) ? (int) n : -1;
        if (startswith(s, "SIG"))
                s += 3;
        for (int sig = 1; sig < 65; sig++)
                if (sigabbrev_np(sig) && streq(sigabbrev_np(sig), s))
                        return pw_signal_allowed(sig) ? sig : -1;
        return -1;
}

static int cmd_kill(int argc, char *argv[]) {
        static const struct option options[] = {
                DISPLAY_OPTIONS,
                { "signal", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct pw_request req = { .command = PW_CMD_KILL, .signal = SIGTERM };
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hls:", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        req.signal = parse_signal(optarg);
                        if (req.signal < 0)
                                return usage_error("kill: '%s' is not a signal kill sends (%s, by name or number)",
                                                   optarg, PW_SIGNALS);
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        if (!display_option(c))
                                return usage_error("kill: bad option");
                }
        if (argc - optind != 1)
                return usage_error(argc - optind < 1 ? "kill: missing JOB (an id or a name)"
                                                     : "kill: one JOB at a time");
        r = check_name("kill", "job", argv[optind], usage_error);
        if (r != GO_ON)
                return r;
        snprintf(req.job, sizeof(req.job), "%s", argv[optind]);
        return request(&req, ctl_print_signalled);
}

/* pagewardenctl's version, then the daemon's; the daemon need not run (except with --json). */
static int cmd_version(int argc, char *argv[]) {
        const struct pw_request req = { .command = PW_CMD_VERSION };
        _cleanup_(ctl_response_done) struct ctl_response resp = {};
        const char *socket = ctl_socket_path(arg_socket);
        _cleanup_close_ int fd = -1;
        json_object *v;
        int r = parse_json_option(argc, argv, 0, NULL);

        if (r != GO_ON)
                return r;
        if (arg_json)
                return request(&req, NULL);

        printf("pagewardenctl %s\n", PACKAGE_VERSION);
        r = ctl_connect(socket, &fd);
        if (ctl_not_running(r))
                puts("pagewardend: not running");
        else if (r < 0)
                printf("pagewardend: unknown (cannot connect to %s: %s)\n", socket, strerror(-r));
        else if ((r = ctl_exchange(fd, &req, -1, &resp)) < 0)
                printf("pagewardend: unknown (%s)\n", ctl_strerror(r));
        else if (!resp.ok)
                printf("pagewardend: unknown (%s)\n", ctl_response_error(&resp));
        else if (json_object_object_get_ex(resp.obj, "version", &v) && json_object_is_type(v, json_type_string))
                printf("pagewardend %s\n", json_object_get_string(v));
        else
                puts("pagewardend: unknown (its answer has no version)");
        return flush_stdout();
}

static int cmd_move(int argc, char *argv[]) {
        /* clang-format off */
        static const struct option options[] = {
                { "job", required_argument, NULL, ARG_JOB },
                { "name", required_argument, NULL, ARG_NAME },
                { "tree", no_argument, NULL, ARG_TREE },
                DISPLAY_OPTIONS,
                { "help", no_argument, NULL, 'h' },
                {},
        };
        /* clang-format on */
        struct pw_request req = { .command = PW_CMD_MOVE };
        const char *class = NULL, *name = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hl", options, NULL)) >= 0)
                switch (c) {
                case ARG_JOB:
                        class = optarg;
                        break;
                case ARG_NAME:
                        name = optarg;
                        break;
                case ARG_TREE:
                        req.tree = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        if (!display_option(c))
                                return usage_error("move: bad option");
                }
        if (!class)
                return usage_error("move: --job CLASS is required");
        if ((r = check_name("move", "job class", class, usage_error)) != GO_ON)
                return r;
        if (name && (r = check_name("move", "job name", name, usage_error)) != GO_ON)
                return r;
        if (optind >= argc)
                return usage_error("move: missing PID");
        if (argc - optind > PROTOCOL_MAX_PIDS)
                return usage_error("move: more than %d processes", PROTOCOL_MAX_PIDS);
        for (int i = optind; i < argc; i++) {
                const char *e;
                uint64_t pid;

                if (units_parse_uint(argv[i], 2, INT_MAX, &pid, &e) < 0)
                        return usage_error("move: invalid process id '%s': %s", argv[i], e);
                req.pids[req.n_pids++] = (pid_t) pid;
        }
        snprintf(req.class, sizeof(req.class), "%s", class);
        snprintf(req.name, sizeof(req.name), "%s", strempty(name));
        return request(&req, ctl_print_moved);
}

/*
 * run --property KEY=VALUE: one of the job's own memory limits, in systemd-run's words (MemoryHigh,
 * MemoryMax, MemorySwapMax) or the policy's (memory.high, memory.max, memory.swap_max); GO_ON if valid, else
 * an exit status.  The daemon refuses a value above what the class gives each job.
 */
static int parse_property(const char *arg, struct ctl_run_options *o) {
        static const struct {
                const char *systemd, *policy;
                size_t offset;
        } keys[] = {
                { "MemoryHigh", "memory.high", offsetof(struct ctl_run_options, memory_high) },
                { "MemoryMax", "memory.max", offsetof(struct ctl_run_options, memory_max) },
                { "MemorySwapMax", "memory.swap_max", offsetof(struct ctl_run_options, memory_swap_max) },
        };
        const char *eq = strchr(arg, '='), *e;
        struct policy_context ctx;
        uint64_t v;

        if (!eq)
                return run_usage_error("run: --property %s: expected KEY=VALUE, such as MemoryHigh=256M", arg);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                size_t n = (size_t) (eq - arg);

                if ((strlen(keys[i].systemd) != n || strncmp(arg, keys[i].systemd, n) != 0) &&
                    (strlen(keys[i].policy) != n || strncmp(arg, keys[i].policy, n) != 0))
                        continue;
                if (policy_context_default(&ctx) < 0)
                        ctx.ram_bytes = 0;
                if (units_parse_size(eq + 1, ctx.ram_bytes, &v, &e) < 0)
                        return run_usage_error("run: --property %s: %s", arg, e);
                if (v == UNITS_MAX || v == 0)
                        return run_usage_error(
                                "run: --property %s: give a size above 0 (a property may only "
                                "tighten the class's limits)",
                                arg);
                *(uint64_t *) ((char *) o + keys[i].offset) = v;
                return GO_ON;
        }
        return run_usage_error("run: --property %s: unknown property (MemoryHigh, MemoryMax or MemorySwapMax)", arg);
}

static int cmd_run(int argc, char *argv[]) {
        /* clang-format off */
        static const struct option options[] = {
                { "job", required_argument, NULL, ARG_JOB },
                { "name", required_argument, NULL, ARG_NAME },
                { "fallback", no_argument, NULL, ARG_FALLBACK },
                { "no-fallback", no_argument, NULL, ARG_NO_FALLBACK },
                { "verbose", no_argument, NULL, 'v' },
                { "property", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        /* clang-format on */
        struct ctl_run_options o = { .socket = ctl_socket_path(arg_socket), .config = arg_config };
        int c, r;

        optind = 0;
        /* "+": the options end at COMMAND, whose own options are not ours. */
        while ((c = getopt_long(argc, argv, "+hvp:", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        if ((r = parse_property(optarg, &o)) != GO_ON)
                                return r;
                        break;
                case ARG_JOB:
                        o.class = optarg;
                        break;
                case ARG_NAME:
                        o.name = optarg;
                        break;
                case ARG_FALLBACK:
                        o.fallback = CTL_FALLBACK_YES;
                        break;
                case ARG_NO_FALLBACK:
                        o.fallback = CTL_FALLBACK_NO;
                        break;
                case 'v':
                        o.verbose = true;
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_OK;
                default:
                        return run_usage_error("run: bad option");
                }
        if (!o.class)
                return run_usage_error("run: --job CLASS is required");
        if ((r = check_name("run", "job class", o.class, run_usage_error)) != GO_ON)
                return r;
        if (o.name && (r = check_name("run", "job name", o.name, run_usage_error)) != GO_ON)
                return r;
        if (optind >= argc)
                return run_usage_error("run: missing COMMAND");
        o.argv = argv + optind;
        return ctl_run(&o);
}

static int cmd_help(int argc, char *argv[]) {
        help(stdout);
        return EXIT_OK;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, ARG_SOCKET },
                DISPLAY_OPTIONS,
                { "config", required_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        static const struct {
                const char *name;
                int (*run)(int argc, char *argv[]);
                /* clang-format off */
        } commands[] = {
                { "run", cmd_run },       { "move", cmd_move },     { "status", cmd_status },
                { "list", cmd_list },     { "show", cmd_job_verb },     { "reload", cmd_reload },
                { "check", cmd_check },   { "version", cmd_version }, { "help", cmd_help },
                { "stop", cmd_job_verb }, { "kill", cmd_kill },       { "freeze", cmd_job_verb },
                { "thaw", cmd_job_verb }, { "top", cmd_top },       { "metrics", cmd_metrics },
                { "suggest", cmd_suggest },
        };
        /* clang-format on */
        const char *cmd;
        int c;

        while ((c = getopt_long(argc, argv, "+c:hlV", options, NULL)) >= 0)
                switch (c) {
                case ARG_SOCKET:
                        if (!*optarg)
                                return usage_error("--socket: empty path");
                        arg_socket = optarg;
                        break;
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
                        if (!display_option(c))
                                return usage_error("bad option");
                }
        if (optind >= argc)
                return usage_error("missing command");
        cmd = argv[optind];
        argc -= optind;
        argv += optind;

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (streq(cmd, commands[i].name))
                        return commands[i].run(argc, argv);
        return usage_error("unknown command '%s'", cmd);
}
