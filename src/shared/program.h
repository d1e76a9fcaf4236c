/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What a program an exe: rule names is on this host, so that the rule
 * matches what the kernel shows of it when it runs, and `check` can say
 * when it cannot.  On Debian, /usr/bin/borg is a Python script (a running
 * borg's /proc/PID/exe is the interpreter, and the script's path is its
 * first argument), and /usr/bin/pg_dump is a symbolic link to
 * postgresql-common's pg_wrapper, a Perl script that 20 other names share.
 *
 * When the kernel executes a script PATH (execve(PATH, argv)), it runs the
 * interpreter of its "#!" line with the argument vector
 *   INTERPRETER [OPTIONAL-ARGUMENT] PATH argv[1] ...
 * where PATH is the name as executed (a symbolic link's own name, not its
 * target).  program_runs_script() recognizes such a process.
 *
 * Reads files; no logging.  Errors: negative errno.
 */

#include <stdbool.h>
#include <stddef.h>

enum program_kind {
        PROGRAM_MISSING, /* nothing at that path (not installed, or a typo) */
        PROGRAM_BINARY,  /* a file the kernel runs itself (ELF, or anything not a script) */
        PROGRAM_SCRIPT,  /* a "#!" script: an interpreter runs it */
        PROGRAM_OTHER,   /* not a regular file, or not executable */
};

#define PROGRAM_SHARED_NAMES 4

struct program_info {
        enum program_kind kind;
        bool link;    /* the path is a symbolic link */
        char *target; /* the path with every symbolic link resolved (NULL: missing) */
        /* A script: its interpreter as the "#!" line names it, that resolved (what /proc/PID/exe shows), and
         * the optional argument ("" for none). */
        char *interpreter, *interpreter_real, *interpreter_arg;
        /* A link: the other names in its directory that are links to the same target (a wrapper, or a
         * multi-call program), how many, and the first few. */
        size_t n_shared;
        char *shared[PROGRAM_SHARED_NAMES];
};

/* Inspects path (absolute).  A missing program is not an error: kind PROGRAM_MISSING. */
int program_inspect(const char *path, struct program_info *ret);
void program_info_done(struct program_info *p);

/*
 * Whether a process that runs exe (/proc/PID/exe) with the argument vector
 * argv (n arguments) is the kernel running the script path: exe is the
 * script's resolved interpreter, and the script argument names path
 * (compared with the directories resolved: /bin/borg is /usr/bin/borg on a
 * merged /usr, the file name itself as given, so that a link's own name
 * counts, not what it points to).
 */
bool program_runs_script(const struct program_info *p, const char *path, const char *exe, const char *const *argv,
                         size_t n);

/*
 * Why an exe: rule naming path (inspected as p) cannot match, in a sentence
 * for `check` and the daemon's log, or NULL when it can: not installed, not
 * an executable file, a script whose interpreter is missing, a link to a
 * program other names share that is not a script (a multi-call binary: a
 * process cannot be told from the others').
 */
const char *program_problem(const char *path, const struct program_info *p, char *buf, size_t len);
/*
 * How it is matched, when that is not simply "held at its exec": a link to
 * a script other names share (postgresql-common's pg_wrapper) is matched by
 * the name it is run as, just after its exec (holding the wrapper would hold
 * every name's exec); a link is matched as the program it resolves to.
 * NULL otherwise.
 */
const char *program_note(const char *path, const struct program_info *p, char *buf, size_t len);
/* Whether execs of path are held by marking it (fanotify follows the link): not a link that others share. */
bool program_holdable(const struct program_info *p);

/* path with the symbolic links of its directory resolved, its last component as is; NULL if the
 * directory does not exist (or out of memory). */
char *program_name_path(const char *path);
