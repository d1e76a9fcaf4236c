/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd backend.  On a systemd host systemd owns the cgroup tree: a
 * value written into a unit's cgroup behind its back is reset by the next
 * `systemctl daemon-reload`.  So:
 *
 *   a class is a transient slice     ROOT-CLASS.slice      (in ROOT.slice)
 *   a job is a transient scope       ROOT-CLASS-ID.scope   (in the class slice)
 *
 * created with StartTransientUnit; class limits, governor changes and the
 * protection of units are unit properties set with SetUnitProperties and
 * runtime=true, which a daemon-reload keeps; freezing is the Manager's
 * FreezeUnit/ThawUnit.  Scopes are started with MemoryAccounting=no: a job's
 * page cache is charged to its class slice, so an ended job leaves no dying
 * memory cgroup behind (systemd removes a scope's cgroup as soon as it is
 * empty, without reclaiming it first).  `cgroup:` entries that name a unit's
 * cgroup are protected through that unit; deeper ones through cgroupfs.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "backend-systemd.h"
#include "log.h"
#include "units.h"
#include "util.h"

bool backend_systemd_available(void) {
        return sd_booted() > 0;
}

/* ---- names ---- */

/* systemd's escaping for a unit name part: '-' separates slice levels, so it becomes \x2d. */
static char *escape(const char *s) {
        size_t n = 0;
        char *r, *p;

        for (const char *c = s; *c; c++)
                n += *c == '-' ? 4 : 1;
        r = p = malloc(n + 1);
        if (!r)
                return NULL;
        for (const char *c = s; *c; c++)
                if (*c == '-') {
                        memcpy(p, "\\x2d", 4);
                        p += 4;
                } else
                        *p++ = *c;
        *p = '\0';
        return r;
}

static char *unescape(const char *s) {
        char *r = strdup(s), *w = r;

        if (!r)
                return NULL;
        for (const char *c = s; *c;)
                if (startswith(c, "\\x2d")) {
                        *w++ = '-';
                        c += 4;
                } else
                        *w++ = *c++;
        *w = '\0';
        return r;
}

static char *class_slice(struct backend *b, const char *class) {
        _cleanup_free_ char *e = escape(class);
        char *s;

        return e && asprintf(&s, "%s-%s.slice", sysd_data(b)->prefix, e) >= 0 ? s : NULL;
}

static char *sysd_class_path(struct backend *b, const char *class) {
        _cleanup_free_ char *slice = class_slice(b, class);
        char *p;

        return slice && asprintf(&p, "%s/%s", b->root, slice) >= 0 ? p : NULL;
}

/* ---- transient units and their start jobs ---- */

