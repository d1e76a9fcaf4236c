/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>

#include "cgroup-values.h"
#include "log.h"
#include "place-rules.h"
#include "proc.h"
#include "rules.h"

#define RATE_TEXT_(n) #n
#define RATE_TEXT(n) RATE_TEXT_(n)

/* A command line is read up to this much; a rule sees no more of it. */
#define CMDLINE_MAX 4096

void place_rules_init(struct place_rules *a) {
        a->procdir = a->procdir ?: PROC_ROOT;
        a->tokens = AUTOPLACE_BURST;
        a->tokens_usec = now_usec(CLOCK_MONOTONIC);
}

/* ---- programs ---- */

static void programs_done(struct place_rules *a) {
        for (size_t i = 0; i < a->n_programs; i++) {
                free(a->programs[i].path);
                program_info_done(&a->programs[i].info);
        }
        a->programs = mfree(a->programs);
        a->n_programs = 0;
        a->unheld_scripts = false;
}

static const struct place_rules_program *program_find(const struct place_rules *a, const char *path) {
        for (size_t i = 0; i < a->n_programs; i++)
                if (streq(a->programs[i].path, path))
                        return &a->programs[i];
        return NULL;
}

/* What each exe: path is now (a script, a link, nothing), said once a load where that matters. */
static void programs_update(struct place_rules *a) {
        size_t n = 0;

        programs_done(a);
        for (size_t i = 0; i < a->policy->n_classes; i++)
                n += a->policy->classes[i].match.exe.n;
        a->programs = calloc(n + 1, sizeof(*a->programs));
        if (!a->programs)
                return;
        for (size_t i = 0; i < a->policy->n_classes; i++)
                for (size_t k = 0; k < a->policy->classes[i].match.exe.n; k++) {
                        const struct pw_pattern *e = &a->policy->classes[i].match.exe.v[k];
                        struct place_rules_program *pr = &a->programs[a->n_programs];
                        char text[1024];
                        const char *why;
                        int r;

                        if (program_find(a, e->text))
                                continue;
                        r = program_inspect(e->text, &pr->info);
                        if (r < 0) {
                                log_warning_errno(r, "exe: %s (%s:%u): cannot inspect it: %m", e->text,
                                                  a->policy->classes[i].source, e->line);
                                continue;
                        }
                        pr->path = strdup(e->text);
                        if (!pr->path) {
                                program_info_done(&pr->info);
                                return;
                        }
                        a->n_programs++;
                        if ((why = program_problem(e->text, &pr->info, text, sizeof(text))))
                                action_log_add(a->log, LOG_LEVEL_WARNING, "Class %s (%s:%u): %s",
                                               a->policy->classes[i].name, a->policy->classes[i].source, e->line, why);
                        else if ((why = program_note(e->text, &pr->info, text, sizeof(text))))
                                log_info("Class %s: %s", a->policy->classes[i].name, why);
                        if (pr->info.kind == PROGRAM_SCRIPT && !program_holdable(&pr->info))
                                a->unheld_scripts = true;
                }
}

/* Whether exe is the interpreter of a script some exe: rule names: then its arguments say which script. */
static bool interpreter_of_script(const struct place_rules *a, const char *exe) {
        for (size_t i = 0; i < a->n_programs; i++)
                if (a->programs[i].info.kind == PROGRAM_SCRIPT && a->programs[i].info.interpreter_real &&
                    streq(a->programs[i].info.interpreter_real, exe))
                        return true;
        return false;
}

/*
 * The program a process is, as exe: rules name programs: the rule's path
 * when exe is what that path resolves to (a link, or the script itself,
 * held at its exec), or when exe is an interpreter running that script
 * (argv); else exe.
 */
static const char *program_of(const struct place_rules *a, const char *exe, const char *const *argv, size_t n) {
        for (size_t i = 0; i < a->n_programs; i++) {
                const struct place_rules_program *pr = &a->programs[i];

                if (program_holdable(&pr->info) && pr->info.target && streq(exe, pr->info.target))
                        return pr->path;
                if (n > 0 && program_runs_script(&pr->info, pr->path, exe, argv, n))
                        return pr->path;
        }
        return exe;
}

