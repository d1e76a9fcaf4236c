/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What `pagewardenctl status` shows: built from the policy and what the kernel has now. */
#include <json-c/printbuf.h>
#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jobs-signal.h"
#include "pressure.h"
#include "proc.h"
#include "protocol.h"
#include "status.h"
#include "units.h"

static json_object *io_json(unsigned major, unsigned minor, uint64_t rbps, uint64_t wbps, uint64_t riops,
                            uint64_t wiops) {
        json_object *o = json_object_new_object();
        char dev[32];

        snprintf(dev, sizeof(dev), "%u:%u", major, minor);
        json_object_object_add(o, "device", json_object_new_string(dev));
        json_object_object_add(o, "read_bps", protocol_limit_json(rbps));
        json_object_object_add(o, "write_bps", protocol_limit_json(wbps));
        json_object_object_add(o, "read_iops", protocol_limit_json(riops));
        json_object_object_add(o, "write_iops", protocol_limit_json(wiops));
        return o;
}

static json_object *configured_json(const struct pw_job_class *c) {
        json_object *o = json_object_new_object(), *io = json_object_new_array();

        json_object_object_add(o, "memory_high", protocol_limit_json(c->memory_high));
        json_object_object_add(o, "memory_max", protocol_limit_json(c->memory_max));
        json_object_object_add(o, "memory_swap_max", protocol_limit_json(c->memory_swap_max));
        json_object_object_add(o, "cpu_weight", json_object_new_uint64(c->cpu_weight));
        for (size_t i = 0; i < c->n_io; i++)
                if (!c->io[i].absent) /* those are in io_waiting */
                        json_object_array_add(io, io_json(c->io[i].major, c->io[i].minor, c->io[i].read_bps,
                                                          c->io[i].write_bps, c->io[i].read_iops, c->io[i].write_iops));
        json_object_object_add(o, "io", io);
        return o;
}

static json_object *in_force_json(struct api *api, const char *class) {
        _cleanup_free_ char *path = backend_class_path(api->backend, class);
        struct cgroup_class_state s;
        json_object *o, *io;

        if (!path || cgroup_class_read(api->backend->engine, path, &s) < 0)
                return NULL; /* json null */
        o = json_object_new_object();
        io = json_object_new_array();
        json_object_object_add(o, "memory_high", protocol_limit_json(s.memory_high));
        json_object_object_add(o, "memory_max", protocol_limit_json(s.memory_max));
        json_object_object_add(o, "memory_swap_max", protocol_limit_json(s.memory_swap_max));
        json_object_object_add(o, "cpu_weight", json_object_new_uint64(s.cpu_weight));
        for (size_t i = 0; i < s.n_io; i++)
                json_object_array_add(io, io_json(s.io[i].major, s.io[i].minor, s.io[i].rbps, s.io[i].wbps,
                                                  s.io[i].riops, s.io[i].wiops));
        json_object_object_add(o, "io", io);
        json_object_object_add(o, "frozen", json_object_new_boolean(s.frozen));
        json_object_object_add(o, "memory_current", json_object_new_uint64(s.memory_current));
        cgroup_class_state_done(&s);
        return o;
}

/* What the governor did to the class since the daemon started. */
static json_object *class_governor_json(const struct govern *g, const char *name) {
        json_object *o = json_object_new_object();
        struct govern_counts n;

        govern_class_counts(g, name, &n);
        json_object_object_add(o, "tightened", json_object_new_uint64(n.tightened));
        json_object_object_add(o, "relaxed", json_object_new_uint64(n.relaxed));
        json_object_object_add(o, "frozen_times", json_object_new_uint64(n.frozen));
        json_object_object_add(o, "undone", json_object_new_uint64(n.undone));
        return o;
}

/* What the class's jobs use: its cgroup's memory.current, and that of each unit a units: rule placed in it
 * (whose cgroup is the unit's own); null when neither can be read. */
