/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd backend's bus layer: calls to PID 1 (waiting, or answered
 * later on the loop), units' objects, properties and cgroups, and the
 * writes of one property of a unit.  backend-systemd.c (classes, jobs),
 * backend-systemd-protect.c (protection) and backend-systemd-units.c
 * (units placed by rule) use it; it uses none of them.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "backend-systemd.h"
#include "log.h"
#include "units.h"
#include "util.h"

struct systemd_data *sysd_data(struct backend *b) {
        return b->data;
}

/* The D-Bus interface that carries a unit's cgroup properties. */
const char *sysd_unit_interface(const char *unit) {
        static const struct {
                const char *suffix, *iface;
        } map[] = {
                { ".service", "org.freedesktop.systemd1.Service" }, { ".scope", "org.freedesktop.systemd1.Scope" },
                { ".slice", "org.freedesktop.systemd1.Slice" },     { ".socket", "org.freedesktop.systemd1.Socket" },
                { ".mount", "org.freedesktop.systemd1.Mount" },     { ".swap", "org.freedesktop.systemd1.Swap" },
        };

        for (size_t i = 0; i < ELEMENTSOF(map); i++)
                if (endswith(unit, map[i].suffix))
                        return map[i].iface;
        return NULL;
}

/* ---- bus helpers ---- */

int sysd_bus_errno(const sd_bus_error *e, int r) {
        if (sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit") ||
            sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.UnknownObject"))
                return -ENOENT;
        if (sd_bus_error_has_name(e, "org.freedesktop.systemd1.UnitExists"))
                return -EEXIST;
        return r < 0 ? r : -EIO;
}

bool sysd_cgroup_there(struct backend *b, const char *path) {
        _cleanup_free_ char *abs = NULL;
        struct stat st;

        return asprintf(&abs, "%s/%s", cgroup_engine_mount(b->engine), path) >= 0 && stat(abs, &st) >= 0 &&
               S_ISDIR(st.st_mode);
}

/*
 * What PID 1 said of a unit's cgroup is kept, so that status, the governor
 * and placement by rule do not ask PID 1 each time: a cgroup while its
 * directory exists; "none" while systemd's unit events come
 * (sysd_unit_cgroup_forget() drops the entry on each event of the unit).
 */
int sysd_unit_cgroup_known(struct backend *b, const char *unit, char **ret) {
        struct systemd_data *d = sysd_data(b);

        for (size_t i = 0; i < d->n_unit_cgs; i++) {
                const struct sysd_unit_cg *c = &d->unit_cgs[i];

                if (!streq(c->unit, unit))
                        continue;
                if (c->asking)
                        return -EINPROGRESS;
                if (c->path && sysd_cgroup_there(b, c->path)) {
                        *ret = strdup(c->path);
                        return *ret ? 0 : -ENOMEM;
                }
                return !c->path && d->unit_new ? -ENOENT : -EAGAIN;
        }
        return -EAGAIN;
}

void sysd_unit_cgroup_keep(struct systemd_data *d, const char *unit, const char *cgroup) {
        bool none = !cgroup[0] || streq(cgroup, "/");
        char *name, *copy;

        sysd_unit_cgroup_forget(d, unit);
        if (GROW(d->unit_cgs, d->allocated_unit_cgs, d->n_unit_cgs + 1) < 0)
                return; /* asked again when it is needed */
        name = strdup(unit);
        copy = none ? NULL : strdup(cgroup + 1);
        if (!name || (!none && !copy)) {
                free(name);
                free(copy);
                return;
        }
        d->unit_cgs[d->n_unit_cgs++] = (struct sysd_unit_cg){ .unit = name, .path = copy };
}

bool sysd_unit_cgroup_forget(struct systemd_data *d, const char *unit) {
        for (size_t i = 0; i < d->n_unit_cgs; i++)
                if (streq(d->unit_cgs[i].unit, unit)) {
                        free(d->unit_cgs[i].unit);
                        free(d->unit_cgs[i].path);
                        d->unit_cgs[i] = d->unit_cgs[--d->n_unit_cgs];
                        return true;
                }
        return false;
}

int sysd_unit_cgroup_asking(struct systemd_data *d, const char *unit, unsigned long ask) {
        char *name;

        assert(ask > 0);
        sysd_unit_cgroup_forget(d, unit);
        if (GROW(d->unit_cgs, d->allocated_unit_cgs, d->n_unit_cgs + 1) < 0 || !(name = strdup(unit)))
                return -ENOMEM;
        d->unit_cgs[d->n_unit_cgs++] = (struct sysd_unit_cg){ .unit = name, .asking = ask };
        return 0;
}

bool sysd_unit_cgroup_is_asking(struct systemd_data *d, const char *unit, unsigned long ask) {
        for (size_t i = 0; i < d->n_unit_cgs; i++)
                if (streq(d->unit_cgs[i].unit, unit))
                        return d->unit_cgs[i].asking > 0 && (ask == 0 || d->unit_cgs[i].asking == ask);
        return false;
}

void sysd_units_tell(struct systemd_data *d, const char *unit) {
        for (size_t i = 0; i < SYSD_UNIT_LISTENERS && d->unit_listeners[i].fn; i++)
                d->unit_listeners[i].fn(d->unit_listeners[i].userdata, unit);
}

/* ---- a unit's cgroup, without waiting ---- */

/*
 * A unit's cgroup, for placement by rule (backend_unit_path) and a protected
 * unit's (backend_protect_path: status, the governor, observation), asked of
 * PID 1 without waiting: GetUnit (which loads nothing: asking a unit that is
 * not loaded must not load it, systemd would announce it and the
 * announcement would ask again), then the loaded unit's ControlGroup.  Its
 * answer is kept (sysd_unit_cgroup_known()), and the units' listeners are
 * told of the unit as of an event: what waited for it asks again and finds
 * it.  An error is logged and not kept: the unit's next event, or the next
 * caller, asks again (not in a loop: an error tells nobody).
 */

/* One ask: the unit, and which ask it was (only the unit's latest is kept). */
struct cg_ask {
        unsigned long n;
        char unit[];
};

static void cg_error(struct systemd_data *d, const struct cg_ask *a, const sd_bus_error *e, int r) {
        if (sysd_unit_cgroup_is_asking(d, a->unit, a->n))
                sysd_unit_cgroup_forget(d, a->unit);
        log_warning("systemd: unit %s: cannot find its cgroup: %s", a->unit, e ? e->message ?: e->name : strerror(-r));
}

/* What PID 1 said is kept if nothing newer came meanwhile (an event and its ask, a blocking ask); the listeners
 * are told in any case (one of them may have waited for this answer while a blocking ask kept another). */
static void cg_known(struct systemd_data *d, const struct cg_ask *a, const char *cgroup) {
        if (sysd_unit_cgroup_is_asking(d, a->unit, a->n))
                sysd_unit_cgroup_keep(d, a->unit, cgroup);
        sysd_units_tell(d, a->unit);
}

static void cg_answered(struct backend *b, sd_bus_message *reply, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const struct cg_ask *a = userdata;
        const char *cgroup;
        int r;

        if (e) {
                r = sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO));
                if (r == -ENOENT) /* gone meanwhile */
                        cg_known(d, a, "");
                else
                        cg_error(d, a, e, r);
                return;
        }
        r = sd_bus_message_read(reply, "v", "s", &cgroup);
        if (r < 0)
                cg_error(d, a, NULL, r);
        else
                cg_known(d, a, cgroup);
}

