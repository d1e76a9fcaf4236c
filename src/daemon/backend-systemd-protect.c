/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd backend's protection: the ledger (ledger.h) on units'
 * MemoryMin, MemoryLow and MemorySwapMax, and, for a cgroup: entry inside a
 * unit's delegated tree, the engine's ledger on cgroupfs.  What the ledger
 * reads of a unit (its own values, its cgroup) is asked of PID 1 without
 * waiting; the unit waits meanwhile, and protect.c applies again when the
 * answers are in.
 */
#include <assert.h>

#include "backend-systemd.h"
#include "log.h"
#include "util.h"

bool sysd_protect_valid_key(const char *unit) {
        return !policy_unit_name_problem(unit);
}

/* A unit's cgroup path ends in the unit's name. */
static const char *unit_key(const char *path) {
        const char *last = strrchr(path, '/');

        return last ? last + 1 : path;
}

/*
 * A protected unit's own values and its cgroup, asked of PID 1 without waiting: GetUnit, then one
 * Properties.GetAll on the object it names, the first time the ledger reads the unit (a protected unit, or a
 * slice above one) or when its cgroup is not known.  Not GetAll on the unit's path at once: that would load a
 * unit systemd does not have, and its announcement (UnitNew), an event of the unit, would have it asked again,
 * in a loop; a unit that is not loaded does not run and has nothing to read.  Meanwhile the ledger keeps the unit
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
        char *cgroup;         /* answered: its cgroup, relative to the mount (NULL: none, it does not run) */
        bool not_loaded;      /* answered: systemd has no such unit loaded (no values, no cgroup) */
        unsigned long events; /* answered: the units' events heard by then (a later one may change its cgroup) */
};

static void own_drop(struct systemd_data *d, struct sysd_own *o) {
        free(o->unit);
        free(o->cgroup);
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
                        if (r >= 0 && cgroup[0] && !streq(cgroup, "/") && !(o->cgroup = strdup(cgroup + 1)))
                                r = -ENOMEM;
                        if (r >= 0)
                                sysd_unit_cgroup_keep(d, o->unit, cgroup);
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

/* The answer came: what it says of the unit is kept, and the units that waited hear once none is still to come. */
static void own_done(struct systemd_data *d, struct sysd_own *o, int error, const char *message) {
        assert(d->n_owns_asked > 0);
        d->n_owns_asked--;
        if (o && !o->answered) {
                o->error = error;
                o->answered = true;
                o->answered_usec = now_usec(CLOCK_MONOTONIC);
                o->events = d->unit_events;
                if (error < 0)
                        log_warning(
                                "systemd: unit %s: its own MemoryMin, MemoryLow and MemorySwapMax cannot be read: "
                                "%s",
                                o->unit, message ?: strerror(-error));
        }
        if (d->n_owns_asked == 0)
                own_tell_waiting(d);
}

static void own_answered(struct backend *b, sd_bus_message *reply, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        struct sysd_own *o = own_get(d, userdata);
        int r = 0;

        if (e)
                r = sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO));
        else if (o && !o->answered)
                r = parse_own(d, reply, o);
        own_done(d, o, r, e ? e->message ?: e->name : NULL);
}

/* GetUnit's answer: a unit that is not loaded has no cgroup and no values to keep (it is not asked for them:
 * asking its object would load it, and systemd would announce it, an event that would ask again); a loaded one's
 * object is asked for them. */
static void own_located(struct backend *b, sd_bus_message *reply, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        struct sysd_own *o = own_get(d, userdata);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *get = NULL;
        const char *path;
        char *name;
        int r;

        if (!o || o->answered) {
                own_done(d, o, 0, NULL);
                return;
        }
        if (e) {
                r = sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO));
                if (r == -ENOENT) { /* not loaded: it does not run */
                        sysd_unit_cgroup_keep(d, o->unit, "");
                        o->not_loaded = true;
                        r = 0;
                }
                own_done(d, o, r, r < 0 ? e->message ?: e->name : NULL);
                return;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0)
                r = sd_bus_message_new_method_call(d->bus, &get, SD_DEST, path, "org.freedesktop.DBus.Properties",
                                                   "GetAll");
        if (r >= 0)
                r = sd_bus_message_append(get, "s", sysd_unit_interface(o->unit));
        if (r >= 0)
                r = (name = strdup(o->unit)) ? 0 : -ENOMEM;
        if (r >= 0)
                r = sysd_call_later_reply(b, get, "reading a protected unit's own values", own_answered, name);
        if (r < 0)
                own_done(d, o, r, NULL); /* asked again after OWN_ANSWER_USEC */
}

/* Asks PID 1 for the unit's own values and cgroup (GetUnit, then GetAll on its object): -EINPROGRESS, or why it
 * cannot be asked. */
static int own_ask(struct backend *b, const char *unit) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char *name;
        int r;

        if (!sysd_unit_interface(unit))
                return -EINVAL;
        r = sd_bus_message_new_method_call(d->bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", unit);
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
        r = sysd_call_later_reply(b, m, "finding a protected unit", own_located, name);
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
        if (o->not_loaded)
                return -ENOENT; /* gone */
        *ret = o->v;
        ret->has_swap = swap;
        o->used = true;
        return 0;
}

/* The unit's cgroup relative to the mount, without waiting: as PID 1 said before (kept, or its last answer here
 * while no unit's event came since: an answer is not asked again in a loop), or -EINPROGRESS while it is asked
 * (with the unit's own values); -ENOENT if it has none. */
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
        if (o && o->events == d->unit_events) { /* the answer holds: no unit started or stopped since */
                if (!o->cgroup)
                        return -ENOENT;
                *ret = strdup(o->cgroup);
                return *ret ? 0 : -ENOMEM;
        }
        if (o)
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
int sysd_protect_set(struct backend *b, const struct backend_protect *req, size_t n,
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
        r = cgroup_protect_set(b->engine, &sysd_data(b)->cgroup_protection, direct, n, dres);
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

int sysd_protect_path(struct backend *b, const struct backend_protect *p, char **ret_path) {
        if (p->unit)
                return sysd_unit_cgroup_later(b, p->unit, ret_path);
        *ret_path = strdup(p->cgroup + 1);
        return *ret_path ? 0 : -ENOMEM;
}

void sysd_protect_done(struct systemd_data *d) {
        while (d->n_owns > 0)
                own_drop(d, &d->owns[0]);
        d->owns = mfree(d->owns);
        for (size_t i = 0; i < d->n_protect_waiting; i++)
                free(d->protect_waiting[i]);
        d->protect_waiting = mfree(d->protect_waiting);
        d->n_protect_waiting = 0;
}
