/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The cgroup engine: the only module that writes cgroupfs.  It turns a
 * policy into cgroup v2 settings:
 *
 *   <cgroup_root>/<class>/slot-N     (jobs are leaves below their class)
 *
 * Class limits (memory.high, memory.max, memory.swap.max, io.max, cpu.weight)
 * live on the class cgroup.  A job runs in a slot: slots are reused, because
 * a removed cgroup that still holds page cache lingers as a "dying" memcg
 * that every reclaim pass walks; a released slot is reclaimed and kept for
 * the next job, and only idle slots beyond a small pool are removed.  A busy
 * slot carries its job's label in the user.pagewarden.job xattr (cgroup v2
 * directories cannot be renamed), so a restarted daemon finds its jobs again.
 *
 * Writes go through libcgroup (one value per call, so that the errno names
 * the file that failed); libcgroup cannot enable controllers in the root's
 * cgroup.subtree_control, set xattrs, or read core files cheaply, so those
 * are done directly.  Paths given to these functions are relative to the
 * cgroup2 mount, without a leading '/'.
 *
 * Errors: negative errno.  -ENOENT and -ENODEV mean the cgroup is gone
 * (a job ended, an application stopped): callers treat that as normal.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup-values.h"
#include "ledger.h"
#include "policy.h"

struct cgroup_features {
        bool memory_reclaim; /* memory.reclaim (5.19) */
        bool swap;           /* memory.swap.max: swap accounting is on */
        bool freeze;         /* cgroup.freeze (5.2) */
        bool kill;           /* cgroup.kill (5.14) */
        bool cpu;            /* the cpu controller could be enabled */
        bool user_xattr;     /* user.* xattrs on cgroupfs (5.7) */
};

struct cgroup_engine;

#define CGROUP_IDLE_SLOTS_DEFAULT 4

/*
 * mount: where cgroup2 is mounted; root: the job tree's root below it
 * (settings cgroup_root).  With manage, it creates the root and enables
 * memory, io and cpu along its path; without (systemd owns the tree), it
 * only reads, and writes what it is asked to.
 */
int cgroup_engine_new(const char *mount, const char *root, bool manage, struct cgroup_engine **ret);
struct cgroup_engine *cgroup_engine_free(struct cgroup_engine *e);
static inline void cgroup_engine_freep(struct cgroup_engine **e) {
        cgroup_engine_free(*e);
}
const struct cgroup_features *cgroup_engine_features(const struct cgroup_engine *e);
const char *cgroup_engine_mount(const struct cgroup_engine *e);
const char *cgroup_engine_root(const struct cgroup_engine *e);
void cgroup_engine_set_idle_slots(struct cgroup_engine *e, unsigned n);

/* ---- classes ---- */

/* Creates the class cgroup if needed and writes every limit of c but memory.high and memory.max, which the caller
 * writes (the cgroupfs backend decides where: see cgroup_limit_change()). */
int cgroup_class_apply(struct cgroup_engine *e, const struct pw_job_class *c);
/*
 * What writing v to a memory limit file of the cgroup at path would do:
 * nothing (it holds v already: the kernel would still reclaim for a write),
 * raise it or lower it to no less than the cgroup holds (a write that
 * returns at once), or make the writer reclaim the difference (lower than
 * memory.current: memory.high's writer keeps reclaiming for as long as the
 * cgroup charges more, seconds and more).  A value that cannot be read
 * counts as a change that does not reclaim.
 */
enum cgroup_limit_change {
        CGROUP_LIMIT_SAME,
        CGROUP_LIMIT_WRITE,
        CGROUP_LIMIT_RECLAIMS,
};
enum cgroup_limit_change cgroup_limit_change(struct cgroup_engine *e, const char *path, const char *file, uint64_t v);
/* What the governor changes (memory.high it writes through the worker: see worker.h). */
int cgroup_class_set_io(struct cgroup_engine *e, const char *class, const struct pw_io_limit *io, size_t n);
int cgroup_class_freeze(struct cgroup_engine *e, const char *class, bool frozen);