static struct cg_ask *cg_ask_new(unsigned long n, const char *unit) {
        struct cg_ask *a = malloc(sizeof(*a) + strlen(unit) + 1);

        if (a) {
                a->n = n;
                strcpy(a->unit, unit);
        }
        return a;
}

static void cg_located(struct backend *b, sd_bus_message *reply, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *get = NULL;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const struct cg_ask *a = userdata;
        struct cg_ask *next = NULL;
        const char *path;
        int r;

        if (e) {
                r = sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO));
                if (r == -ENOENT) /* not loaded: it does not run */
                        cg_known(d, a, "");
                else
                        cg_error(d, a, e, r);
                return;
        }
        if (!sysd_unit_cgroup_is_asking(d, a->unit, a->n))
                return; /* a newer ask (or answer) came: it tells */
        r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0)
                r = sd_bus_message_new_method_call(d->bus, &get, SD_DEST, path, "org.freedesktop.DBus.Properties",
                                                   "Get");
        if (r >= 0)
                r = sd_bus_message_append(get, "ss", sysd_unit_interface(a->unit), "ControlGroup");
        if (r >= 0)
                r = (next = cg_ask_new(a->n, a->unit)) ? 0 : -ENOMEM;
        if (r >= 0)
                r = sysd_call_later_reply(b, get, "reading a unit's cgroup", cg_answered, next);
        if (r < 0)
                cg_error(d, a, NULL, r);
}