static uint64_t cgroup_ns_of(const char *procdir, pid_t pid) {
        char path[64];
        struct stat st;

        if (pid)
                snprintf(path, sizeof(path), "%s/%d/ns/cgroup", procdir, (int) pid);
        else
                snprintf(path, sizeof(path), "%s/self/ns/cgroup", procdir);
        return stat(path, &st) < 0 ? 0 : (uint64_t) st.st_ino;
}

/* A job name from the program: its base name, with what a job name may not hold made '-'. */
/* ---- deciding ---- */

struct candidate {
        pid_t pid;
        char exe[PATH_MAX];
        char cmdline[CMDLINE_MAX];
        bool have_exe, have_cmdline;
        struct proc_ids ids;
        char user[64];
};

/* The cheap part, for every exec: is it a program some rule names?  With exe given (an exec held before it
 * happened), the program is that, and its command line is not known yet. */
static bool candidate_read(struct place_rules *a, pid_t pid, const char *exe, struct candidate *c) {
        c->pid = pid;
        c->have_exe = c->have_cmdline = false;
        if (exe) {
                snprintf(c->exe, sizeof(c->exe), "%s", program_of(a, exe, NULL, 0));
                c->have_exe = true;
        } else {
                const char *argv[3];
                size_t n = 0, len = 0;
                bool args;

                /* Held at their exec (a->perm), the programs exe: names need no look from here but at scans,
                 * or for scripts recognized by their interpreter's arguments. */
                c->have_exe = a->need_exe && (!a->perm || a->scanning || a->unheld_scripts) &&
                              proc_exe(a->procdir, pid, c->exe, sizeof(c->exe)) >= 0;
                args = a->need_cmdline || (c->have_exe && interpreter_of_script(a, c->exe));
                if (args && proc_args(a->procdir, pid, c->cmdline, sizeof(c->cmdline), &len) >= 0) {
                        for (size_t off = 0; off < len && n < ELEMENTSOF(argv); off += strlen(c->cmdline + off) + 1)
                                argv[n++] = c->cmdline + off;
                        c->have_cmdline = a->need_cmdline;
                }
                if (c->have_exe) {
                        const char *prog = program_of(a, c->exe, argv, n);

                        if (prog != c->exe)
                                snprintf(c->exe, sizeof(c->exe), "%s", prog);
                }
                if (len > 0)
                        rules_join_cmdline(c->cmdline, len);
        }
        return rules_candidate(a->policy, c->have_exe ? c->exe : NULL, c->have_cmdline ? c->cmdline : NULL);
}

static struct rules_process candidate_process(struct place_rules *a, struct candidate *c) {
        (void) user_name_of(c->ids.uid[1], c->user, sizeof(c->user));
        return (struct rules_process){
                .pid = c->pid,
                .tgid = c->ids.tgid,
                .ppid = c->ids.ppid,
                .uid = c->ids.uid[1],
                .user = c->user[0] ? c->user : NULL,
                .exe = c->have_exe ? c->exe : NULL,
                .cmdline = c->have_cmdline ? c->cmdline : NULL,
                .cgroup = c->ids.cgroup,
                .kernel_thread = c->ids.kernel_thread,
                .other_cgroup_ns = a->cgroup_ns && cgroup_ns_of(a->procdir, c->pid) != a->cgroup_ns,
                .one_uid = c->ids.uid[0] == c->ids.uid[1] && c->ids.uid[1] == c->ids.uid[2] &&
                           c->ids.uid[2] == c->ids.uid[3],
        };
}

/* What confines p between its cgroup and where a rule of c may take it from (rules_source()); NULL for
 * nothing.  What cannot be read counts as confining: a rule must not be a way out of it. */