struct cgroup_class_state {
        uint64_t memory_high, memory_max, memory_swap_max, cpu_weight;
        uint64_t memory_current;
        struct cgv_io_line *io; /* io.max as the kernel has it */
        size_t n_io;
        bool frozen;
};
/* The values in force in a class's cgroup (path relative to the mount). */
int cgroup_class_read(struct cgroup_engine *e, const char *path, struct cgroup_class_state *ret);
void cgroup_class_state_done(struct cgroup_class_state *s);
/* Removes a class cgroup that has no busy slot (its idle slots are reclaimed and removed). */
int cgroup_class_remove(struct cgroup_engine *e, const char *class);

/* ---- job slots ---- */

#define CGROUP_JOB_BY_MAX 200

struct cgroup_job_label {
        uint64_t id;
        uid_t uid;
        uint64_t started_usec; /* CLOCK_REALTIME */
        char name[POLICY_NAME_MAX + 1];
        char by[CGROUP_JOB_BY_MAX + 1]; /* how it was placed: "run", "move", "rule exe ... (file:line)" */
};

/*
 * Takes an idle slot of class (or creates one), labels it, and returns its
 * path (relative to the mount) and an O_DIRECTORY fd for clone3's
 * CLONE_INTO_CGROUP.  ret_fd may be NULL.  1: the slot was made now (it has
 * the kernel's defaults), 0: an idle one was taken.
 */
int cgroup_job_acquire(struct cgroup_engine *e, const char *class, const struct cgroup_job_label *label,
                       char **ret_path, int *ret_fd);
/* The limits of the job on its own slot: every value written on a reused slot, so that it forgets its last job's;
 * on a fresh one (acquire's 1) only those that are not the kernel's default "max". */
int cgroup_job_set_limits(struct cgroup_engine *e, const char *path, bool fresh, const struct pw_job_limits *limits);
/* Moves a running process into the slot. */
int cgroup_job_attach(struct cgroup_engine *e, const char *path, pid_t pid);

struct cgroup_release {
        uint64_t before, after; /* memory.current before and after reclaim */
        bool removed;           /* rmdir'ed (the pool of idle slots was full, and nothing was left charged) */
};
/*
 * After the job's last process exited: reclaims what is still charged to the
 * slot (memory.reclaim), then keeps it as an idle slot or removes it.
 * Reclaim runs in the caller's context and can take a while: never call this
 * on the event loop's thread.  -EBUSY if processes are still inside.
 */
int cgroup_job_release(struct cgroup_engine *e, const char *path, struct cgroup_release *ret);

/* What status shows of a running job: six files read (issue 27: status reads each job's files). */
struct cgroup_job_state {
        unsigned n_procs;
        bool have_memory;                     /* a memory cgroup (a systemd scope without limits is none) */
        uint64_t memory_current, memory_file; /* file: its page cache */
        uint64_t memory_high, memory_max;     /* its own limits (UNITS_MAX: none, or not there) */
        bool have_io;                         /* io.stat was read (the io controller is on) */
        uint64_t io_read, io_written;         /* bytes, all devices, since its cgroup was made */
};
int cgroup_job_read(struct cgroup_engine *e, const char *path, struct cgroup_job_state *ret);

/*
 * A job's counters, for its end-of-job report: what it read and wrote, how
 * often it hit memory.high and memory.max, OOM kills, and the time its tasks
 * stalled on memory and on I/O (PSI "some" totals).  Each is cumulative over
 * the cgroup's life: the report takes the difference from its start.  A file
 * that is not there (a controller off) leaves its have_ flag false.
 */
struct cgroup_job_counters {
        bool have_io, have_events, have_psi, have_peak;
        uint64_t io_read, io_written;
        uint64_t high, max, oom_kill;
        uint64_t memory_stall_usec, io_stall_usec;
        uint64_t memory_peak, memory_file; /* now: not differences */
};
void cgroup_job_counters(struct cgroup_engine *e, const char *path, struct cgroup_job_counters *ret);
/* The bytes read and written in path's io.stat (all devices, descendants included); -ENOENT: no io controller. */
int cgroup_io_read(struct cgroup_engine *e, const char *path, uint64_t *ret_read, uint64_t *ret_written);