static int new_start_transient(struct backend *b, const char *unit, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(sysd_data(b)->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int finish_start_transient(sd_bus_message *m) {
        int r = sd_bus_message_close_container(m);

        return r < 0 ? r : sd_bus_message_append(m, "a(sa(sv))", 0);
}

/* ---- classes ---- */

/* A class's slice: updated if it runs (ours, or an earlier instance's: transient slices stay while started), else
 * started.  Neither is waited for (a reload's answer waits, through sysd_when_answered). */
static int sysd_class_apply(struct backend *b, const struct pw_job_class *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *slice = class_slice(b, c->name), *path = sysd_class_path(b, c->name), *desc = NULL;
        int r;

        if (!slice || !path || asprintf(&desc, "pagewarden job class %s", c->name) < 0)
                return -ENOMEM;
        if (sysd_cgroup_there(b, path)) {
                r = sysd_new_set_properties(b, slice, &m);
                if (r >= 0)
                        r = sysd_append_class_properties(m, c);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r < 0 ? r : sysd_call_later(b, m, "setting a class's limits");
        }
        r = new_start_transient(b, slice, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "Description", "s", desc);
        if (r >= 0)
                r = sysd_append_class_properties(m, c);
        if (r >= 0)
                r = finish_start_transient(m);
        return r < 0 ? r : sysd_call_later(b, m, "starting a class's slice");
}

static int sysd_class_set_memory_high(struct backend *b, const char *class, uint64_t bytes, uint64_t wake_usec,
                                      worker_done_fn done, void *userdata) {
        _cleanup_free_ char *slice = class_slice(b, class);
        int r;

        /* systemd lowers memory.high itself, reclaiming: do not wait for it.  The call is sent now, where the
         * reaction latency ends (ops->class_set_memory_high's 1; done is for the worker's writes). */
        r = slice ? sysd_unit_set_memory_high(b, slice, bytes) : -ENOMEM;
        return r < 0 ? r : 1;
}

static int sysd_class_set_io(struct backend *b, const char *class, const struct pw_io_limit *io, size_t n) {
        _cleanup_free_ char *slice = class_slice(b, class);

        return slice ? sysd_unit_set_io(b, slice, io, n) : -ENOMEM;
}

static int sysd_class_freeze(struct backend *b, const char *class, bool frozen) {
        _cleanup_free_ char *slice = class_slice(b, class);

        return slice ? sysd_unit_freeze(b, slice, frozen) : -ENOMEM;
}

static int sysd_class_remove(struct backend *b, const char *class) {
        _cleanup_free_ char *slice = NULL;

        /* NULL: the slice above the classes (systemd made it for them). */
        if (class)
                slice = class_slice(b, class);
        else if (asprintf(&slice, "%s.slice", sysd_data(b)->prefix) < 0)
                slice = NULL;

        if (!slice)
                return -ENOMEM;
        return sysd_method_later(b, "StopUnit", slice, "fail");
}

static int thaw_one(struct backend *b, const char *name, const char *desc, const char *active, void *ud) {
        (void) sysd_unit_freeze(b, name, false);
        return 0;
}

static int sysd_thaw_all(struct backend *b) {
        _cleanup_free_ char *pattern = NULL;

        if (asprintf(&pattern, "%s-*.slice", sysd_data(b)->prefix) < 0)
                return -ENOMEM;
        return sysd_list_units(b, pattern, thaw_one, NULL);
}

/* ---- jobs ---- */

/*
 * A scope's memory: without limits of its own it is not a memory cgroup
 * (MemoryAccounting=no), so that its page cache is charged to the class
 * slice and an ended job leaves no dying memcg; with per_job limits it must
 * be one.
 */
static int append_job_memory(sd_bus_message *m, const struct pw_job_limits *l) {
        bool own = l->memory_high != UNITS_MAX || l->memory_max != UNITS_MAX || l->memory_swap_max != UNITS_MAX;
        int r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", own);

        if (r >= 0 && own)
                r = sysd_append_u64(m, "MemoryHigh", l->memory_high);
        if (r >= 0 && own)
                r = sysd_append_u64(m, "MemoryMax", l->memory_max);
        if (r >= 0 && own)
                r = sysd_append_u64(m, "MemorySwapMax", l->memory_swap_max);
        return r;
}

/* ---- jobs: a transient scope each, started without waiting for PID 1 ---- */

struct backend_placing {
        struct backend *b;
        backend_placed_fn done;
        void *userdata;
        sd_bus_slot *call;
        sd_event_source *timeout;
        char *job;  /* the scope's start job, once systemd answered */
        char *path; /* the scope's cgroup */
        struct backend_placing *prev, *next;
};

static void placing_free(struct backend_placing *p) {
        struct systemd_data *d = sysd_data(p->b);

        LIST_REMOVE(d->placings, p);
        /* The JobRemoved match is there while a placement waits: systemd's every job end wakes us then only. */
        if (!d->placings)
                d->placings_match = sd_bus_slot_unref(d->placings_match);
        sd_bus_slot_unref(p->call);
        sd_event_source_disable_unref(p->timeout);
        free(p->job);
        free(p->path);
        free(p);
}

static void placing_finish(struct backend_placing *p, int r) {
        backend_placed_fn done = p->done;
        void *userdata = p->userdata;
        _cleanup_free_ char *path = TAKE_PTR(p->path);

        placing_free(p);
        done(userdata, r, r >= 0 ? path : NULL);
}

static int on_placing_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        struct systemd_data *d = userdata;
        const char *path, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        for (struct backend_placing *p = d->placings; p; p = p->next)
                if (p->job && streq(p->job, path)) {
                        if (!streq(result, "done"))
                                log_debug("systemd: start job %s of %s ended with '%s'", path, unit, result);
                        placing_finish(p, streq(result, "done") ? 0 : -EIO);
                        break;
                }
        return 0;
}

static int on_placing_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct backend_placing *p = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *job;
        int r;

        p->call = sd_bus_slot_unref(p->call);
        if (e) {
                log_debug("systemd: StartTransientUnit: %s", e->message ?: e->name);
                placing_finish(p, sysd_bus_errno(e, -sd_bus_message_get_errno(reply)));
                return 0;
        }
        r = sd_bus_message_read(reply, "o", &job);
        if (r >= 0 && !(p->job = strdup(job)))
                r = -ENOMEM;
        if (r < 0)
                placing_finish(p, r);
        return 0; /* JobRemoved ends it */
}

static int on_placing_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        struct backend_placing *p = userdata;

        log_warning("systemd: the start of a job's scope did not end within %u s",
                    (unsigned) (BUS_TIMEOUT_USEC / 1000000));
        placing_finish(p, -ETIMEDOUT);
        return 0;
}