static const char *confinement(struct place_rules *a, const struct rules_process *p, const struct pw_job_class *c,
                               char *buf, size_t len) {
        char source[PATH_MAX];

        if (rules_source(p, c, source, sizeof(source)) < 0)
                return NULL; /* no source at all: rules_excluded() says so */
        return cgroup_confinement(a->backend->engine, p->cgroup, source, a->backend->tasks_default, buf, len) != 0
                       ? buf
                       : NULL;
}

/* The policy whose units: rules place units, where the backend does. */
static const struct pw_policy *units_policy(const struct place_rules *a) {
        return backend_places_units(a->backend) ? a->policy : NULL;
}

/* The parent is a match of its own (a scan finds both): its job takes the child along. */
static bool parent_matches(struct place_rules *a, pid_t ppid) {
        struct candidate parent = {};
        struct rules_match m;
        bool r;

        if (ppid <= 1 || !candidate_read(a, ppid, NULL, &parent) || proc_ids(a->procdir, ppid, &parent.ids) < 0)
                return false;
        {
                struct rules_process p = candidate_process(a, &parent);
                const struct rules_exclusions x = { .self = getpid(),
                                                    .job_root = a->backend->root,
                                                    .protected = &a->protected,
                                                    .units = units_policy(a) };

                r = rules_match_process(a->policy, &p, &m) && !rules_excluded(&x, &p, m.class);
        }
        proc_ids_done(&parent.ids);
        return r;
}

/* A process a rule names, being placed; its exec waits (hold) where fanotify holds it. */
struct place_rules_placing {
        struct place_rules *a;
        pid_t pid;
        uid_t uid;
        const struct pw_job_class *class;
        struct execperm_hold *hold;
        char *cgroup; /* where it was when it matched */
        char name[POLICY_NAME_MAX + 1], by[CGROUP_JOB_BY_MAX + 1];
        struct place_rules_placing *prev, *next;
};

/*
 * Moves the children it forked before it was placed (later ones are born in
 * the job): only those still where it was (a child root put elsewhere stays
 * there), each held by a pidfd from its check to the check after its write.
 */
static void take_children(struct place_rules *a, const struct job *j, const struct place_rules_placing *pp) {
        _cleanup_free_ pid_t *children = NULL, *pids = NULL;
        _cleanup_free_ int *pidfds = NULL;
        size_t n = 0, k = 0;

        if (!pp->cgroup || proc_children(a->procdir, pp->pid, &children, &n) < 0 || n == 0)
                return;
        pids = calloc(n, sizeof(*pids));
        pidfds = calloc(n, sizeof(*pidfds));
        if (!pids || !pidfds)
                return;
        for (size_t i = 0; i < n; i++) {
                struct proc_ids ids = {};
                int fd = proc_pidfd_open(children[i]);

                if (fd < 0)
                        continue;
                if (proc_ids(a->procdir, children[i], &ids) >= 0 && ids.ppid == pp->pid && !ids.kernel_thread &&
                    streq(ids.cgroup, pp->cgroup) && proc_pidfd_alive(fd)) {
                        pids[k] = children[i];
                        pidfds[k++] = fd;
                } else
                        close(fd);
                proc_ids_done(&ids);
        }
        if (k > 0)
                (void) jobs_attach_async(a->jobs, j, pids, pidfds, k, NULL, NULL);
        for (size_t i = 0; i < k; i++)
                close(pidfds[i]);
}

static void placing_free(struct place_rules_placing *pp) {
        struct place_rules *a = pp->a;

        execperm_answer(pp->hold);
        LIST_REMOVE(a->placings, pp);
        free(pp->cgroup);
        free(pp);
}

static void on_placed(void *userdata, int r, struct job *j) {
        struct place_rules_placing *pp = userdata;
        struct place_rules *a = pp->a;

        if (r >= 0) {
                a->placed++;
                take_children(a, j, pp);
        } else if (r != -ESRCH && r != -ENOENT && r != -ECANCELED) /* not: it exited first, the daemon stops */
                action_log_add(a->log, LOG_LEVEL_WARNING, "Cannot place process %d (%s) by %s: %s", (int) pp->pid,
                               pp->name, pp->by, strerror(-r));
        placing_free(pp); /* and the exec goes on, in its job */
}