/* Slots found in the tree: for adoption after a restart. */
struct cgroup_slot {
        char *class;
        char *path;
        bool labelled; /* busy: carries a job label */
        struct cgroup_job_label label;
        bool populated;
};
int cgroup_scan(struct cgroup_engine *e, struct cgroup_slot **ret, size_t *ret_n);
void cgroup_slots_free(struct cgroup_slot *s, size_t n);
/* Thaws every class (nothing may stay frozen after a crash). */
int cgroup_thaw_all(struct cgroup_engine *e);

/* ---- protection ---- */

struct cgroup_protect_result {
        int error;              /* 0, or -ENOENT when the cgroup does not exist */
        uint64_t min, low;      /* now in force on the cgroup itself */
        uint64_t effective_min; /* the smallest memory.min on its path to the root */
        uint64_t effective_low;
};

/*
 * A ledger (ledger.h) of cgroups, its keys paths relative to the mount, its
 * originals kept in state_dir/protect.state across restarts (read now;
 * state_dir NULL: in memory only).  The backend that protects cgroups owns
 * it; the engine only does its I/O.
 */
int cgroup_protect_ledger_init(struct ledger *l, const char *state_dir);
/*
 * Makes the protection in force through ledger l exactly what req asks:
 * memory.min/low on each cgroup, raised on every ancestor to cover the sum
 * of its protected children (never lowered below what it had),
 * memory.swap.max 0 for swap_deny.  Every value it changes is remembered by
 * l (and kept in its file) and restored when no request needs it any more:
 * cgroup_protect_set(e, l, NULL, 0, NULL) withdraws everything.  req's paths
 * are the policy's ("/system.slice/db.service"); a request without one is
 * not a cgroup's (its result: -EOPNOTSUPP).  results (n entries, may be
 * NULL) report each request.  Each cgroup is pinned by its inode number while
 * its files are read and written, so that one removed and made again under
 * the same name is not taken for the one whose originals l keeps.
 */
int cgroup_protect_set(struct cgroup_engine *e, struct ledger *l, const struct ledger_request *req, size_t n,
                       struct cgroup_protect_result *results);
/* Cgroups' memory.min and memory.low, read once for many cgroup_protect_read() calls (180 applications
 * below one slice read the slice's values once, not 180 times; cgroup_protect_set's results take what its own
 * reads and writes left in force, with no read after).  Zero-initialised; valid while nothing else writes them:
 * for one pass over the applications. */
struct cgroup_protect_cache {
        struct cgroup_protect_cached *v;
        size_t n, allocated;
};
void cgroup_protect_cache_done(struct cgroup_protect_cache *c);
/* What is in force on path: memory.min/low, and the smallest on its way to the root (cache: may be NULL). */
int cgroup_protect_read(struct cgroup_engine *e, const char *path, struct cgroup_protect_cache *cache,
                        struct cgroup_protect_result *ret);

/* ---- pressure ---- */

/*
 * Opens a PSI trigger: writes spec ("some 50000 500000") into path's
 * RESOURCE.pressure, or with path NULL into /proc/pressure/RESOURCE (the
 * whole machine: not cgroupfs, but the same protocol, kept beside it).  The
 * trigger lives while *ret_fd is open; the fd polls POLLPRI when it fires
 * and POLLERR when the cgroup is removed.
 */
int cgroup_psi_trigger(struct cgroup_engine *e, const char *path, const char *resource, const char *spec, int *ret_fd);

/*
 * What confines a process in path, from path up to top (both relative to
 * the mount; top is path or above it): a limit (memory.max, memory.high,
 * memory.swap.max, pids.max, cpu.max, io.max) or a BPF program attached
 * to the cgroup (device, IP, socket and sysctl filters).  A pids.max equal
 * to tasks_default (systemd's DefaultTasksMax, which every unit gets
 * unasked) is not counted.  Returns 1 and a sentence in what ("pids.max 8
 * on /cage"), 0 for nothing, or a negative errno when it cannot tell (then
 * what says why).
 */
int cgroup_confinement(struct cgroup_engine *e, const char *path, const char *top, uint64_t tasks_default, char *what,
                       size_t len);

/* ---- low-level, for status and tests ---- */

int cgroup_read_file(struct cgroup_engine *e, const char *path, const char *file, char **ret);
int cgroup_read_u64(struct cgroup_engine *e, const char *path, const char *file, uint64_t *ret);
int cgroup_write_file(struct cgroup_engine *e, const char *path, const char *file, const char *value);
