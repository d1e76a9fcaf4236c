/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evidence.h"
#include "log.h"
#include "observe.h"
#include "pressure.h"
#include "proc.h"
#include "rules.h"
#include "util.h"

struct observe_sample {
        char name[POLICY_NAME_MAX + 1];
        struct governor_sample s;
};

struct observe_cgroup {
        char *path; /* below the mount, without the leading '/' */
        struct evidence_counters c;
        /* This window: what it did, whether it streamed; and for work without a unit, its processes with the
         * most I/O, read in every window it streamed (a process that ends is then still named). */
        struct evidence_delta d;
        bool streamed, have_io;
        struct evidence_program programs[EVIDENCE_PROGRAMS];
        size_t n_programs;
};

static uint64_t page_size(void) {
        long n = sysconf(_SC_PAGESIZE);

        return n > 0 ? (uint64_t) n : 4096;
}

static uint64_t thread_cpu_usec(void) {
        return now_usec(CLOCK_THREAD_CPUTIME_ID);
}

static void cgroups_free(struct observe_cgroup *c, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(c[i].path);
        free(c);
}

static void apps_free(struct observe_app *a, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(a[i].path);
        free(a);
}

static void strv_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* ---- the episodes ---- */

static void round_cancel(struct observe *o);

static void episode_close(struct observe *o) {
        json_object *e = TAKE_PTR(o->open);

        if (!e)
                return;
        if (!o->have_history || history_add(&o->episodes, e) < 0)
                json_object_put(e);
}

int observe_init(struct observe *o, sd_event *event, struct cgroup_engine *engine, observe_scope_fn scope,
                 void *userdata, const char *path, uint64_t max_age_sec) {
        int r;

        *o = (struct observe){ .event = event,
                               .engine = engine,
                               .procdir = o->procdir ?: PROC_ROOT,
                               .scope = scope,
                               .userdata = userdata,
                               .period_usec = o->period_usec ?: OBSERVE_PERIOD_USEC,
                               .slice_usec = o->slice_usec,
                               .next_id = 1 };
        r = history_init(&o->episodes, event, path, OBSERVE_EPISODES, max_age_sec);
        if (r < 0)
                return r;
        o->have_history = true;
        /* Ids go on from the newest kept. */
        for (size_t i = 0; i < json_object_array_length(o->episodes.jobs); i++) {
                json_object *id;

                if (json_object_object_get_ex(json_object_array_get_idx(o->episodes.jobs, i), "id", &id) &&
                    (uint64_t) json_object_get_int64(id) >= o->next_id)
                        o->next_id = (uint64_t) json_object_get_int64(id) + 1;
        }
        return 0;
}

void observe_done(struct observe *o) {
        o->timer = sd_event_source_disable_unref(o->timer);
        round_cancel(o);
        episode_close(o);
        if (o->have_history)
                history_done(&o->episodes);
        cgroups_free(o->cgroups, o->n_cgroups);
        free(o->apps);
        *o = (struct observe){};
}

json_object *observe_episodes(const struct observe *o) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; o->have_history && i < json_object_array_length(o->episodes.jobs); i++)
                json_object_array_add(a, json_object_get(json_object_array_get_idx(o->episodes.jobs, i)));
        if (o->open)
                json_object_array_add(a, json_object_get(o->open));
        return a;
}

json_object *observe_summary(const struct observe *o, size_t max) {
        json_object *episodes = observe_episodes(o), *s = evidence_summary(episodes, max);

        json_object_put(episodes);
        return s;
}

json_object *observe_status(const struct observe *o) {
        json_object *s = json_object_new_object();
        size_t n = o->have_history ? json_object_array_length(o->episodes.jobs) : 0;

        json_object_object_add(s, "on", json_object_new_boolean(o->timer != NULL));
        json_object_object_add(s, "period_s", json_object_new_int64((int64_t) (o->period_usec / 1000000)));
        json_object_object_add(s, "windows", json_object_new_int64((int64_t) o->windows));
        json_object_object_add(s, "harmful", json_object_new_int64((int64_t) o->harmful));
        json_object_object_add(s, "cgroups", json_object_new_int64((int64_t) o->n_cgroups));
        json_object_object_add(s, "cpu_us", json_object_new_int64((int64_t) o->cpu_usec));
        json_object_object_add(s, "episodes", json_object_new_int64((int64_t) (n + (o->open != NULL))));
        return s;
}