/* Why a user's placement by rule must wait for another time, or NULL: the bounds of place-rules.h. */
static const char *over_bounds(struct place_rules *a, const struct rules_process *p, const struct pw_job_class *c) {
        unsigned user = 0, class = 0;
        uint64_t now;

        if (p->uid == 0)
                return NULL;
        for (const struct job *j = a->jobs->list; j; j = j->next) {
                user += j->uid == p->uid;
                class += streq(j->class, c->name) && startswith(j->by, "rule ");
        }
        for (const struct place_rules_placing *pp = a->placings; pp; pp = pp->next) {
                user += pp->uid == p->uid;
                class += pp->class == c;
        }
        if (user >= AUTOPLACE_MAX_JOBS_PER_USER)
                return "its user has as many jobs as a user may have";
        if (class >= AUTOPLACE_MAX_JOBS_PER_CLASS)
                return "its class has as many jobs placed by rule as a class may have";
        now = now_usec(CLOCK_MONOTONIC);
        a->tokens += (double) (now - a->tokens_usec) * AUTOPLACE_RATE / 1e6;
        if (a->tokens > AUTOPLACE_BURST)
                a->tokens = AUTOPLACE_BURST;
        a->tokens_usec = now;
        if (a->tokens < 1)
                return "users' processes are placed by rule at most " RATE_TEXT(AUTOPLACE_RATE) " a second";
        a->tokens -= 1;
        return NULL;
}

/* A refusal for a bound, logged once a minute with the number since. */
static void refused_for_bounds(struct place_rules *a, const struct rules_process *p, const char *why) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        a->refused++;
        if (a->refused_logged_usec && now - a->refused_logged_usec < 60 * 1000000ULL)
                return;
        a->refused_logged_usec = now;
        action_log_add(a->log, LOG_LEVEL_WARNING,
                       "Process %d of uid %u is not placed by rule: %s (%" PRIu64 " so far; said once a minute)",
                       (int) p->pid, (unsigned) p->uid, why, a->refused);
}

static void place(struct place_rules *a, struct candidate *c, int pidfd, const struct rules_process *p,
                  const struct rules_match *m, struct execperm_hold **hold) {
        struct place_rules_placing *pp = calloc(1, sizeof(*pp));
        int r;

        if (!pp) {
                log_warning("Cannot place process %d: out of memory", (int) c->pid);
                return;
        }
        *pp = (struct place_rules_placing){
                .a = a, .pid = c->pid, .uid = p->uid, .class = m->class, .cgroup = strdup(strempty(p->cgroup))
        };
        rules_job_name(p->exe, p->cmdline, pp->name, sizeof(pp->name));
        if (rules_describe(m, pp->by, sizeof(pp->by)) < 0)
                snprintf(pp->by, sizeof(pp->by), "rule %s (%s:%u)", m->kind, m->class->source, m->rule->line);
        /* Ended already (killed while its exec was held, say): nothing to place, and no job that would end at
         * once (the pidfd holds the process that matched). */
        r = pidfd >= 0 && !proc_pidfd_alive(pidfd)
                    ? -ESRCH
                    : jobs_place_async(a->jobs, m->class, NULL, pp->name, p->uid, pp->by, c->pid, pidfd, on_placed, pp);
        if (r < 0) {
                if (r == -ESRCH)
                        log_debug("Rules: process %d (%s) ended before it could be placed", (int) c->pid, pp->name);
                else
                        action_log_add(a->log, LOG_LEVEL_WARNING, "Cannot place process %d (%s) by %s: %s",
                                       (int) c->pid, pp->name, pp->by, strerror(-r));
                free(pp->cgroup);
                free(pp);
                return;
        }
        LIST_PREPEND(a->placings, pp);
        if (hold) { /* the exec waits until the job is there */
                pp->hold = *hold;
                *hold = NULL;
        }
}