int sysd_unit_cgroup_later(struct backend *b, const char *unit, char **ret) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        struct cg_ask *a = NULL;
        int r = sysd_unit_cgroup_known(b, unit, ret);

        if (r != -EAGAIN)
                return r; /* known, or asked already (-EINPROGRESS) */
        if (!sysd_unit_interface(unit))
                return -EINVAL;
        r = sd_bus_message_new_method_call(d->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", unit);
        if (r >= 0)
                r = (a = cg_ask_new(++d->cg_asks, unit)) ? 0 : -ENOMEM;
        if (r >= 0)
                r = sysd_unit_cgroup_asking(d, unit, a->n);
        if (r >= 0)
                r = sysd_call_later_reply(b, m, "finding a unit", cg_located, TAKE_PTR(a));
        free(a);
        if (r < 0) {
                if (sysd_unit_cgroup_is_asking(d, unit, 0))
                        sysd_unit_cgroup_forget(d, unit);
                return r;
        }
        return -EINPROGRESS;
}

int sysd_append_u64(sd_bus_message *m, const char *name, uint64_t v) {
        return sd_bus_message_append(m, "(sv)", name, "t", v);
}

/* An io property: reset the list, then one entry per limited disk. */
static int append_io(sd_bus_message *m, const char *name, const struct pw_io_limit *io, size_t n, int which) {
        int r;

        for (int pass = 0; pass < 2; pass++) {
                r = sd_bus_message_open_container(m, 'r', "sv");
                if (r >= 0)
                        r = sd_bus_message_append(m, "s", name);
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "a(st)");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "(st)");
                for (size_t i = 0; pass == 1 && r >= 0 && i < n; i++) {
                        uint64_t v = which == 0   ? io[i].read_bps
                                     : which == 1 ? io[i].write_bps
                                     : which == 2 ? io[i].read_iops
                                                  : io[i].write_iops;
                        char dev[64];

                        if (v == UNITS_MAX || io[i].absent)
                                continue;
                        snprintf(dev, sizeof(dev), "/dev/block/%u:%u", io[i].major, io[i].minor);
                        r = sd_bus_message_append(m, "(st)", dev, v);
                }
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
        }
        return 0;
}

int sysd_append_io_all(sd_bus_message *m, const struct pw_io_limit *io, size_t n) {
        static const char *const names[] = { "IOReadBandwidthMax", "IOWriteBandwidthMax", "IOReadIOPSMax",
                                             "IOWriteIOPSMax" };
        int r = 0;

        for (int k = 0; r >= 0 && k < 4; k++)
                r = append_io(m, names[k], io, n, k);
        return r;
}

int sysd_append_class_properties(sd_bus_message *m, const struct pw_job_class *c) {
        int r;

        r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", 1);
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)", "IOAccounting", "b", 1);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryHigh", c->memory_high);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryMax", c->memory_max);
        if (r >= 0)
                r = sysd_append_u64(m, "MemorySwapMax", c->memory_swap_max);
        if (r >= 0)
                r = sysd_append_u64(m, "CPUWeight", c->cpu_weight);
        if (r >= 0)
                r = sysd_append_io_all(m, c->io, c->n_io);
        return r;
}

/* A SetUnitProperties(unit, runtime=true, ...) message, properties open. */
int sysd_new_set_properties(struct backend *b, const char *unit, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(sysd_data(b)->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", unit, 1);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int sysd_call(struct backend *b, sd_bus_message *m, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r = sd_bus_call(sysd_data(b)->bus, m, BUS_TIMEOUT_USEC, &e, ret_reply);

        if (r < 0) {
                log_debug("systemd: %s: %s", e.name ?: "?", e.message ?: strerror(-r));
                return sysd_bus_errno(&e, r);
        }
        return 0;
}

/*
 * Calls the event loop does not wait for: every write of this backend (class
 * slices and limits, protection, the governor's actions, freezing, stops),
 * and the read of a unit's own values before a rule places it.
 * They are counted until answered, so that whoever must know they are in
 * force (a reload's answer, the daemon's exit) waits for them without
 * holding the loop: sysd_when_answered().
 */
struct later {
        struct backend *b;
        const char *what;
        sysd_answer_fn done; /* NULL: an error is logged */
        sysd_reply_fn reply; /* instead of done: the reply itself */
        void *userdata;      /* done's or reply's, freed with the call */
};

static void later_free(void *p) {
        struct later *l = p;

        free(l->userdata);
        free(l);
}

static void answered(struct systemd_data *d) {
        struct sysd_waiter *w;
        size_t n;

        assert(d->n_later > 0);
        if (--d->n_later > 0 || d->n_waiters == 0)
                return;
        /* Taken first: a waiter may send calls and wait again. */
        w = TAKE_PTR(d->waiters);
        n = d->n_waiters;
        d->n_waiters = d->allocated_waiters = 0;
        for (size_t i = 0; i < n; i++)
                w[i].fn(w[i].userdata);
        free(w);
}

static int on_later_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct later *l = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (l->reply)
                l->reply(l->b, reply, l->userdata);
        else if (l->done)
                l->done(l->b, e ? sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO)) : 0,
                        e ? e->message ?: e->name : NULL, l->userdata);
        else if (e)
                log_warning("systemd: %s failed: %s", l->what, e->message ?: e->name);
        answered(sysd_data(l->b));
        return 0;
}