/* ---- the tree ---- */

struct walk {
        struct observe_app *apps;
        size_t n_apps;
        char **skip;
        size_t n_skip;
        struct observe_cgroup *found;
        size_t n_found, allocated;
        bool truncated;
};

static bool skipped(const struct walk *w, const char *path) {
        for (size_t i = 0; i < w->n_skip; i++)
                if (path_under(path, w->skip[i]))
                        return true;
        for (size_t i = 0; i < w->n_apps; i++)
                if (path_under(path, w->apps[i].path))
                        return true;
        return false;
}

/* Above a protected application: its counters hold the application's, so never a candidate itself. */
static bool above_app(const struct walk *w, const char *path) {
        for (size_t i = 0; i < w->n_apps; i++)
                if (path_under(w->apps[i].path, path))
                        return true;
        return false;
}

static void candidate(struct observe *o, struct walk *w, const char *path) {
        _cleanup_free_ char *stat = NULL, *io = NULL;

        if (w->n_found >= OBSERVE_CGROUPS) {
                w->truncated = true;
                return;
        }
        if (GROW(w->found, w->allocated, w->n_found + 1) < 0)
                return;
        /* Either may be missing: a controller not enabled for it (systemd enables io only on request). */
        (void) cgroup_read_file(o->engine, path, "memory.stat", &stat);
        (void) cgroup_read_file(o->engine, path, "io.stat", &io);
        if (!stat && !io)
                return; /* gone, or nothing to read */
        /* Whole: the first window after a start only takes counters, and the next reads the rest of it. */
        w->found[w->n_found] = (struct observe_cgroup){ .path = strdup(path) };
        if (!w->found[w->n_found].path)
                return;
        evidence_counters_parse(stat, io, &w->found[w->n_found].c);
        w->n_found++;
}

/* The cgroups below path (dir, opened on it); returns how many subdirectories it has. */
static size_t walk(struct observe *o, struct walk *w, int dir, const char *path, unsigned depth) {
        DIR *d = fdopendir(dir);
        struct dirent *de;
        size_t n = 0;

        if (!d) {
                close(dir);
                return 0;
        }
        while ((de = readdir(d))) {
                _cleanup_free_ char *child = NULL;
                char unit[256];
                enum evidence_kind kind;

                if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                n++;
                if (asprintf(&child, "%s%s%s", path, *path ? "/" : "", de->d_name) < 0)
                        continue;
                if (skipped(w, child))
                        continue;
                kind = evidence_classify(child, true, unit, sizeof(unit));
                if (kind == EVIDENCE_SKIP)
                        continue;
                if (kind == EVIDENCE_CANDIDATE && !above_app(w, child)) {
                        candidate(o, w, child);
                        continue;
                }
                if (depth < OBSERVE_DEPTH) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                        if (sub >= 0 && walk(o, w, sub, child, depth + 1) > 0)
                                continue;
                } else
                        w->truncated = true;
                /* No children: a plain cgroup is looked at itself (a slice is not). */
                if (!above_app(w, child) && evidence_classify(child, false, unit, sizeof(unit)) == EVIDENCE_CANDIDATE)
                        candidate(o, w, child);
        }
        closedir(d);
        return n;
}

static int by_path(const void *a, const void *b) {
        return strcmp(((const struct observe_cgroup *) a)->path, ((const struct observe_cgroup *) b)->path);
}

static const struct observe_cgroup *prev_of(const struct observe *o, const char *path) {
        struct observe_cgroup key = { .path = (char *) path };

        return o->cgroups ? bsearch(&key, o->cgroups, o->n_cgroups, sizeof(key), by_path) : NULL;
}

/* ---- the programs of a suspect that has no unit a rule could name ---- */