static int sysd_job_place_async(struct backend *b, const char *class, const struct pw_job_limits *limits,
                                const struct cgroup_job_label *label, pid_t pid, backend_placed_fn done, void *userdata,
                                struct backend_placing **ret) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *slice = class_slice(b, class), *eclass = escape(class), *scope = NULL, *desc = NULL;
        struct backend_placing *p;
        int r;

        if (!slice || !eclass || asprintf(&scope, "%s-%s-%" PRIu64 ".scope", d->prefix, eclass, label->id) < 0 ||
            asprintf(&desc, "pagewarden job %" PRIu64 " (%s) of class %s for uid %u, started %" PRIu64 "%s%s",
                     label->id, label->name, class, (unsigned) label->uid, label->started_usec,
                     label->by[0] ? ", placed by " : "", label->by) < 0)
                return -ENOMEM;
        r = new_start_transient(b, scope, &m);
        if (r >= 0)
                /* Delegated, with no controller: PID 1 attaches processes (AttachProcessesToUnit: a move's
                 * rest, the children a process placed by rule forked before) only to delegated units, and a
                 * delegated controller would be the scope's own (Delegate=yes would make it a memory cgroup,
                 * see above).  The daemon makes no cgroup below a scope. */
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s", desc, "Slice", "s", slice,
                                          "CollectMode", "s", "inactive-or-failed", "DelegateControllers", "as", 0);
        if (r >= 0)
                r = append_job_memory(m, limits);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, (uint32_t) pid);
        if (r >= 0)
                r = finish_start_transient(m);
        if (r < 0)
                return r;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        *p = (struct backend_placing){ .b = b, .done = done, .userdata = userdata };
        LIST_PREPEND(d->placings, p);
        if (asprintf(&p->path, "%s/%s/%s", b->root, slice, scope) < 0)
                r = -ENOMEM;
        /* The match first: JobRemoved may come right after the answer (AddMatch is ahead of the call). */
        if (r >= 0 && !d->placings_match)
                r = sd_bus_match_signal_async(d->bus, &d->placings_match, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
                                              on_placing_removed, NULL, d);
        if (r >= 0)
                r = sd_bus_call_async(d->bus, &p->call, m, on_placing_reply, p, BUS_TIMEOUT_USEC);
        if (r >= 0)
                r = sd_event_add_time_relative(b->event, &p->timeout, CLOCK_MONOTONIC, BUS_TIMEOUT_USEC, 0,
                                               on_placing_timeout, p);
        if (r < 0) {
                placing_free(p);
                return r;
        }
        (void) sd_event_source_set_description(p->timeout, "job-scope-start");
        *ret = p;
        return 0;
}

static void sysd_job_place_cancel(struct backend *b, struct backend_placing *p) {
        if (p)
                placing_free(p);
}

/* An AttachProcessesToUnit under way: the loop does not wait for PID 1 (a busy PID 1 answers in seconds). */
struct backend_attaching {
        struct backend *b;
        backend_attached_fn done;
        void *userdata;
        sd_bus_slot *call;
        struct backend_attaching *prev, *next;
};

static void attaching_free(struct backend_attaching *a) {
        LIST_REMOVE(sysd_data(a->b)->attachings, a);
        sd_bus_slot_unref(a->call);
        free(a);
}

static int on_attach_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct backend_attaching *a = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        backend_attached_fn done = a->done;
        void *ud = a->userdata;
        int r = 0;

        if (e) {
                log_debug("systemd: AttachProcessesToUnit: %s", e->message ?: e->name);
                r = sysd_bus_errno(e, -sd_bus_message_get_errno(reply));
        }
        attaching_free(a);
        done(ud, r);
        return 0;
}

