/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Exec permission events (fanotify FAN_OPEN_EXEC_PERM) on the programs the
 * exe: rules name: the kernel holds each exec of a marked file until the
 * daemon answers, so that the process can be placed before the program's
 * first instruction.  Only the marked files are held (inode marks, not a
 * whole file system), and the daemon always allows the exec, placed or not.
 * It needs CAP_SYS_ADMIN; without it the proc connector alone places those
 * programs, a little after their exec.
 *
 * The price: while the daemon does not answer, execs of those programs
 * wait (the watchdog restarts a hung daemon; a dead one's marks go with it);
 * with systemd, each waits until its scope has started (the caller takes the
 * hold and answers then), but never more than EXECPERM_DEADLINE_USEC: a
 * slow PID 1, or a flood of other users' execs, makes the exec go on
 * outside its job, which it joins just after.
 *
 * A program replaced by an upgrade is a new file: its mark is on the old
 * one.  The directories of the marked programs are watched (inotify), and a
 * file created or renamed over a marked path is marked again.
 * Errors: negative errno.
 */

#include <sys/types.h>
#include <systemd/sd-event.h>

struct execperm;

#define EXECPERM_DEADLINE_USEC (500 * 1000ULL)

/* An exec waiting for its answer. */
struct execperm_hold;

/* pid is executing exe, one of the marked programs, and waits for the answer: given when this returns, unless
 * fn takes *hold (sets it NULL) and answers later with execperm_answer().  *hold may be NULL (no memory to
 * hold it): then the answer goes when fn returns. */
typedef void (*execperm_fn)(void *userdata, pid_t pid, const char *exe, struct execperm_hold **hold);

int execperm_new(sd_event *event, execperm_fn fn, void *userdata, struct execperm **ret);
/* Allows the exec of a hold taken from execperm_fn, and frees the hold. */
void execperm_answer(struct execperm_hold *h);
/* Allows every exec held (those held by callers too: their holds are freed). */
struct execperm *execperm_free(struct execperm *x);
static inline void execperm_freep(struct execperm **x) {
        execperm_free(*x);
}
/* Holds the execs of path (absolute) from now on; if it does not exist yet (-ENOENT), from when it does. */
int execperm_mark(struct execperm *x, const char *path);
/* Holds none any more (the rules changed). */
int execperm_clear(struct execperm *x);