static void programs(struct observe *o, const char *path, struct evidence_suspect *s) {
        /* s collects them: evidence_add_program() keeps the largest */
        _cleanup_free_ char *procs = NULL;
        const char *p;
        size_t n = 0;

        if (cgroup_read_file(o->engine, path, "cgroup.procs", &procs) < 0)
                return;
        for (p = procs; *p && n < OBSERVE_PROCESSES; p += strcspn(p, "\n"), p += *p == '\n', n++) {
                struct evidence_program prog = { .uid = -1 };
                char exe[PATH_MAX], args[sizeof(prog.cmdline)];
                uint64_t read = 0, written = 0;
                struct proc_ids ids;
                size_t len = 0;
                pid_t pid = (pid_t) strtol(p, NULL, 10);

                /* A process with little I/O of its own (the session's su or shell) is not what streamed. */
                if (pid <= 0 || proc_io(o->procdir, pid, &read, &written) < 0 || read + written < EVIDENCE_STREAM_MIN ||
                    proc_exe(o->procdir, pid, exe, sizeof(exe)) < 0)
                        continue;
                if (proc_args(o->procdir, pid, args, sizeof(args), &len) >= 0)
                        rules_join_cmdline(args, len);
                else
                        args[0] = '\0';
                if (proc_ids(o->procdir, pid, &ids) >= 0) {
                        prog.uid = ids.uid[1];
                        proc_ids_done(&ids);
                }
                rules_program_path(exe, args, prog.exe, sizeof(prog.exe));
                snprintf(prog.cmdline, sizeof(prog.cmdline), "%s", args);
                prog.bytes = read + written;
                evidence_add_program(s, &prog);
        }
}

/* ---- one window ---- */

/* A window under way: the applications are read in slices (five files each: with 180 of them, one window held the
 * loop 100-120 ms under emulation), then the tree is walked and the window ends, on the loop's later turns. */
struct observe_round {
        struct walk w;
        struct observe_sample *samples;
        struct evidence_harm *harms;
        size_t next; /* the next application to read */
        size_t n_samples, n_harms;
        uint64_t now; /* seconds since the epoch, when it began */
};

static void round_free(struct observe_round *r) {
        if (!r)
                return;
        cgroups_free(r->w.found, r->w.n_found);
        apps_free(r->w.apps, r->w.n_apps);
        strv_free(r->w.skip, r->w.n_skip);
        free(r->samples);
        free(r->harms);
        free(r);
}

static struct observe_round *round_begin(struct observe *o) {
        struct observe_round *r = calloc(1, sizeof(*r));

        if (!r || o->scope(o->userdata, &r->w.apps, &r->w.n_apps, &r->w.skip, &r->w.n_skip) < 0) {
                free(r);
                log_error("Observation: out of memory");
                return NULL;
        }
        r->now = now_usec(CLOCK_REALTIME) / 1000000;
        r->samples = calloc(r->w.n_apps ?: 1, sizeof(*r->samples));
        r->harms = calloc(r->w.n_apps ?: 1, sizeof(*r->harms));
        if (!r->samples || !r->harms) {
                round_free(r);
                log_error("Observation: out of memory");
                return NULL;
        }
        return r;
}

/* Reads the applications from the next one on, at least one, until all are read (true) or the monotonic clock
 * passes until. */
static bool round_sample(struct observe *o, struct observe_round *r, uint64_t until) {
        while (r->next < r->w.n_apps) {
                struct observe_sample *now = &r->samples[r->n_samples], *prev = NULL;
                const struct observe_app *a = &r->w.apps[r->next++];

                if (pressure_sample_read(o->engine, a->path, &now->s) >= 0) {
                        snprintf(now->name, sizeof(now->name), "%s", a->name);
                        for (size_t k = 0; k < o->n_apps && !prev; k++)
                                if (streq(o->apps[k].name, now->name))
                                        prev = &o->apps[k];
                        if (prev && evidence_harmed(&prev->s, &now->s, page_size(), &r->harms[r->n_harms])) {
                                snprintf(r->harms[r->n_harms].name, sizeof(r->harms[r->n_harms].name), "%s", now->name);
                                r->n_harms++;
                        }
                        r->n_samples++;
                }
                if (r->next < r->w.n_apps && now_usec(CLOCK_MONOTONIC) >= until)
                        return false;
        }
        return true;
}

