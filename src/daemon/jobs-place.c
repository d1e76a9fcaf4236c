/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job registry's placements: a new job for a process, and more
 * processes into a job, neither with the loop waiting (the systemd backend
 * answers when PID 1 has, the cgroupfs backend when its worker has written
 * the pids: each write waits in the kernel for an RCU grace period); after
 * every write of a pid, its check through the pidfd that holds the process
 * (jobs_recheck()).
 */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>

#include "jobs-own.h"
#include "proc.h"

/* ---- the check after a write ---- */

/* Whether cgroup is path or below it (both relative to the cgroup2 mount, with or without a leading '/'). */
static bool cgroup_within(const char *cgroup, const char *path) {
        const char *rest;

        cgroup += cgroup[0] == '/';
        path += path[0] == '/';
        rest = startswith(cgroup, path);
        return rest && (*rest == '\0' || *rest == '/');
}

bool jobs_recheck(struct jobs *js, const char *path, pid_t pid, int pidfd, uint64_t before_ticks) {
        struct proc_ids other = {}, parent = {};
        bool found = false;
        int r;

        if (pidfd < 0 || proc_written_other(js->procdir, pidfd, pid, before_ticks, &other) <= 0)
                return false;
        if (!cgroup_within(other.cgroup, path))
                goto done; /* the write did not take it, or it is elsewhere already */
        found = true;
        r = proc_ids(js->procdir, other.ppid, &parent);
        if (r >= 0 && cgroup_within(parent.cgroup, path))
                goto done; /* born of the job: where it belongs */
        /* Where it most likely was: a process starts in its parent's cgroup. */
        if (r >= 0)
                r = js->move_back(js, parent.cgroup[0] ? parent.cgroup : "/", pid);
        if (r >= 0)
                action_log_add(js->log, LOG_LEVEL_WARNING,
                               "The process checked as %d ended before it was written into /%s, and a process of uid "
                               "%u took its pid: moved back to its parent's cgroup /%s",
                               (int) pid, path + (path[0] == '/'), (unsigned) other.uid[0], parent.cgroup);
        else
                action_log_add(js->log, LOG_LEVEL_WARNING,
                               "The process checked as %d ended before it was written into /%s, and a process of uid "
                               "%u took its pid: cannot move it back: %s",
                               (int) pid, path + (path[0] == '/'), (unsigned) other.uid[0], strerror(-r));
done:
        proc_ids_done(&other);
        proc_ids_done(&parent);
        return found;
}

/* ---- more processes into a job ---- */

/* Each pid written, checked after the write: what was moved is what the pidfds hold. */
static size_t attaching_check(struct job_attaching *at) {
        uint64_t now = proc_now_ticks();
        size_t moved = 0;

        for (size_t i = 0; i < at->n; i++)
                moved += !jobs_recheck(at->js, at->path, at->pids[i], at->pidfds[i], now) &&
                         (at->pidfds[i] < 0 || proc_pidfd_alive(at->pidfds[i]));
        return moved;
}

static void attaching_finish(struct job_attaching *at, int r, size_t moved) {
        jobs_attached_fn fn = at->fn;
        void *userdata = at->userdata;

        at->ba = NULL;
        attaching_free(at);
        if (fn)
                fn(userdata, r, moved);
}

static void on_backend_attached(void *userdata, int r) {
        struct job_attaching *at = userdata;
        size_t moved;

        at->ba = NULL;
        moved = r >= 0 ? attaching_check(at) : 0;
        attaching_finish(at, r, moved);
}

int jobs_attach_async(struct jobs *js, const struct job *j, const pid_t *pids, const int *pidfds, size_t n,
                      jobs_attached_fn fn, void *userdata) {
        struct job_attaching *at;
        int r;

        assert(js && j && (pids || n == 0));
        at = calloc(1, sizeof(*at));
        if (!at)
                return -ENOMEM;
        *at = (struct job_attaching){ .js = js, .fn = fn, .userdata = userdata };
        LIST_PREPEND(js->attachings, at);
        at->path = strdup(j->path);
        at->pids = calloc(n + 1, sizeof(*at->pids));
        at->pidfds = calloc(n + 1, sizeof(*at->pidfds));
        if (!at->path || !at->pids || !at->pidfds) {
                attaching_free(at);
                return -ENOMEM;
        }
        for (; at->n < n; at->n++) {
                at->pids[at->n] = pids[at->n];
                at->pidfds[at->n] = pidfds && pidfds[at->n] >= 0 ? fcntl(pidfds[at->n], F_DUPFD_CLOEXEC, 3) : -1;
        }
        /* No process to attach is -ESRCH, from either backend. */
        r = n == 0 ? -ESRCH
                   : backend_job_attach_async(js->backend, at->path, at->pids, n, on_backend_attached, at, &at->ba);
        if (r < 0) {
                attaching_free(at);
                return r;
        }
        return 0;
}