/* The placements go on without us (their jobs are made); the execs they hold go on now. */
static void placings_drop(struct place_rules *a) {
        while (a->placings) {
                jobs_place_forget(a->jobs, a->placings);
                placing_free(a->placings);
        }
}

static void consider(struct place_rules *a, pid_t pid, const char *exe, bool scan, struct execperm_hold **hold) {
        _cleanup_close_ int pidfd = -1;
        struct candidate c = {};
        struct rules_process p;
        struct rules_match m;
        const char *why;
        char confined[256];
        const struct rules_exclusions x = {
                .self = getpid(), .job_root = a->backend->root, .protected = &a->protected, .units = units_policy(a)
        };

        /* Every exec costs this much; only a program some rule names costs more. */
        if (jobs_placing(a->jobs, pid))
                return; /* a job for it is on its way (an exec seen twice: fanotify and the proc connector) */
        if (!candidate_read(a, pid, exe, &c))
                return;
        /* Held from here: what is read next is about this process, not one that reused its pid. */
        pidfd = proc_pidfd_open(pid);
        if (pidfd < 0 || !candidate_read(a, pid, exe, &c) || proc_ids(a->procdir, pid, &c.ids) < 0)
                return;
        if (!proc_pidfd_alive(pidfd))
                goto done;
        p = candidate_process(a, &c);
        if (!rules_match_process(a->policy, &p, &m))
                goto done;
        /* The cheap refusals first, then the bounds, and only then what confines it (cgroupfs reads and BPF
         * queries): a user's flood must cost the daemon little. */
        why = rules_excluded(&x, &p, m.class);
        if (!why && scan && parent_matches(a, p.ppid))
                goto done;
        if (!why) {
                const char *over = over_bounds(a, &p, m.class);

                if (over) {
                        refused_for_bounds(a, &p, over);
                        goto done;
                }
                p.confined = confinement(a, &p, m.class, confined, sizeof(confined));
                if (p.confined)
                        why = rules_excluded(&x, &p, m.class);
        }
        if (why) {
                log_debug("Process %d (%s, uid %u, in /%s) matches class %s, left alone: %s%s%s", (int) pid,
                          p.exe ?: p.cmdline, (unsigned) p.uid, p.cgroup, m.class->name, why, p.confined ? ": " : "",
                          p.confined ?: "");
                goto done;
        }
        place(a, &c, pidfd, &p, &m, hold);
done:
        proc_ids_done(&c.ids);
}

/* ---- events ---- */

static void on_exec(void *userdata, pid_t pid, pid_t tgid) {
        consider(userdata, tgid, NULL, false, NULL);
}

static void on_exec_held(void *userdata, pid_t pid, const char *exe, struct execperm_hold **hold) {
        consider(userdata, pid, exe, false, hold);
}

/*
 * A scan of /proc, SCAN_STEP entries a turn of the loop: on a machine with
 * thousands of processes (or a user's flood of them), status and the rest
 * go on meanwhile.  A scan asked for while one runs starts again.
 */
#define SCAN_STEP 128

static void rescan_soon(struct place_rules *a);

static void scan_stop(struct place_rules *a) {
        a->scan_source = sd_event_source_disable_unref(a->scan_source);
        if (a->scan_dir)
                closedir(a->scan_dir);
        a->scan_dir = NULL;
}

static int on_scan_step(sd_event_source *s, void *userdata) {
        struct place_rules *a = userdata;
        struct dirent *de = NULL;

        a->scanning = true;
        for (unsigned n = 0; n < SCAN_STEP && (de = readdir(a->scan_dir)); n++) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);

                if (*end == '\0' && pid > 1)
                        consider(a, (pid_t) pid, NULL, true, NULL);
        }
        a->scanning = false;
        if (!de) {
                scan_stop(a);
                a->rescanned_usec = now_usec(CLOCK_MONOTONIC);
                if (a->lost_while_scanning) {
                        a->lost_while_scanning = false;
                        rescan_soon(a);
                }
        }
        return 0;
}