/* The scope is the last component of the job's cgroup path (sd_bus_call_async's timeout answers a silent PID 1). */
static int sysd_job_attach_async(struct backend *b, const char *path, const pid_t *pids, size_t n,
                                 backend_attached_fn done, void *userdata, struct backend_attaching **ret) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const char *scope = strrchr(path, '/');
        struct backend_attaching *a;
        int r;

        r = sd_bus_message_new_method_call(d->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "AttachProcessesToUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", scope ? scope + 1 : path, "");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "u");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "u", (uint32_t) pids[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        *a = (struct backend_attaching){ .b = b, .done = done, .userdata = userdata };
        LIST_PREPEND(d->attachings, a);
        r = sd_bus_call_async(d->bus, &a->call, m, on_attach_reply, a, BUS_TIMEOUT_USEC);
        if (r < 0) {
                attaching_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

static void sysd_job_attach_cancel(struct backend *b, struct backend_attaching *a) {
        if (a)
                attaching_free(a);
}

/* "ROOT-CLASS-ID.scope" and its description back into a slot. */
static int scan_one(struct backend *b, const char *name, const char *desc, const char *active, void *ud) {
        struct {
                struct cgroup_slot *slots;
                size_t n, allocated;
        } *acc = ud;
        _cleanup_free_ char *rest = NULL, *eclass = NULL, *class = NULL, *slice = NULL, *events = NULL;
        struct cgroup_slot s = {};
        const char *after = startswith(name, sysd_data(b)->prefix);
        char *dash;
        unsigned uid = 0;
        int k = 0;

        if (!after || *after != '-' || !endswith(name, ".scope") || !streq(active, "active"))
                return 0;
        rest = strndup(after + 1, strlen(after + 1) - strlen(".scope"));
        if (!rest)
                return -ENOMEM;
        dash = strrchr(rest, '-');
        if (!dash)
                return 0;
        *dash = '\0';
        class = unescape(rest);
        if (!class || policy_name_problem(class))
                return 0;
        if (sscanf(desc, "pagewarden job %" SCNu64 " (%n", &s.label.id, &k) != 1 || k == 0)
                return 0; /* not ours */
        {
                const char *p = desc + k, *close = strstr(p, ") of class ");

                if (!close || (size_t) (close - p) > POLICY_NAME_MAX)
                        return 0;
                snprintf(s.label.name, sizeof(s.label.name), "%.*s", (int) (close - p), p);
                p = strstr(close, " for uid ");
                if (p && sscanf(p, " for uid %u, started %" SCNu64, &uid, &s.label.started_usec) >= 1)
                        s.label.uid = (uid_t) uid;
                p = strstr(close, ", placed by ");
                if (p)
                        snprintf(s.label.by, sizeof(s.label.by), "%s", p + strlen(", placed by "));
        }
        slice = class_slice(b, class);
        if (!slice || asprintf(&s.path, "%s/%s/%s", b->root, slice, name) < 0)
                return -ENOMEM;
        s.class = TAKE_PTR(class);
        s.labelled = true;
        if (cgroup_read_file(b->engine, s.path, "cgroup.events", &events) >= 0)
                (void) cgv_parse_events(events, &s.populated, NULL);
        if (GROW(acc->slots, acc->allocated, acc->n + 1) < 0) {
                free(s.path);
                free(s.class);
                return -ENOMEM;
        }
        acc->slots[acc->n++] = s;
        return 0;
}

static int sysd_scan(struct backend *b, struct cgroup_slot **ret, size_t *ret_n) {
        struct {
                struct cgroup_slot *slots;
                size_t n, allocated;
        } acc = {};
        _cleanup_free_ char *pattern = NULL;
        int r;

        if (asprintf(&pattern, "%s-*.scope", sysd_data(b)->prefix) < 0)
                return -ENOMEM;
        r = sysd_list_units(b, pattern, scan_one, &acc);
        if (r < 0) {
                cgroup_slots_free(acc.slots, acc.n);
                return r;
        }
        *ret = acc.slots;
        *ret_n = acc.n;
        return 0;
}

/* ---- protection: the ledger (ledger.h) on units' properties ---- */

static bool valid_unit_key(const char *unit) {
        return !policy_unit_name_problem(unit);
}

/* A unit's cgroup path ends in the unit's name. */
static const char *unit_key(const char *path) {
        const char *last = strrchr(path, '/');

        return last ? last + 1 : path;
}

/*
 * A protected unit's own values and its cgroup, asked of PID 1 without waiting: one Properties.GetAll on the
 * unit's object (which loads a unit that has not started), the first time the ledger reads the unit (a
 * protected unit, or a slice above one) or when its cgroup is not known.  Meanwhile the ledger keeps the unit
 * as it is (-EINPROGRESS, ledger.h); once every answer is in, the listeners hear of each protected unit that
 * waited, and protection is applied again.  An answer is kept OWN_ANSWER_USEC: its values are used once (they
 * may change afterwards), and an error is the read's result until then, so that a unit PID 1 refuses is not
 * asked for again at every apply.
 */
#define OWN_ANSWER_USEC (UINT64_C(5) * 1000000)

struct sysd_own {
        char *unit;
        bool answered, used;
        int error; /* answered: 0, or why there are no values */
        uint64_t answered_usec;
        struct ledger_values v;
        bool no_cgroup; /* answered: the unit has no cgroup (it does not run) */
};

static void own_drop(struct systemd_data *d, struct sysd_own *o) {
        free(o->unit);
        *o = d->owns[--d->n_owns];
}

static struct sysd_own *own_get(struct systemd_data *d, const char *unit) {
        for (size_t i = 0; i < d->n_owns; i++)
                if (streq(d->owns[i].unit, unit))
                        return &d->owns[i];
        return NULL;
}

/* The unit's entry, an answer too old to use forgotten. */
static struct sysd_own *own_find(struct systemd_data *d, const char *unit) {
        struct sysd_own *o = own_get(d, unit);

        if (o && o->answered && now_usec(CLOCK_MONOTONIC) - o->answered_usec > OWN_ANSWER_USEC) {
                own_drop(d, o);
                return NULL;
        }
        return o;
}

/* GetAll's a{sv}: MemoryMin, MemoryLow, MemorySwapMax (all three, or -EBADMSG), and ControlGroup (kept). */
static int parse_own(struct systemd_data *d, sd_bus_message *reply, struct sysd_own *o) {
        static const char *const names[] = { "MemoryMin", "MemoryLow", "MemorySwapMax" };
        uint64_t *dst[] = { &o->v.min, &o->v.low, &o->v.swap_max };
        unsigned found = 0;
        const char *name, *cgroup;
        int r;

        o->v = (struct ledger_values){ .has_swap = true };
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                int k = -1;

                r = sd_bus_message_read(reply, "s", &name);
                for (size_t i = 0; r >= 0 && i < ELEMENTSOF(names); i++)
                        if (streq(name, names[i]))
                                k = (int) i;
                if (r >= 0 && k >= 0) {
                        r = sd_bus_message_read(reply, "v", "t", dst[k]);
                        found |= 1u << k;
                } else if (r >= 0 && streq(name, "ControlGroup")) {
                        r = sd_bus_message_read(reply, "v", "s", &cgroup);
                        if (r >= 0) {
                                sysd_unit_cgroup_keep(d, o->unit, cgroup);
                                o->no_cgroup = !cgroup[0] || streq(cgroup, "/");
                        }
                } else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0)
                return r;
        return found == (1u << ELEMENTSOF(names)) - 1 ? 0 : -EBADMSG;
}

/* The protected units that waited hear of their unit once no answer is still to come. */
static void own_tell_waiting(struct systemd_data *d) {
        char **units = TAKE_PTR(d->protect_waiting);
        size_t n = d->n_protect_waiting;

        d->n_protect_waiting = d->allocated_protect_waiting = 0;
        for (size_t i = 0; i < n; i++) {
                sysd_units_tell(d, units[i]);
                free(units[i]);
        }
        free(units);
}

static void own_answered(struct backend *b, sd_bus_message *reply, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        struct sysd_own *o = own_get(d, userdata);

        assert(d->n_owns_asked > 0);
        d->n_owns_asked--;
        if (o && !o->answered) {
                o->error = e ? sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO)) : parse_own(d, reply, o);
                o->answered = true;
                o->answered_usec = now_usec(CLOCK_MONOTONIC);
                if (o->error < 0)
                        log_warning(
                                "systemd: unit %s: its own MemoryMin, MemoryLow and MemorySwapMax cannot be read: "
                                "%s",
                                o->unit, e ? e->message ?: e->name : strerror(-o->error));
        }
        if (d->n_owns_asked == 0)
                own_tell_waiting(d);
}