/* What each cgroup did in this window; a cgroup that was not there at the last window is new, and counts
 * from nothing.  Work without a unit a rule could name that streamed: its processes, added to those it had. */
static void windows(struct observe *o, struct walk *w) {
        static const struct evidence_counters none = { .have_memory = true, .have_io = true };

        for (size_t i = 0; i < w->n_found; i++) {
                struct observe_cgroup *c = &w->found[i];
                const struct observe_cgroup *prev = prev_of(o, c->path);
                struct evidence_suspect procs = {};
                char unit[256];

                c->streamed = evidence_window(prev ? &prev->c : &none, &c->c, page_size(), &c->d);
                c->have_io = c->c.have_io && (!prev || prev->c.have_io);
                if (!c->streamed)
                        continue;
                (void) evidence_classify(c->path, false, unit, sizeof(unit));
                if (unit[0])
                        continue;
                for (size_t k = 0; prev && k < prev->n_programs; k++)
                        evidence_add_program(&procs, &prev->programs[k]);
                programs(o, c->path, &procs);
                memcpy(c->programs, procs.programs, sizeof(c->programs));
                c->n_programs = procs.n_programs;
        }
}

static void suspect_of(const struct observe_cgroup *c, uint64_t first, struct evidence_suspect *x) {
        char unit[256];

        snprintf(x->cgroup, sizeof(x->cgroup), "/%s", c->path);
        (void) evidence_classify(c->path, false, unit, sizeof(unit));
        snprintf(x->unit, sizeof(x->unit), "%s", unit);
        x->uid = evidence_path_uid(c->path);
        x->have_io = c->have_io;
        x->d = c->d;
        x->first = first;
        memcpy(x->programs, c->programs, sizeof(x->programs));
        x->n_programs = c->n_programs;
}

/* What streamed in this window; and, when the last window harmed no one, what streamed in that one: memory
 * fills before pages are taken from anyone, so the losses come after the streaming that caused them, and a
 * copy that ended as they began (its cgroup gone) is named all the same.  Nothing is counted twice: a
 * harmful window's streaming is in the episode already. */
static void suspects(struct observe *o, const struct walk *w, const struct evidence_harm *harms, size_t n_harms,
                     uint64_t start, uint64_t end) {
        size_t before = o->last_harmful ? 0 : o->n_cgroups, streamed = 0, n = 0;
        _cleanup_free_ struct evidence_suspect *s = NULL;
        bool made;

        /* Counted first: a suspect is 2 KiB, and a window looks at up to OBSERVE_CGROUPS cgroups. */
        for (size_t i = 0; i < w->n_found; i++)
                streamed += w->found[i].streamed;
        for (size_t i = 0; i < before; i++)
                streamed += o->cgroups[i].streamed;
        s = calloc(streamed ?: 1, sizeof(*s));
        if (!s) {
                log_error("Observation: out of memory");
                return;
        }
        for (size_t i = 0; i < w->n_found; i++)
                if (w->found[i].streamed)
                        suspect_of(&w->found[i], start, &s[n++]);
        for (size_t i = 0; i < before; i++)
                if (o->cgroups[i].streamed)
                        suspect_of(&o->cgroups[i], o->prev_realtime, &s[n++]);
        n = evidence_rank(s, n);
        made = !o->open;
        if (evidence_episode_add(&o->open, o->next_id, start, end, harms, n_harms, s, n) < 0) {
                log_error("Observation: out of memory");
                return;
        }
        o->next_id += made;
        if (!o->truncated_said && w->truncated) {
                log_info("Observation: more than %d cgroups, or deeper than %d levels: the rest is not looked at",
                         OBSERVE_CGROUPS, OBSERVE_DEPTH);
                o->truncated_said = true;
        }
}