void jobs_attach_forget(struct jobs *js, void *userdata) {
        for (struct job_attaching *at = js->attachings; at; at = at->next)
                if (at->userdata == userdata)
                        at->fn = NULL;
}

/* ---- placement ---- */

static void placing_unlink(struct jobs *js, struct job_placing *pl) {
        for (struct job_placing **pp = &js->placings; *pp; pp = &(*pp)->next)
                if (*pp == pl) {
                        *pp = pl->next;
                        break;
                }
}

static void placing_done(struct job_placing *pl, int r, const char *path) {
        struct jobs *js = pl->js;
        struct job *j = NULL;

        pl->bp = NULL;
        placing_unlink(js, pl);
        /* Its process may have ended before the write: then the job is empty and ends as any other. */
        if (r >= 0)
                (void) jobs_recheck(js, path, pl->pid, pl->pidfd, proc_now_ticks());
        if (r >= 0)
                r = job_add(js, &pl->label, pl->class, path, NULL, &j);
        if (r >= 0)
                action_log_add_fields(js->log, LOG_LEVEL_INFO, JOB_FIELDS(j, "start"),
                                      "Job %" PRIu64
                                      " (%s) of class %s started for uid %u with 1 process in /%s, placed by %s",
                                      j->id, j->name, j->class, (unsigned) pl->label.uid, j->path,
                                      j->by[0] ? j->by : "?");
        if (pl->fn)
                pl->fn(pl->userdata, r, j);
        placing_free(pl);
}

static void on_backend_placed(void *userdata, int r, const char *path) {
        placing_done(userdata, r, path);
}

int jobs_place_async(struct jobs *js, const struct pw_job_class *c, const struct pw_job_limits *limits,
                     const char *name, uid_t uid, const char *by, pid_t pid, int pidfd, jobs_placed_fn fn,
                     void *userdata) {
        struct job_placing *pl;
        int r;

        assert(js && c && fn);
        pl = calloc(1, sizeof(*pl));
        if (!pl)
                return -ENOMEM;
        *pl = (struct job_placing){ .js = js,
                                    .pid = pid,
                                    .pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : -1,
                                    .fn = fn,
                                    .userdata = userdata,
                                    .label = {
                                            .id = js->next_id, .uid = uid, .started_usec = now_usec(CLOCK_REALTIME) } };
        if (name && name[0])
                snprintf(pl->label.name, sizeof(pl->label.name), "%s", name);
        else
                snprintf(pl->label.name, sizeof(pl->label.name), "job-%" PRIu64, pl->label.id);
        snprintf(pl->label.by, sizeof(pl->label.by), "%s", strempty(by));
        snprintf(pl->class, sizeof(pl->class), "%s", c->name);
        r = backend_job_place_async(js->backend, c->name, limits ?: &c->per_job, &pl->label, pid, on_backend_placed, pl,
                                    &pl->bp);
        if (r < 0) {
                placing_free(pl);
                return r;
        }
        js->next_id++; /* taken, whatever comes of it: two placements under way never share an id */
        pl->next = js->placings;
        js->placings = pl;
        return 0;
}

void jobs_place_forget(struct jobs *js, void *userdata) {
        for (struct job_placing *pl = js->placings; pl; pl = pl->next)
                if (pl->userdata == userdata)
                        pl->fn = NULL;
}

bool jobs_placing(const struct jobs *js, pid_t pid) {
        for (const struct job_placing *pl = js->placings; pl; pl = pl->next)
                if (pl->pid == pid)
                        return true;
        return false;
}