static int call_later(struct backend *b, sd_bus_message *m, const struct later *how) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        struct later *l = malloc(sizeof(*l));
        int r;

        if (!l) {
                free(how->userdata);
                return -ENOMEM;
        }
        *l = *how;
        r = sd_bus_call_async(d->bus, &slot, m, on_later_reply, l, BUS_TIMEOUT_USEC);
        if (r < 0) {
                later_free(l);
                return r;
        }
        /* The bus owns it from here, and frees l with it (answered, or the bus closed). */
        (void) sd_bus_slot_set_destroy_callback(slot, later_free);
        (void) sd_bus_slot_set_floating(slot, 1);
        d->n_later++;
        return 0;
}

int sysd_call_later_then(struct backend *b, sd_bus_message *m, const char *what, sysd_answer_fn done, void *userdata) {
        return call_later(b, m, &(struct later){ .b = b, .what = what, .done = done, .userdata = userdata });
}

int sysd_call_later_reply(struct backend *b, sd_bus_message *m, const char *what, sysd_reply_fn fn, void *userdata) {
        assert(fn);
        return call_later(b, m, &(struct later){ .b = b, .what = what, .reply = fn, .userdata = userdata });
}

int sysd_call_later(struct backend *b, sd_bus_message *m, const char *what) {
        return sysd_call_later_then(b, m, what, NULL, NULL);
}

int sysd_when_answered(struct backend *b, void (*fn)(void *userdata), void *userdata) {
        struct systemd_data *d = sysd_data(b);

        if (d->n_later == 0)
                return 0;
        if (GROW(d->waiters, d->allocated_waiters, d->n_waiters + 1) < 0)
                return -ENOMEM;
        d->waiters[d->n_waiters++] = (struct sysd_waiter){ .fn = fn, .userdata = userdata };
        return 1;
}

int sysd_method_later(struct backend *b, const char *member, const char *unit, const char *mode) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(sysd_data(b)->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, member);
        if (r >= 0 && unit)
                r = sd_bus_message_append(m, "s", unit);
        if (r >= 0 && mode)
                r = sd_bus_message_append(m, "s", mode);
        return r < 0 ? r : sysd_call_later(b, m, member);
}

/* Units matching a pattern: (name, description, active state). */
int sysd_list_units(struct backend *b, const char *pattern,
                    int (*fn)(struct backend *b, const char *name, const char *desc, const char *active, void *ud),
                    void *ud) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const char *name, *desc, *load, *active;
        int r;

        r = sd_bus_message_new_method_call(sysd_data(b)->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "ListUnitsByPatterns");
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 1, pattern);
        if (r < 0)
                return r;
        r = sysd_call(b, m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ssssssouso)", &name, &desc, &load, &active, NULL, NULL, NULL, NULL,
                                        NULL, NULL)) > 0) {
                int k = fn(b, name, desc, active, ud);

                if (k < 0)
                        return k;
        }
        return r;
}

/* ---- one property of a unit (the governor's actions, on a class's slice or a unit) ---- */

int sysd_unit_freeze(struct backend *b, const char *unit, bool frozen) {
        return sysd_method_later(b, frozen ? "FreezeUnit" : "ThawUnit", unit, NULL);
}

int sysd_unit_set_memory_high(struct backend *b, const char *unit, uint64_t bytes) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sysd_new_set_properties(b, unit, &m);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryHigh", bytes);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sysd_call_later(b, m, "setting MemoryHigh");
        return r;
}

int sysd_unit_set_io(struct backend *b, const char *unit, const struct pw_io_limit *io, size_t n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sysd_new_set_properties(b, unit, &m);
        if (r >= 0)
                r = sysd_append_io_all(m, io, n);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sysd_call_later(b, m, "setting io limits");
        return r;
}