static void scan(struct place_rules *a) {
        scan_stop(a);
        a->scan_dir = opendir(a->procdir);
        if (!a->scan_dir) {
                log_warning_errno(errno, "Cannot scan %s for processes the rules name: %m", a->procdir);
                return;
        }
        if (sd_event_add_defer(a->event, &a->scan_source, on_scan_step, a) < 0) {
                scan_stop(a);
                return;
        }
        (void) sd_event_source_set_description(a->scan_source, "rules-scan");
        (void) sd_event_source_set_enabled(a->scan_source, SD_EVENT_ON); /* each turn until done */
}

static int on_rescan(sd_event_source *s, uint64_t usec, void *userdata) {
        struct place_rules *a = userdata;

        a->rescan = sd_event_source_disable_unref(a->rescan);
        scan(a);
        return 0;
}

/*
 * Events were lost: a scan of /proc finds what they said.  At most one
 * every AUTOPLACE_RESCAN_USEC after the last one ended: any user can
 * overflow the kernel's buffer (a loop of renames or execs), and each scan
 * reads every process.
 */
static void rescan_soon(struct place_rules *a) {
        uint64_t at = a->rescanned_usec ? a->rescanned_usec + AUTOPLACE_RESCAN_USEC : 0;

        if (a->scan_dir) {
                a->lost_while_scanning = true; /* what started behind the scan's position: another scan after it */
                return;
        }
        if (a->rescan)
                return;
        action_log_add(a->log, LOG_LEVEL_WARNING,
                       "Proc connector: exec events were lost (the kernel's buffer overflowed): scanning /proc%s",
                       at > now_usec(CLOCK_MONOTONIC) ? " shortly (one scan every 5 s at most)" : "");
        if (sd_event_add_time(a->event, &a->rescan, CLOCK_MONOTONIC, at, 0, on_rescan, a) >= 0)
                (void) sd_event_source_set_description(a->rescan, "rules-rescan");
}

static void on_lost(void *userdata) {
        struct place_rules *a = userdata;

        a->lost++;
        rescan_soon(a);
}

/* ---- units ---- */

static struct place_rules_unit *unit_find(struct place_rules *a, const char *unit) {
        for (size_t i = 0; i < a->n_units; i++)
                if (streq(a->units[i].unit, unit))
                        return &a->units[i];
        return NULL;
}

static void unit_forget(struct place_rules *a, struct place_rules_unit *u) {
        free(u->unit);
        free(u->class);
        *u = a->units[--a->n_units];
}

/* Whether the unit's cgroup holds a process now. */
static bool unit_populated(struct place_rules *a, const char *path) {
        _cleanup_free_ char *events = NULL;
        bool populated = false;

        return cgroup_read_file(a->backend->engine, path, "cgroup.events", &events) >= 0 &&
               cgv_parse_events(events, &populated, NULL) >= 0 && populated;
}

/*
 * A unit that runs is a job of its class (a unit that stopped ends its job by
 * itself).  Active with an empty cgroup is no job: its processes left it (an
 * exe: rule moved its main program into a scope before a reload added the
 * unit's units: rule), and a job there would end a second later, a phantom.
 * The unit's next change of state (started, active, stopped) brings it here
 * again with systemd's event; a oneshot caught at a reload in the
 * milliseconds between two of its commands is no job until then.
 */
static void unit_check(struct place_rules *a, const char *unit, const struct rules_match *m) {
        _cleanup_free_ char *path = NULL;
        char by[CGROUP_JOB_BY_MAX + 1];
        int r;

        if (jobs_find_unit(a->jobs, unit) || backend_unit_path(a->backend, unit, &path) < 0 || !unit_populated(a, path))
                return;
        (void) rules_describe(m, by, sizeof(by));
        r = jobs_add_unit(a->jobs, m->class, unit, path, by, NULL);
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "Unit %s: cannot follow it as a job of class %s: %m", unit, m->class->name);
}