/* The tree walked and the window ended: its harms named, the counters kept for the next.  r is freed. */
static void round_end(struct observe *o, struct observe_round *r) {
        struct walk *w = &r->w;
        int root;

        root = open(cgroup_engine_mount(o->engine), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root >= 0)
                (void) walk(o, w, root, "", 1);
        if (w->n_found > 1) /* none found: found is NULL, which qsort() may not be given */
                qsort(w->found, w->n_found, sizeof(*w->found), by_path);
        /* The first window (at start, or when observation is switched on) only takes the counters. */
        if (o->last_realtime > 0)
                windows(o, w);

        if (r->n_harms > 0 && o->last_realtime > 0) {
                o->harmful++;
                o->calm = 0;
                suspects(o, w, r->harms, r->n_harms, o->last_realtime, r->now);
        } else if (o->open && ++o->calm >= OBSERVE_EPISODE_GAP)
                episode_close(o);

        free(o->apps);
        o->apps = TAKE_PTR(r->samples);
        o->n_apps = r->n_samples;
        cgroups_free(o->cgroups, o->n_cgroups);
        o->cgroups = TAKE_PTR(w->found);
        o->n_cgroups = w->n_found;
        w->n_found = 0;
        o->last_harmful = r->n_harms > 0 && o->last_realtime > 0;
        o->prev_realtime = o->last_realtime;
        o->last_realtime = r->now;
        o->windows++;
        round_free(r);
}

void observe_window(struct observe *o) {
        uint64_t cpu = thread_cpu_usec();
        struct observe_round *r = round_begin(o);

        if (r) {
                (void) round_sample(o, r, UINT64_MAX);
                round_end(o, r);
        }
        o->cpu_usec += counter_since(thread_cpu_usec(), cpu);
}

/* A window's next slice: at most OBSERVE_SLICE_USEC of reading, then the loop's other work. */
static int on_step(sd_event_source *s, void *userdata) {
        struct observe *o = userdata;
        uint64_t cpu = thread_cpu_usec();

        if (o->round && round_sample(o, o->round, now_usec(CLOCK_MONOTONIC) + (o->slice_usec ?: OBSERVE_SLICE_USEC)))
                round_end(o, TAKE_PTR(o->round));
        o->cpu_usec += counter_since(thread_cpu_usec(), cpu);
        /* A defer source that is ONESHOT is off after its dispatch: on again while the window goes on. */
        return sd_event_source_set_enabled(s, o->round ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
}

static void round_cancel(struct observe *o) {
        round_free(TAKE_PTR(o->round));
        o->step = sd_event_source_disable_unref(o->step);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        struct observe *o = userdata;
        uint64_t cpu = thread_cpu_usec();

        /* The last window's slices still run (a loop held far longer than a period): this one is skipped. */
        if (!o->round && (o->round = round_begin(o))) {
                if (!o->step && sd_event_add_defer(o->event, &o->step, on_step, o) >= 0)
                        (void) sd_event_source_set_description(o->step, "observe-step");
                if (o->step)
                        (void) sd_event_source_set_enabled(o->step, SD_EVENT_ONESHOT);
                else { /* out of memory: the window at once */
                        (void) round_sample(o, o->round, UINT64_MAX);
                        round_end(o, TAKE_PTR(o->round));
                }
        }
        o->cpu_usec += counter_since(thread_cpu_usec(), cpu);
        (void) sd_event_source_set_time_relative(s, o->period_usec);
        (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

void observe_update(struct observe *o, bool on, uint64_t max_age_sec) {
        int r;

        if (o->have_history)
                history_set_bounds(&o->episodes, OBSERVE_EPISODES, max_age_sec);
        if (!on) {
                /* Nothing protected: nothing to observe, and the counters would be stale at the next start. */
                o->timer = sd_event_source_disable_unref(o->timer);
                round_cancel(o);
                episode_close(o);
                o->last_realtime = 0;
                return;
        }
        if (o->timer || !o->event)
                return;
        /* A second of slack: the kernel may run it with other timers. */
        r = sd_event_add_time_relative(o->event, &o->timer, CLOCK_MONOTONIC, o->period_usec, UINT64_C(1000000),
                                       on_timer, o);
        if (r < 0) {
                log_warning_errno(r, "Observation: cannot arm its timer (%m): unplaced work is not observed");
                return;
        }
        (void) sd_event_source_set_description(o->timer, "observe");
        observe_window(o); /* the first samples: the next window has something to compare with */
}