/* Asks PID 1 for the unit's own values and cgroup: -EINPROGRESS, or why it cannot be asked. */
static int own_ask(struct backend *b, const char *unit) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *get = NULL;
        _cleanup_free_ char *path = NULL;
        const char *iface = sysd_unit_interface(unit);
        char *name;
        int r;

        if (!iface)
                return -EINVAL;
        r = sd_bus_path_encode(SD_PATH "/unit", unit, &path);
        if (r >= 0)
                r = sd_bus_message_new_method_call(d->bus, &get, SD_DEST, path, "org.freedesktop.DBus.Properties",
                                                   "GetAll");
        if (r >= 0)
                r = sd_bus_message_append(get, "s", iface);
        if (r < 0)
                return r;
        if (GROW(d->owns, d->allocated_owns, d->n_owns + 1) < 0)
                return -ENOMEM;
        d->owns[d->n_owns] = (struct sysd_own){ .unit = strdup(unit) };
        name = strdup(unit);
        if (!d->owns[d->n_owns].unit || !name) {
                free(d->owns[d->n_owns].unit);
                free(name);
                return -ENOMEM;
        }
        d->n_owns++;
        r = sysd_call_later_reply(b, get, "reading a protected unit's own values", own_answered, name);
        if (r < 0) {
                own_drop(d, &d->owns[d->n_owns - 1]);
                return r;
        }
        d->n_owns_asked++;
        return -EINPROGRESS;
}