static json_object *class_memory_json(struct api *api, const char *name, json_object *in_force) {
        json_object *v = NULL;
        uint64_t total = 0, u;
        bool have = json_object_object_get_ex(in_force, "memory_current", &v);

        if (have)
                total = json_object_get_uint64(v);
        for (const struct job *j = api->jobs->list; j; j = j->next)
                if (j->unit && streq(j->class, name) &&
                    cgroup_read_u64(api->backend->engine, j->path, "memory.current", &u) >= 0) {
                        total += u;
                        have = true;
                }
        return have ? json_object_new_uint64(total) : NULL;
}

static json_object *class_json(struct api *api, const char *name, const struct pw_job_class *c) {
        json_object *o = json_object_new_object(), *in_force = in_force_json(api, name);

        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "in_policy", json_object_new_boolean(c != NULL));
        json_object_object_add(o, "jobs", json_object_new_int64(jobs_in_class(api->jobs, name)));
        json_object_object_add(o, "memory_current", class_memory_json(api, name, in_force));
        json_object_object_add(o, "configured", c ? configured_json(c) : NULL);
        json_object_object_add(o, "in_force", in_force);
        if (c) {
                json_object *waiting = json_object_new_array();

                /* io entries whose device is not there: their limits apply when it appears. */
                for (size_t i = 0; i < c->n_io; i++)
                        if (c->io[i].absent)
                                json_object_array_add(waiting, json_object_new_string(c->io[i].device));
                json_object_object_add(o, "io_waiting", waiting);
        }
        json_object_object_add(o, "governor", class_governor_json(api->govern, name));
        return o;
}

/* uid's user name (user_name_of keeps the last ones: a status lists many jobs of few users); null if none. */
static json_object *user_json(uid_t uid) {
        char name[256];

        return user_name_of(uid, name, sizeof(name)) ? json_object_new_string(name) : NULL;
}

struct status_text;
static void text_free(struct status_text *t);

/* ---- a job's figures (status.h) ---- */

static void figures_read(struct api *api, struct job *j) {
        struct job_figures *f = &j->figures;

        f->have = cgroup_job_read(api->backend->engine, j->path, &f->s) >= 0;
        f->frozen = f->have && jobctl_frozen(api->backend->engine, j->path);
        f->usec = now_usec(CLOCK_MONOTONIC);
}

static bool figures_stale(const struct job *j, uint64_t now) {
        return j->figures.usec == 0 || now - j->figures.usec >= STATUS_FIGURES_FRESH_USEC;
}

/* One slice of the background reading: the stale figures, until STATUS_SLICE_USEC have passed. */
static int on_figures(sd_event_source *s, void *userdata) {
        struct api *api = userdata;
        uint64_t start = now_usec(CLOCK_MONOTONIC);

        for (struct job *j = api->jobs->list; j; j = j->next) {
                if (!figures_stale(j, start))
                        continue;
                figures_read(api, j);
                if (now_usec(CLOCK_MONOTONIC) - start >= STATUS_SLICE_USEC)
                        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT); /* the rest at the next turn */
        }
        return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

/* Before an answer that lists jobs: every job's figures read now while there are few jobs; with many, the
 * stale ones read again in the background (this answer has what there is). */
static void figures_prepare(struct api *api) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool stale = false;

        if (api->jobs->n <= STATUS_READ_ALL_JOBS) {
                for (struct job *j = api->jobs->list; j; j = j->next)
                        figures_read(api, j);
                return;
        }
        for (const struct job *j = api->jobs->list; j && !stale; j = j->next)
                stale = figures_stale(j, now);
        if (!stale)
                return;
        if (!api->figures && sd_event_add_defer(api->event, &api->figures, on_figures, api) >= 0) {
                (void) sd_event_source_set_priority(api->figures, SD_EVENT_PRIORITY_IDLE);
                (void) sd_event_source_set_description(api->figures, "status-figures");
        }
        if (api->figures)
                (void) sd_event_source_set_enabled(api->figures, SD_EVENT_ONESHOT);
        else /* out of memory: read them now, as a small status does */
                for (struct job *j = api->jobs->list; j; j = j->next)
                        figures_read(api, j);
}