static void unit_consider(struct place_rules *a, const char *unit) {
        struct place_rules_unit *u = unit_find(a, unit);
        struct rules_match m;
        int r;

        if (!rules_match_unit(a->policy, unit, &m))
                return;
        if (!u || !streq(u->class, m.class->name)) {
                /* Its io entries where their devices are now (the policy's as loaded, if out of memory). */
                const struct pw_job_class *c = (a->classes ? classes_find(a->classes, m.class->name) : NULL) ?: m.class;

                r = backend_unit_apply(a->backend, unit, c);
                if (r < 0) {
                        action_log_add(a->log, LOG_LEVEL_WARNING, "Unit %s: cannot give it the limits of class %s: %s",
                                       unit, m.class->name, strerror(-r));
                        return;
                }
                if (!u) {
                        if (GROW(a->units, a->allocated_units, a->n_units + 1) < 0)
                                return;
                        u = &a->units[a->n_units++];
                        *u = (struct place_rules_unit){ .unit = strdup(unit) };
                }
                free(u->class);
                u->class = strdup(m.class->name);
                if (!u->unit || !u->class) {
                        unit_forget(a, u);
                        return;
                }
                action_log_add(a->log, LOG_LEVEL_INFO, "Unit %s carries the limits of class %s (rule %s, %s:%u)", unit,
                               m.class->name, m.rule->text, m.class->source, m.rule->line);
        }
        unit_check(a, unit, &m);
}

static void on_unit_event(void *userdata, const char *unit) {
        unit_consider(userdata, unit);
}

static void on_unit_found(void *userdata, const char *unit) {
        unit_consider(userdata, unit);
}

/* A unit whose rule left the policy gets its own values back and is no job any more. */
static void unit_release(struct place_rules *a, struct place_rules_unit *u) {
        struct job *j = jobs_find_unit(a->jobs, u->unit);
        int r = backend_unit_restore(a->backend, u->unit);

        if (r < 0)
                log_warning_errno(r, "Unit %s: cannot give it its own values back: %m", u->unit);
        else
                action_log_add(a->log, LOG_LEVEL_INFO, "Unit %s: its own values are sent back (no rule names it now)",
                               u->unit);
        if (j)
                jobs_forget(a->jobs, j);
        unit_forget(a, u);
}

static void units_update(struct place_rules *a) {
        _cleanup_free_ const char **patterns = NULL;
        size_t n = 0, total = 0;
        struct rules_match m;

        for (size_t i = 0; i < a->policy->n_classes; i++)
                total += a->policy->classes[i].match.units.n;
        for (size_t i = a->n_units; i-- > 0;)
                if (!rules_match_unit(a->policy, a->units[i].unit, &m))
                        unit_release(a, &a->units[i]);
        if (total == 0)
                return;
        if (!backend_places_units(a->backend)) {
                action_log_add(a->log, LOG_LEVEL_WARNING,
                               "units: rules need the systemd backend (systemd is not PID 1 here, or backend: "
                               "cgroupfs is set): no unit is placed; name the programs with exe: or cmdline:");
                return;
        }
        patterns = calloc(total, sizeof(char *));
        if (!patterns)
                return;
        for (size_t i = 0; i < a->policy->n_classes; i++)
                for (size_t k = 0; k < a->policy->classes[i].match.units.n; k++)
                        patterns[n++] = a->policy->classes[i].match.units.v[k].text;
        if (!a->watching_units && backend_units_watch(a->backend, on_unit_event, a) >= 0)
                a->watching_units = true;
        if (backend_units_find(a->backend, patterns, n, on_unit_found, a) < 0)
                log_warning("Cannot list the units the units: rules name");
}

void place_rules_stop(struct place_rules *a, bool restore) {
        while (restore && a->n_units > 0)
                unit_release(a, &a->units[a->n_units - 1]);
}