/* A unit is one node for as long as it has its name (id: 0, the ledger cannot tell two apart); its values
 * come from PID 1's answer (own_ask). */
static int unit_read(void *userdata, const char *unit, uint64_t id, bool swap, struct ledger_values *ret,
                     uint64_t *ret_id) {
        struct backend *b = userdata;
        struct systemd_data *d = sysd_data(b);
        struct sysd_own *o = own_find(d, unit);

        (void) id;
        *ret = (struct ledger_values){};
        *ret_id = 0;
        if (o && o->answered && o->used && o->error == 0) {
                own_drop(d, o); /* read once: ask again */
                o = NULL;
        }
        if (!o)
                return own_ask(b, unit);
        if (!o->answered)
                return -EINPROGRESS;
        if (o->error < 0)
                return o->error;
        *ret = o->v;
        ret->has_swap = swap;
        o->used = true;
        return 0;
}

/* The unit's cgroup relative to the mount, without waiting: as PID 1 said before, or -EINPROGRESS while it is
 * asked (with the unit's own values); -ENOENT if it has none. */
static int unit_cgroup_now(struct backend *b, const char *unit, char **ret) {
        struct systemd_data *d = sysd_data(b);
        struct sysd_own *o;
        int r = sysd_unit_cgroup_known(b, unit, ret);

        if (r != -EAGAIN)
                return r;
        o = own_find(d, unit);
        if (o && !o->answered)
                return -EINPROGRESS;
        if (o && o->error < 0)
                return o->error;
        /* Answered "none" and nothing says otherwise (without unit events, "none" is not kept). */
        if (o && o->no_cgroup && !d->unit_new)
                return -ENOENT;
        if (o) /* answered, then forgotten by an event of the unit: it started or stopped since */
                own_drop(d, o);
        return own_ask(b, unit);
}

/* Remembers a protected unit that waits for PID 1's answers (told when they are all in). */
static int own_wait(struct systemd_data *d, const char *unit) {
        char *copy;

        for (size_t i = 0; i < d->n_protect_waiting; i++)
                if (streq(d->protect_waiting[i], unit))
                        return 0;
        copy = strdup(unit);
        if (!copy || GROW(d->protect_waiting, d->allocated_protect_waiting, d->n_protect_waiting + 1) < 0) {
                free(copy);
                return -ENOMEM;
        }
        d->protect_waiting[d->n_protect_waiting++] = copy;
        return 0;
}

static int unit_write(void *userdata, const char *unit, uint64_t id, const struct ledger_values *v) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        struct backend *b = userdata;
        int r;

        (void) id;
        r = sysd_new_set_properties(b, unit, &m);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryMin", v->min);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryLow", v->low);
        if (r >= 0 && v->has_swap)
                r = sysd_append_u64(m, "MemorySwapMax", v->swap_max);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        /* Not waited for (the governor's auto sizes come through here); a reload's answer and the daemon's exit
         * wait for it (sysd_when_answered). */
        return r < 0 ? r : sysd_call_later(b, m, "setting protection");
}

/* The unit owning a protected entry: unit:, or the last component of a cgroup: path if it is a unit. */
static const char *entry_unit(const struct backend_protect *p) {
        const char *last;

        if (p->unit)
                return p->unit;
        last = unit_key(p->cgroup);
        return sysd_unit_interface(last) && !policy_unit_name_problem(last) ? last : NULL;
}

/*
 * Units through systemd; deeper cgroups (inside a unit's delegated tree) through cgroupfs.  Each ledger gets
 * the whole list, with the paths of the other's entries left out (NULL): the results need no index.
 */