void status_done(struct api *api) {
        api->figures = sd_event_source_disable_unref(api->figures);
        text_free(api->jobs_text); /* its waiters are not answered: the daemon stops */
        api->jobs_text = NULL;
}

static json_object *job_json(struct api *api, const struct job *j) {
        json_object *o = json_object_new_object();
        const struct job_figures *f = &j->figures;
        const struct cgroup_job_state *s = &f->s;
        bool have = f->usec && f->have;
        bool mem = have && s->have_memory; /* a systemd scope without limits of its own is no memory cgroup */
        char *cg = NULL;

        json_object_object_add(o, "id", json_object_new_uint64(j->id));
        json_object_object_add(o, "name", json_object_new_string(j->name));
        json_object_object_add(o, "class", json_object_new_string(j->class));
        if (asprintf(&cg, "/%s", j->path) >= 0)
                json_object_object_add(o, "cgroup", json_object_new_string(cg));
        free(cg);
        json_object_object_add(o, "uid", json_object_new_int64(j->uid));
        json_object_object_add(o, "user", user_json(j->uid));
        json_object_object_add(o, "started", json_object_new_uint64(j->started_usec / 1000000));
        json_object_object_add(o, "pids", have ? json_object_new_int64(s->n_procs) : NULL);
        json_object_object_add(o, "memory_current", mem ? json_object_new_uint64(s->memory_current) : NULL);
        json_object_object_add(o, "memory_file", mem ? json_object_new_uint64(s->memory_file) : NULL);
        json_object_object_add(o, "memory_high", mem ? protocol_limit_json(s->memory_high) : NULL);
        json_object_object_add(o, "memory_max", mem ? protocol_limit_json(s->memory_max) : NULL);
        json_object_object_add(o, "io_read_bytes", have && s->have_io ? json_object_new_uint64(s->io_read) : NULL);
        json_object_object_add(o, "io_written_bytes",
                               have && s->have_io ? json_object_new_uint64(s->io_written) : NULL);
        json_object_object_add(o, "figures_age_ms",
                               f->usec ? json_object_new_uint64((now_usec(CLOCK_MONOTONIC) - f->usec) / 1000) : NULL);
        json_object_object_add(o, "class_in_policy",
                               json_object_new_boolean(policy_find_class(api->policy, j->class) != NULL));
        json_object_object_add(o, "state",
                               json_object_new_string(j->releasing ? "ending"
                                                      : f->frozen  ? "frozen"
                                                                   : "running"));
        json_object_object_add(o, "placed_by", j->by[0] ? json_object_new_string(j->by) : NULL);
        json_object_object_add(o, "unit", j->unit ? json_object_new_string(j->unit) : NULL);
        return o;
}

json_object *status_job_json(struct api *api, struct job *j) {
        figures_read(api, j);
        return job_json(api, j);
}

json_object *status_job_placed_json(struct api *api, const struct job *j) {
        return job_json(api, j);
}

static json_object *protect_size_json(const struct pw_protect_size *ps) {
        switch (ps->mode) {
        case PW_PROTECT_AUTO:
                return json_object_new_string("auto");
        case PW_PROTECT_BYTES:
                return json_object_new_uint64(ps->bytes);
        default:
                return NULL;
        }
}

/* NULL when what pr asks for is in force; else what is missing (someone lowered it, or it was not applied yet). */
static json_object *not_in_force(const struct protect *p, const struct pw_protect *pr,
                                 const struct cgroup_protect_result *pres) {
        long page = sysconf(_SC_PAGESIZE);
        char have[32], want[32], text[128];
        uint64_t min, low;

        protect_wanted(p, pr, &min, &low);
        /* The kernel keeps whole pages: 10% of the RAM may be written as a little less. */
        min -= min % (uint64_t) page;
        low -= low % (uint64_t) page;
        if (pres->min >= min && pres->low >= low)
                return NULL;
        units_format_human(pres->min < min ? pres->min : pres->low, have, sizeof(have));
        units_format_human(pres->min < min ? min : low, want, sizeof(want));
        snprintf(text, sizeof(text), "not in force: memory.%s is %s, want %s", pres->min < min ? "min" : "low", have,
                 want);
        return json_object_new_string(text);
}