/* ---- following the policy ---- */

/* What rules leave alone, copied from the policy at each update (nothing waits for PID 1: auth.h).  Without it
 * no exe: or cmdline: rule acts: they would not know what to leave alone. */
static void protected_find(struct place_rules *a) {
        auth_protected_done(&a->protected);
        if (auth_protected_copy(a->policy, &a->protected) < 0) {
                log_error("Rules: out of memory: no exe: or cmdline: rule places a process until the next reload");
                a->need_exe = a->need_cmdline = false;
        }
}

/* Exec permission events for the exe: rules' programs, where fanotify may be used. */
static void perm_update(struct place_rules *a) {
        unsigned marked = 0;
        int r;

        if (!a->need_exe) {
                placings_drop(a); /* they may hold execs of a->perm */
                a->perm = execperm_free(a->perm);
                return;
        }
        if (!a->perm) {
                r = execperm_new(a->event, on_exec_held, a, &a->perm);
                if (r < 0) {
                        log_info(
                                "Exec permission events cannot be used (%s; they need CAP_SYS_ADMIN): programs "
                                "named by exe: are placed just after their exec",
                                strerror(-r));
                        return;
                }
        }
        (void) execperm_clear(a->perm);
        for (size_t i = 0; i < a->n_programs; i++) {
                const struct place_rules_program *pr = &a->programs[i];

                /* A link others share is not marked: the mark would hold every name's exec. */
                if (pr->info.kind != PROGRAM_MISSING && !program_holdable(&pr->info))
                        continue;
                r = execperm_mark(a->perm, pr->path);
                if (r < 0)
                        log_debug("Not marked for exec permission events: %s: %s", pr->path, strerror(-r));
                else
                        marked++;
        }
        log_info("%u program%s named by exe: rules held at their exec until placed (exec permission events)", marked,
                 marked == 1 ? "" : "s");
}

/*
 * The proc connector, where it is needed: for cmdline: rules, and for exe:
 * rules when exec permission events cannot hold their programs.  Otherwise
 * the other execs of the machine cost the daemon nothing at all.
 */
static void events_update(struct place_rules *a) {
        bool need = a->need_cmdline || (a->need_exe && (!a->perm || a->unheld_scripts));
        int r;

        if (!need) {
                if (a->events)
                        log_info("Exec events are not followed any more: no rule needs them");
                a->events = procevents_free(a->events);
                return;
        }
        if (a->events)
                return;
        r = procevents_new(a->event, on_exec, on_lost, a, &a->events);
        if (r < 0)
                action_log_add(a->log, LOG_LEVEL_ERR,
                               "exe: and cmdline: rules cannot follow new processes: the proc connector cannot be "
                               "used (%s; it needs CAP_NET_ADMIN in the initial network namespace); only processes "
                               "running at start and at reloads are placed",
                               strerror(-r));
        else
                log_info("Following exec events (proc connector) for %s",
                         a->need_cmdline ? "cmdline: rules" : "exe: rules");
}

void place_rules_update(struct place_rules *a) {
        units_update(a);
        a->need_exe = rules_need_exe(a->policy);
        a->need_cmdline = rules_need_cmdline(a->policy);
        programs_update(a);
        if (a->need_exe || a->need_cmdline) {
                protected_find(a);
                a->cgroup_ns = cgroup_ns_of(a->procdir, 0);
        }
        perm_update(a);
        events_update(a);
        if (a->need_exe || a->need_cmdline)
                scan(a);
}

void place_rules_done(struct place_rules *a) {
        for (size_t i = 0; i < a->n_units; i++) {
                free(a->units[i].unit);
                free(a->units[i].class);
        }
        a->units = mfree(a->units);
        a->n_units = 0;
        a->events = procevents_free(a->events);
        placings_drop(a);
        a->perm = execperm_free(a->perm);
        a->rescan = sd_event_source_disable_unref(a->rescan);
        scan_stop(a);
        auth_protected_done(&a->protected);
        programs_done(a);
}