static int sysd_protect_set(struct backend *b, const struct backend_protect *req, size_t n,
                            struct cgroup_protect_result *res) {
        const struct ledger_io io = { .key = unit_key, .read = unit_read, .write = unit_write, .userdata = b };
        _cleanup_free_ struct ledger_request *direct = calloc(n + 1, sizeof(*direct)),
                                             *units = calloc(n + 1, sizeof(*units));
        _cleanup_free_ struct cgroup_protect_result *dres = calloc(n + 1, sizeof(*dres));
        _cleanup_free_ int *errs = calloc(n + 1, sizeof(int)), *unit_errs = calloc(n + 1, sizeof(int));
        _cleanup_free_ char **paths = calloc(n + 1, sizeof(char *));
        struct cgroup_protect_cache cache = {};
        int r = 0, k = 0;

        if (!direct || !units || !dres || !errs || !unit_errs || !paths)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *unit = entry_unit(&req[i]);
                _cleanup_free_ char *cg = NULL;

                if (!unit) {
                        direct[i] = (struct ledger_request){ req[i].cgroup, req[i].min, req[i].low, req[i].swap_deny };
                        continue;
                }
                k = unit_cgroup_now(b, unit, &cg);
                if (k >= 0 && asprintf(&paths[i], "/%s", cg) < 0)
                        k = -ENOMEM;
                if (k == -ENOMEM)
                        goto finish;
                unit_errs[i] = k; /* a unit without a cgroup: its result */
                if (k >= 0)
                        units[i] = (struct ledger_request){ paths[i], req[i].min, req[i].low, req[i].swap_deny };
                else if (k == -EINPROGRESS) /* its cgroup asked for: nothing is given back meanwhile */
                        units[i] = (struct ledger_request){ .pending = true };
        }
        r = cgroup_protect_set(b->engine, direct, n, dres);
        k = ledger_apply(&sysd_data(b)->protection, units, n, &io, errs);
        r = r ?: k;
        for (size_t i = 0; i < n; i++) {
                int e = unit_errs[i] < 0 ? unit_errs[i] : errs[i];

                if (e == -EINPROGRESS && own_wait(sysd_data(b), entry_unit(&req[i])) < 0)
                        r = r ?: -ENOMEM; /* not told: applied again at the next reload or job */
                if (!res)
                        continue;
                if (!paths[i] && unit_errs[i] == 0)
                        res[i] = dres[i]; /* a cgroup the engine protected */
                else if (e < 0)
                        res[i] = (struct cgroup_protect_result){ .error = e };
                else /* what is in force, read back from the cgroup systemd wrote */
                        (void) cgroup_protect_read(b->engine, paths[i] + 1, &cache, &res[i]);
        }
        cgroup_protect_cache_done(&cache);
finish:
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        return k == -ENOMEM ? k : r;
}

static int sysd_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path) {
        if (p->unit)
                return sysd_unit_cgroup(b, p->unit, ret_path);
        *ret_path = strdup(p->cgroup + 1);
        return *ret_path ? 0 : -ENOMEM;
}

static void sysd_free(struct backend *b) {
        struct systemd_data *d = sysd_data(b);

        if (!d)
                return;
        while (d->placings)
                placing_free(d->placings);
        while (d->attachings)
                attaching_free(d->attachings);
        while (d->n_unit_cgs > 0)
                sysd_unit_cgroup_forget(d, d->unit_cgs[0].unit);
        free(d->unit_cgs);
        while (d->n_owns > 0)
                own_drop(d, &d->owns[0]);
        free(d->owns);
        for (size_t i = 0; i < d->n_protect_waiting; i++)
                free(d->protect_waiting[i]);
        free(d->protect_waiting);
        sd_bus_flush_close_unref(d->bus);
        free(d->waiters);
        ledger_done(&d->protection);
        sysd_units_done(b);
        free(d->prefix);
        free(d);
}

/* A job is a unit: one placed by rule, or the scope pagewarden started (the last part of its cgroup's path). */
static int sysd_job_freeze(struct backend *b, const char *path, const char *unit, bool frozen) {
        const char *scope = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

        if (!unit && !endswith(scope, ".scope"))
                return -EOPNOTSUPP;
        return sysd_unit_freeze(b, unit ?: scope, frozen);
}

/* ---- oneshot fronts, asked without waiting ---- */

struct front_ask {
        void (*fn)(void *userdata, const char *unit);
        void *userdata;
        char *unit;
};

static int on_front(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct front_ask *a = userdata;
        const char *type = NULL, *name;
        int remain = 0, r;

        if (sd_bus_message_is_method_error(reply, NULL))
                goto out; /* not a service, or not loaded: not a front */
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                r = sd_bus_message_read(reply, "s", &name);
                if (r >= 0 && streq(name, "Type"))
                        r = sd_bus_message_read(reply, "v", "s", &type);
                else if (r >= 0 && streq(name, "RemainAfterExit"))
                        r = sd_bus_message_read(reply, "v", "b", &remain);
                else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (type && streq(type, "oneshot") && remain)
                a->fn(a->userdata, a->unit);
out:
        return 0; /* a is freed with the call's slot */
}

static void front_free(void *userdata) {
        struct front_ask *a = userdata;

        free(a->unit);
        free(a);
}