/* What "auto" estimates the application needs, where that comes from, and what it gets; null while no job
 * runs (or for an entry that is not auto). */
static json_object *auto_json(const struct govern *g, const char *name) {
        const struct governor_auto *a = govern_auto_of(g, name);
        json_object *o;

        if (!a || a->source == GOVERNOR_AUTO_NONE)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "needs", json_object_new_uint64(a->want));
        json_object_object_add(o, "gets", json_object_new_uint64(a->gets));
        json_object_object_add(o, "source", json_object_new_string(governor_auto_source_name(a->source)));
        json_object_object_add(o, "reserve", json_object_new_uint64(g->reserve));
        return o;
}

static json_object *protect_json(struct api *api, const struct pw_protect *pr, struct cgroup_protect_cache *cache) {
        json_object *o = json_object_new_object(), *min = json_object_new_object(), *low = json_object_new_object();
        _cleanup_free_ char *psi_text = NULL, *stat_text = NULL, *path = NULL;
        struct cgroup_protect_result pres;
        uint64_t v;
        int unsupported = backend_protect_path(api->backend, pr, &path) == -EOPNOTSUPP;
        bool exists = false;

        json_object_object_add(o, "name", json_object_new_string(pr->name));
        json_object_object_add(o, "unit", pr->unit ? json_object_new_string(pr->unit) : NULL);
        json_object_object_add(o, "cgroup", pr->cgroup ? json_object_new_string(pr->cgroup) : NULL);
        json_object_object_add(o, "swap", json_object_new_string(pr->swap_deny ? "deny" : "allow"));
        json_object_object_add(min, "configured", protect_size_json(&pr->min));
        json_object_object_add(low, "configured", protect_size_json(&pr->low));
        if (path && cgroup_protect_read(api->backend->engine, path, cache, &pres) >= 0) {
                exists = true;
                json_object_object_add(min, "in_force", json_object_new_uint64(pres.min));
                json_object_object_add(low, "in_force", json_object_new_uint64(pres.low));
                json_object_object_add(min, "effective", json_object_new_uint64(pres.effective_min));
                json_object_object_add(low, "effective", json_object_new_uint64(pres.effective_low));
        } else
                for (json_object *x = min; x; x = x == min ? low : NULL) { /* not there: null, as documented */
                        json_object_object_add(x, "in_force", NULL);
                        json_object_object_add(x, "effective", NULL);
                }
        json_object_object_add(o, "memory_min", min);
        json_object_object_add(o, "memory_low", low);
        json_object_object_add(o, "auto", auto_json(api->govern, pr->name));
        json_object_object_add(o, "memory_current",
                               exists && cgroup_read_u64(api->backend->engine, path, "memory.current", &v) >= 0
                                       ? json_object_new_uint64(v)
                                       : NULL);
        json_object_object_add(o, "swap_current",
                               exists && cgroup_read_u64(api->backend->engine, path, "memory.swap.current", &v) >= 0
                                       ? json_object_new_uint64(v)
                                       : NULL);
        if (exists && cgroup_read_file(api->backend->engine, path, "memory.pressure", &psi_text) >= 0) {
                struct cgv_psi psi;

                if (cgv_parse_psi(psi_text, &psi) >= 0) {
                        json_object *ps = json_object_new_object();

                        json_object_object_add(ps, "some_avg10", json_object_new_double(psi.some_avg10));
                        json_object_object_add(ps, "some_avg60", json_object_new_double(psi.some_avg60));
                        json_object_object_add(ps, "full_avg10", json_object_new_double(psi.full_avg10));
                        json_object_object_add(ps, "full_avg60", json_object_new_double(psi.full_avg60));
                        json_object_object_add(ps, "some_total_us", json_object_new_uint64(psi.some_total));
                        json_object_object_add(ps, "full_total_us", json_object_new_uint64(psi.full_total));
                        json_object_object_add(o, "psi", ps);
                }
        }
        if (!json_object_object_get_ex(o, "psi", NULL))
                json_object_object_add(o, "psi", NULL);
        if (exists && cgroup_read_file(api->backend->engine, path, "memory.stat", &stat_text) >= 0) {
                struct governor_sample s;

                pressure_sample_parse(stat_text, NULL, NULL, NULL, NULL, &s);
                json_object_object_add(o, "refaults", json_object_new_uint64(s.refaults));
                json_object_object_add(o, "majfaults", json_object_new_uint64(s.majfaults));
        } else {
                json_object_object_add(o, "refaults", NULL);
                json_object_object_add(o, "majfaults", NULL);
        }
        json_object_object_add(o, "error",
                               unsupported ? json_object_new_string("unit: needs the systemd backend")
                               : !exists   ? json_object_new_string(!pr->unit ? "cgroup not found"
                                                                    : protect_unit_is_front(api->protect, pr->unit)
                                                                            ? "unit runs no process: a oneshot front "
                                                                                "(RemainAfterExit=yes), "
                                                                                "protect the unit it starts"
                                                                            : "unit not running")
                                           : not_in_force(api->protect, pr, &pres));
        return o;
}

