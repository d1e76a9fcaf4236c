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
        sysd_protect_done(d);
        sd_bus_flush_close_unref(d->bus);
        free(d->waiters);
        ledger_done(&d->protection);
        ledger_done(&d->cgroup_protection);
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
        .unit_path = sysd_unit_cgroup_later,
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
                        "# pagewarden: original MemoryMin MemoryLow MemorySwapMax of units it changed",
                        sysd_protect_valid_key);
        if (r >= 0)
                r = cgroup_protect_ledger_init(&d->cgroup_protection, state_dir);
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