static int sysd_unit_front_async(struct backend *b, const char *unit, void (*fn)(void *userdata, const char *unit),
                                 void *userdata) {
        _cleanup_free_ char *path = NULL;
        sd_bus_slot *slot = NULL;
        struct front_ask *a;
        int r;

        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return r;
        a = calloc(1, sizeof(*a));
        if (!a || !(a->unit = strdup(unit))) {
                free(a);
                return -ENOMEM;
        }
        a->fn = fn;
        a->userdata = userdata;
        r = sd_bus_call_method_async(sysd_data(b)->bus, &slot, SD_DEST, path, "org.freedesktop.DBus.Properties",
                                     "GetAll", on_front, a, "s", "org.freedesktop.systemd1.Service");
        if (r < 0) {
                front_free(a);
                return r;
        }
        /* Floating: freed when answered, or with the bus if it goes first (the backend goes before whoever
         * asked, so fn is never called after). */
        (void) sd_bus_slot_set_destroy_callback(slot, front_free);
        (void) sd_bus_slot_set_floating(slot, 1);
        sd_bus_slot_unref(slot);
        return 0;
}

static const struct backend_ops systemd_ops = {
        .name = "systemd",
        .caps = { .releases_jobs = false, .protects_units = true },
        .class_path = sysd_class_path,
        .class_apply = sysd_class_apply,
        .class_set_memory_high = sysd_class_set_memory_high,
        .class_set_io = sysd_class_set_io,
        .class_freeze = sysd_class_freeze,
        .thaw_all = sysd_thaw_all,
        .class_remove = sysd_class_remove,
        .job_place_async = sysd_job_place_async,
        .job_place_cancel = sysd_job_place_cancel,
        .job_freeze = sysd_job_freeze,
        .job_attach_async = sysd_job_attach_async,
        .job_attach_cancel = sysd_job_attach_cancel,
        .when_answered = sysd_when_answered,
        .scan = sysd_scan,
        .protect_set = sysd_protect_set,
        .protect_path = sysd_protect_path,
        .unit_front_async = sysd_unit_front_async,
        .free = sysd_free,
        .units_find = sysd_units_find,
        .unit_apply = sysd_unit_apply,
        .unit_restore = sysd_unit_restore,
        .units_watch = sysd_units_watch,
        .unit_path = sysd_unit_cgroup,
        .unit_set_memory_high = sysd_unit_set_memory_high,
        .unit_set_io = sysd_unit_set_io,
        .unit_freeze = sysd_unit_freeze,
};

int backend_systemd_new(struct cgroup_engine *engine, struct worker *worker, sd_event *event, const char *root,
                        const char *state_dir, struct backend **ret) {
        _cleanup_(backend_freep) struct backend *b = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *version = NULL, *state_file = NULL;
        struct systemd_data *d;
        int r;

        root += root[0] == '/';
        /* The root must be a top-level slice, such as pagewarden.slice: its name is the prefix of the others. */
        if (!endswith(root, ".slice") || strchr(root, '/') || strchr(root, '-') || strlen(root) <= strlen(".slice"))
                return log_error_errno(EINVAL,
                                       "cgroup_root '%s': the systemd backend needs a top-level slice name "
                                       "without '-', such as pagewarden.slice",
                                       root);
        b = calloc(1, sizeof(*b));
        d = calloc(1, sizeof(*d));
        if (!b || !d) {
                free(d);
                return -ENOMEM;
        }
        b->ops = &systemd_ops;
        b->data = d;
        b->event = event;
        b->root = strdup(root);
        d->prefix = strndup(root, strlen(root) - strlen(".slice"));
        if (!b->root || !d->prefix || (state_dir && asprintf(&state_file, "%s/protect-units.state", state_dir) < 0))
                return -ENOMEM;
        r = sd_bus_open_system(&d->bus);
        if (r < 0)
                return -ENOTCONN;
        r = sd_bus_get_property_string(d->bus, SD_DEST, SD_PATH, SD_MANAGER, "Version", &e, &version);
        if (r < 0)
                return -ENOTCONN;
        /* Read once: what a unit's pids.max is when nobody chose one (rules then do not count it as a limit). */
        b->tasks_default = UINT64_MAX;
        r = sd_bus_get_property_trivial(d->bus, SD_DEST, SD_PATH, SD_MANAGER, "DefaultTasksMax", &e, 't',
                                        &b->tasks_default);
        if (r < 0)
                log_debug("systemd's DefaultTasksMax cannot be read (%s): every pids.max counts as a limit",
                          e.message ?: strerror(-r));
        sd_bus_error_free(&e);
        r = sd_bus_attach_event(d->bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        r = ledger_init(&d->protection, state_file,
                        "# pagewarden: original MemoryMin MemoryLow MemorySwapMax of units it changed", valid_unit_key);
        if (r >= 0)
                r = sysd_units_init(b, state_dir);
        if (r < 0)
                return r;
        log_info("systemd %s answers on the system bus: jobs become transient scopes in %s", version, root);
        /* Only now: on failure the caller still owns them. */
        b->engine = engine;
        b->worker = worker;
        *ret = TAKE_PTR(b);
        return 0;
}