static uint64_t timeval_usec(const struct timeval *tv) {
        return (uint64_t) tv->tv_sec * 1000000 + (uint64_t) tv->tv_usec;
}

/* How long the event loop's dispatches took: what requests, triggers and timers waited at most. */
static json_object *loop_json(const struct loop_stats *s) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "dispatches", json_object_new_uint64(s->dispatches));
        json_object_object_add(o, "longest_us", json_object_new_uint64(s->longest_usec));
        json_object_object_add(o, "longest_at",
                               s->longest_at_usec ? json_object_new_uint64(s->longest_at_usec / 1000000) : NULL);
        json_object_object_add(o, "slow", json_object_new_uint64(s->slow));
        return o;
}

/* The daemon itself: when it started, what it uses, how many jobs ended since. */
static json_object *daemon_json(struct api *api) {
        json_object *o = json_object_new_object();
        struct rusage ru;
        uint64_t rss;

        json_object_object_add(o, "pid", json_object_new_int64(getpid()));
        json_object_object_add(o, "started", json_object_new_uint64(api->started_usec / 1000000));
        json_object_object_add(o, "memory_rss",
                               proc_rss(PROC_ROOT, getpid(), &rss) >= 0 ? json_object_new_uint64(rss) : NULL);
        /* Every thread's (the worker's reclaim too). */
        json_object_object_add(o, "cpu_us",
                               getrusage(RUSAGE_SELF, &ru) == 0
                                       ? json_object_new_uint64(timeval_usec(&ru.ru_utime) + timeval_usec(&ru.ru_stime))
                                       : NULL);
        json_object_object_add(o, "jobs_ended", json_object_new_uint64(api->jobs->n_ended));
        json_object_object_add(o, "jobs_oom_killed", json_object_new_uint64(api->jobs->n_oom_killed));
        json_object_object_add(o, "loop", loop_json(api->loop));
        return o;
}

#define STATUS_UNPLACED 8

static json_object *unplaced_json(struct api *api) {
        json_object *list = observe_summary(api->observe, STATUS_UNPLACED);

        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *s = json_object_array_get_idx(list, i);

                json_object_object_del(s, "programs");
                json_object_object_del(s, "cgroup"); /* a session's: names a login */
        }
        return list;
}

/* ---- the jobs, written one by one ---- */

static void indent(struct printbuf *pb, int level, int flags) {
        const char *unit = flags & JSON_C_TO_STRING_PRETTY_TAB ? "\t" : "  ";

        for (int i = 0; (flags & JSON_C_TO_STRING_PRETTY) && i < level; i++)
                printbuf_memappend(pb, unit, (int) strlen(unit));
}

/* JSON text written at nesting level: after each of its newlines (pretty output only; a JSON string holds none),
 * the indentation json-c gives that level. */
static void append_at_level(struct printbuf *pb, const char *s, int level, int flags) {
        for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1) {
                printbuf_memappend(pb, s, (int) (nl - s + 1));
                indent(pb, level, flags);
        }
        printbuf_memappend(pb, s, (int) strlen(s));
}

/* json-c's serializer of the jobs array: each job's object made, written and freed in turn, with the separators
 * and indentation json-c gives an array's elements. */
static int jobs_to_json_string(json_object *jso, struct printbuf *pb, int level, int flags) {
        struct api *api = json_object_get_userdata(jso);
        bool pretty = flags & JSON_C_TO_STRING_PRETTY, spaced = (flags & JSON_C_TO_STRING_SPACED) && !pretty;
        bool any = false;

        printbuf_strappend(pb, "[");
        if (pretty)
                printbuf_strappend(pb, "\n");
        for (const struct job *j = api->jobs->list; j; j = j->next) {
                json_object *o = job_json(api, j);
                const char *text = o ? json_object_to_json_string_ext(o, flags) : NULL;

                if (!text) {
                        json_object_put(o);
                        return -1;
                }
                if (any) {
                        printbuf_strappend(pb, ",");
                        if (pretty)
                                printbuf_strappend(pb, "\n");
                }
                if (spaced)
                        printbuf_strappend(pb, " ");
                indent(pb, level + 1, flags);
                append_at_level(pb, text, level + 1, flags);
                json_object_put(o);
                any = true;
        }
        if (pretty) {
                if (any)
                        printbuf_strappend(pb, "\n");
                indent(pb, level, flags);
        }
        return spaced ? printbuf_strappend(pb, " ]") : printbuf_strappend(pb, "]");
}

/*
 * The running jobs as a JSON array whose elements are made when the answer is serialized (control.c does so as
 * soon as it has it, within the loop's turn that made it), one job at a time: 2,000 jobs as a tree of json-c
 * objects were 5.7 MiB of small allocations for 730 KB of text, and a heap left fragmented after each status.
 * In the tree the array is empty: the answer is its text.
 */
static json_object *jobs_json(struct api *api) {
        json_object *jobs = json_object_new_array();

        if (jobs)
                json_object_set_serializer(jobs, jobs_to_json_string, api, NULL);
        return jobs;
}

/* list, around its jobs array (jobs: taken). */
static json_object *list_with(struct api *api, bool all, json_object *jobs) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "jobs", jobs);
        if (all) { /* newest first, as the running ones */
                json_object *ended = json_object_new_array();

                for (size_t i = json_object_array_length(api->history->jobs); i-- > 0;)
                        json_object_array_add(ended, json_object_get(json_object_array_get_idx(api->history->jobs, i)));
                json_object_object_add(o, "ended", ended);
        }
        return o;
}

json_object *status_list_json(struct api *api, bool all) {
        figures_prepare(api);
        return list_with(api, all, jobs_json(api));
}

/* status, around its jobs array and its protected applications' (both taken; prot NULL: made now). */
static json_object *status_with(struct api *api, json_object *jobs, json_object *prot) {
        json_object *o = json_object_new_object(), *classes = json_object_new_array();
        struct cgroup_protect_cache cache = {};

        json_object_object_add(o, "ok", json_object_new_boolean(true));
        json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(o, "cgroup_root", json_object_new_string(api->backend->root));
        json_object_object_add(o, "backend", json_object_new_string(backend_name(api->backend)));
        json_object_object_add(o, "daemon", daemon_json(api));
        for (size_t i = 0; i < api->policy->n_classes; i++)
                json_object_array_add(classes, class_json(api, api->policy->classes[i].name,
                                                          classes_find(api->classes, api->policy->classes[i].name)));
        /* Classes that left the policy while jobs still run in them. */
        for (struct job *j = api->jobs->list; j; j = j->next) {
                bool listed = policy_find_class(api->policy, j->class) != NULL;

                for (struct job *k = api->jobs->list; k != j && !listed; k = k->next)
                        listed = streq(k->class, j->class);
                if (!listed)
                        json_object_array_add(classes, class_json(api, j->class, NULL));
        }
        if (!prot) {
                prot = json_object_new_array();
                for (size_t i = 0; i < api->policy->n_protects; i++)
                        json_object_array_add(prot, protect_json(api, &api->policy->protects[i], &cache));
                cgroup_protect_cache_done(&cache);
        }
        json_object_object_add(o, "classes", classes);
        json_object_object_add(o, "jobs", jobs);
        json_object_object_add(o, "protected", prot);
        json_object_object_add(o, "governor", govern_json(api->govern));
        json_object_object_add(o, "actions", action_log_json(api->log));
        /* What evicted the protected applications without being placed (pagewardenctl suggest says more):
         * names and bytes only, no command lines. */
        json_object_object_add(o, "observation", observe_status(api->observe));
        json_object_object_add(o, "unplaced", unplaced_json(api));
        return o;
}

json_object *status_json(struct api *api) {
        figures_prepare(api);
        return status_with(api, jobs_json(api), NULL);
}

/* ---- status and list of many jobs: their text in slices ---- */

/*
 * With more than STATUS_SLICED_JOBS jobs, or (status) more than
 * STATUS_SLICED_PROTECTED protected applications, writing the answer would
 * hold the loop (2,000 jobs, or 180 protected applications, each ~300 ms
 * under emulation, one dispatch): status and list are answered later.  The
 * protected applications (for a status) and the jobs are written in slices
 * of STATUS_SLICE_USEC, each a turn of the loop; the jobs in the list's
 * order: a job that ends before its turn is left out, one that starts
 * meanwhile is in the next answer (each job written is marked with the
 * text's generation).  Requests that come meanwhile wait for the same text;
 * then each gets its answer, its other parts (small) made then.
 */
struct status_waiter {
        bool list, all;
        status_reply_fn fn;
        uint64_t client;
};

struct status_text {
        struct api *api;
        uint64_t gen;
        uint64_t below_id;   /* the jobs there when it began */
        struct printbuf *pb; /* "[", then the jobs' objects as json-c writes them plain, comma-separated */
        bool any;
        /* The protected applications, the same way, once a status waits (a list has none). */
        bool want_protected;
        struct printbuf *prot;
        size_t next_protect;
        struct cgroup_protect_cache cache;
        sd_event_source *slice;
        struct status_waiter *waiters;
        size_t n_waiters, allocated_waiters;
};

static void text_free(struct status_text *t) {
        if (!t)
                return;
        sd_event_source_disable_unref(t->slice);
        if (t->pb)
                printbuf_free(t->pb);
        if (t->prot)
                printbuf_free(t->prot);
        cgroup_protect_cache_done(&t->cache);
        free(t->waiters);
        free(t);
}

/* The jobs array whose text is written already: plain (the control socket's); in another format, parsed and
 * written again (tests only). */
static int text_to_json_string(json_object *jso, struct printbuf *pb, int level, int flags) {
        const char *text = json_object_get_userdata(jso);
        json_object *parsed;
        int r;

        if (flags == JSON_C_TO_STRING_PLAIN)
                return printbuf_memappend(pb, text, (int) strlen(text));
        parsed = json_tokener_parse(text);
        if (!parsed)
                return -1;
        r = json_object_get_type(parsed) == json_type_array ? 0 : -1;
        if (r == 0) {
                const char *again = json_object_to_json_string_ext(parsed, flags);

                if (again)
                        append_at_level(pb, again, level, flags);
                else
                        r = -1;
        }
        json_object_put(parsed);
        return r < 0 ? -1 : 0;
}

/* An array whose text is pb's, closed. */
static json_object *text_array(const struct printbuf *pb) {
        json_object *a = json_object_new_array();
        char *copy = NULL;

        if (!a || asprintf(&copy, "%s]", pb->buf) < 0) {
                json_object_put(a);
                return NULL;
        }
        json_object_set_serializer(a, text_to_json_string, copy, json_object_free_userdata);
        return a;
}

/* Every waiter gets its answer (NULL: out of memory), then the text goes. */
static void text_finish(struct status_text *t) {
        struct api *api = t->api;

        api->jobs_text = NULL; /* a waiter's reply may come back with a new request */
        for (size_t i = 0; i < t->n_waiters; i++) {
                const struct status_waiter *w = &t->waiters[i];
                json_object *jobs = t->pb ? text_array(t->pb) : NULL, *prot = NULL, *resp = NULL;

                if (jobs && w->list)
                        resp = list_with(api, w->all, jobs);
                else if (jobs && t->prot && (prot = text_array(t->prot)))
                        resp = status_with(api, jobs, prot);
                else
                        json_object_put(jobs);
                w->fn(api, w->client, resp);
        }
        text_free(t);
}

/* Appends an object's plain text to pb, a comma first unless it is the first (*any); false if out of memory. */
static bool text_add(struct printbuf *pb, bool *any, json_object *o) {
        const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
        bool ok = text && (!*any || printbuf_strappend(pb, ",") >= 0) &&
                  printbuf_memappend(pb, text, (int) strlen(text)) >= 0;

        json_object_put(o);
        *any = *any || ok;
        return ok;
}

static void text_failed(struct status_text *t) {
        printbuf_free(t->pb);
        t->pb = NULL; /* out of memory: each waiter is told */
        text_finish(t);
}

static int on_text_slice(sd_event_source *s, void *userdata) {
        struct status_text *t = userdata;
        const struct pw_policy *policy = t->api->policy; /* a reload may change it between slices: by index */
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        bool prot_any = t->next_protect > 0;

        for (; t->want_protected && t->next_protect < policy->n_protects; t->next_protect++) {
                if (!text_add(t->prot, &prot_any,
                              protect_json(t->api, &policy->protects[t->next_protect], &t->cache))) {
                        text_failed(t);
                        return 0;
                }
                if (now_usec(CLOCK_MONOTONIC) - start >= STATUS_SLICE_USEC) {
                        t->next_protect++;
                        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT); /* the rest at the next turn */
                }
        }
        for (struct job *j = t->api->jobs->list; j; j = j->next) {
                if (j->status_gen == t->gen || j->id >= t->below_id)
                        continue;
                if (!text_add(t->pb, &t->any, job_json(t->api, j))) {
                        text_failed(t);
                        return 0;
                }
                j->status_gen = t->gen;
                if (now_usec(CLOCK_MONOTONIC) - start >= STATUS_SLICE_USEC)
                        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT); /* the rest at the next turn */
        }
        text_finish(t);
        return 0;
}

int status_answer(struct api *api, bool list, bool all, status_reply_fn fn, uint64_t client, json_object **ret) {
        struct status_text *t = api->jobs_text;

        if (!t && api->jobs->n <= STATUS_SLICED_JOBS && (list || api->policy->n_protects <= STATUS_SLICED_PROTECTED)) {
                *ret = list ? status_list_json(api, all) : status_json(api);
                return 0;
        }
        if (!t) {
                t = calloc(1, sizeof(*t));
                if (!t)
                        return -ENOMEM;
                *t = (struct status_text){ .api = api, .gen = ++api->status_gens, .below_id = api->jobs->next_id };
                t->pb = printbuf_new();
                t->prot = printbuf_new();
                if (!t->pb || !t->prot || printbuf_strappend(t->pb, "[") < 0 || printbuf_strappend(t->prot, "[") < 0 ||
                    sd_event_add_defer(api->event, &t->slice, on_text_slice, api->jobs_text = t) < 0) {
                        api->jobs_text = NULL;
                        text_free(t);
                        return -ENOMEM;
                }
                (void) sd_event_source_set_description(t->slice, "status-jobs");
                figures_prepare(api);
        }
        if (GROW(t->waiters, t->allocated_waiters, t->n_waiters + 1) < 0)
                return -ENOMEM;
        t->waiters[t->n_waiters++] = (struct status_waiter){ .list = list, .all = all, .fn = fn, .client = client };
        if (!list && !t->want_protected) {
                t->want_protected = true;
                (void) sd_event_source_set_enabled(t->slice, SD_EVENT_ONESHOT); /* the jobs may be written already */
        }
        return 1;
}
