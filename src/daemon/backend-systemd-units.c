/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd backend, units placed by rule: a unit the policy's units:
 * rules name carries its class's limits as runtime unit properties
 * (SetUnitProperties with runtime=true, kept in /run/systemd/system.control
 * across daemon-reload).  Set on a unit that has not started, they are in
 * force from its first instruction.  Its own values are saved first (and
 * persisted, so that a restarted daemon can still give them back) and are
 * set again when the rule goes or the daemon stops with restore_on_stop:
 * systemd has no way to unset a runtime property, so they stay as runtime
 * properties of equal value until the next boot.  Neither write waits for
 * PID 1: an error is logged when it answers, and own values that systemd
 * did not take stay saved for the next try.  Reading a unit's own values,
 * the first time a rule places it, does not wait either: the class's limits
 * are sent when PID 1 has answered with them (one GetAll on the unit's
 * object, which loads a unit that has not started).
 */
#include <ctype.h>
#include <inttypes.h>
#include <libgen.h>

#include "backend-systemd.h"
#include "cgroup-values.h"
#include "log.h"
#include "units.h"
#include "util.h"

static const char *const io_properties[] = { "IOReadBandwidthMax", "IOWriteBandwidthMax", "IOReadIOPSMax",
                                             "IOWriteIOPSMax" };

/* A unit's own values of what pagewarden sets on it. */
struct unit_limits {
        char *unit;
        uint64_t memory_high, memory_max, memory_swap_max, cpu_weight;
        char *io[4];    /* each io property as "PATH=VALUE PATH=VALUE" ("" when empty) */
        bool restoring; /* its own values are sent back, not answered yet: forgotten when they are */
        /* Its own values are asked for, not answered yet (not in the state file), and then_class (the latest
         * class's limits, a SetUnitProperties message) is sent when they are. */
        bool reading;
        sd_bus_message *then_class;
};

static void limits_done(struct unit_limits *l) {
        free(l->unit);
        for (int k = 0; k < 4; k++)
                free(l->io[k]);
        sd_bus_message_unref(l->then_class);
        *l = (struct unit_limits){};
}

static struct unit_limits *saved_find(struct backend *b, const char *unit) {
        struct systemd_data *d = sysd_data(b);

        for (size_t i = 0; i < d->n_saved; i++)
                if (streq(d->saved[i].unit, unit))
                        return &d->saved[i];
        return NULL;
}

/* Forgets l, an entry of the saved array (its last entry takes its place). */
static void saved_remove(struct backend *b, struct unit_limits *l) {
        struct systemd_data *d = sysd_data(b);

        limits_done(l);
        *l = d->saved[--d->n_saved];
}

/* ---- persistence: one line per unit, tab-separated ---- */

static int state_save(struct backend *b) {
        struct systemd_data *d = sysd_data(b);
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        if (!d->units_state)
                return 0;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fputs("# pagewarden: own MemoryHigh MemoryMax MemorySwapMax CPUWeight IO*Max of units placed by rule\n", f);
        for (size_t i = 0; i < d->n_saved; i++) {
                const struct unit_limits *l = &d->saved[i];

                if (l->reading)
                        continue; /* nothing was written to it yet */
                fprintf(f, "%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\t%s\t%s\n", l->unit,
                        l->memory_high, l->memory_max, l->memory_swap_max, l->cpu_weight, l->io[0], l->io[1], l->io[2],
                        l->io[3]);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        return write_file_atomic(d->units_state, text);
}

static int add_saved(struct backend *b, struct unit_limits *l) {
        struct systemd_data *d = sysd_data(b);

        if (GROW(d->saved, d->allocated_saved, d->n_saved + 1) < 0)
                return -ENOMEM;
        d->saved[d->n_saved++] = *l;
        *l = (struct unit_limits){};
        return 0;
}

static int parse_line(char *line, struct unit_limits *ret) {
        char *f[9];
        size_t n = 0;

        for (char *p = line; n < 9; n++) {
                f[n] = p;
                p = strchr(p, '\t');
                if (!p) {
                        n++;
                        break;
                }
                *p++ = '\0';
        }
        if (n != 9 || policy_unit_name_problem(f[0]))
                return -EINVAL;
        *ret = (struct unit_limits){ .unit = strdup(f[0]) };
        if (sscanf(f[1], "%" SCNu64, &ret->memory_high) != 1 || sscanf(f[2], "%" SCNu64, &ret->memory_max) != 1 ||
            sscanf(f[3], "%" SCNu64, &ret->memory_swap_max) != 1 || sscanf(f[4], "%" SCNu64, &ret->cpu_weight) != 1) {
                limits_done(ret);
                return -EINVAL;
        }
        for (int k = 0; k < 4; k++)
                ret->io[k] = strdup(f[5 + k]);
        if (!ret->unit || !ret->io[0] || !ret->io[1] || !ret->io[2] || !ret->io[3]) {
                limits_done(ret);
                return -ENOMEM;
        }
        return 0;
}

static int state_load(struct backend *b) {
        _cleanup_free_ char *text = NULL;
        char *save = NULL;
        int r;

        r = read_full_file(sysd_data(b)->units_state, 4 * 1024 * 1024, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct unit_limits l;

                if (line[0] == '#')
                        continue;
                r = parse_line(line, &l);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || saved_find(b, l.unit)) { /* a damaged line: not restored rather than garbage */
                        limits_done(&l);
                        continue;
                }
                r = add_saved(b, &l);
                if (r < 0) {
                        limits_done(&l);
                        return r;
                }
        }
        return 0;
}

int sysd_units_init(struct backend *b, const char *state_dir) {
        if (!state_dir)
                return 0;
        if (asprintf(&sysd_data(b)->units_state, "%s/units.state", state_dir) < 0)
                return -ENOMEM;
        return state_load(b);
}

void sysd_units_done(struct backend *b) {
        struct systemd_data *d = sysd_data(b);

        d->unit_new = sd_bus_slot_unref(d->unit_new);
        d->job_removed = sd_bus_slot_unref(d->job_removed);
        d->unit_changed = sd_bus_slot_unref(d->unit_changed);
        for (size_t i = 0; i < d->n_saved; i++)
                limits_done(&d->saved[i]);
        d->saved = mfree(d->saved);
        d->n_saved = 0;
        d->units_state = mfree(d->units_state);
}

/* ---- writing ---- */

/* One io property from its text form. */
static int append_io_text(sd_bus_message *m, const char *property, const char *text) {
        _cleanup_free_ char *copy = strdup(text);
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        r = sd_bus_message_open_container(m, 'r', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", property);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "a(st)");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(st)");
        for (char *item = strtok_r(copy, " ", &save); r >= 0 && item; item = strtok_r(NULL, " ", &save)) {
                char *eq = strrchr(item, '=');
                uint64_t v;

                if (!eq || sscanf(eq + 1, "%" SCNu64, &v) != 1)
                        continue;
                *eq = '\0';
                r = sd_bus_message_append(m, "(st)", item, v);
        }
        for (int k = 0; r >= 0 && k < 3; k++)
                r = sd_bus_message_close_container(m);
        return r;
}

/* Sends m without waiting; done hears the answer with the unit's name. */
static int call_for_unit(struct backend *b, sd_bus_message *m, const char *what, sysd_answer_fn done,
                         const char *unit) {
        char *name = strdup(unit);

        return name ? sysd_call_later_then(b, m, what, done, name) : -ENOMEM;
}

/* The answer to giving a unit its own values back: forgotten once systemd has them (or the unit is gone), kept
 * for the next restore if not, and kept as well if the unit was placed again meanwhile. */
static void own_written(struct backend *b, int r, const char *message, void *userdata) {
        struct systemd_data *d = sysd_data(b);
        const char *unit = userdata;
        struct unit_limits *l = saved_find(b, unit);

        if (!l || !l->restoring)
                return;
        l->restoring = false;
        if (r < 0 && r != -ENOENT) {
                log_warning("systemd: unit %s: cannot give it its own values back (kept for the next try): %s", unit,
                            message);
                return;
        }
        saved_remove(b, l);
        r = state_save(b);
        if (r < 0)
                log_warning_errno(r, "Cannot update %s: %m", d->units_state);
}

static int write_own(struct backend *b, const struct unit_limits *l) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sysd_new_set_properties(b, l->unit, &m);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryHigh", l->memory_high);
        if (r >= 0)
                r = sysd_append_u64(m, "MemoryMax", l->memory_max);
        if (r >= 0)
                r = sysd_append_u64(m, "MemorySwapMax", l->memory_swap_max);
        if (r >= 0)
                r = sysd_append_u64(m, "CPUWeight", l->cpu_weight);
        for (int k = 0; r >= 0 && k < 4; k++)
                r = append_io_text(m, io_properties[k], l->io[k]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r < 0 ? r : call_for_unit(b, m, "giving a unit its own values back", own_written, l->unit);
}

static void class_written(struct backend *b, int r, const char *message, void *userdata) {
        if (r < 0 && r != -ENOENT)
                log_warning("systemd: unit %s: cannot give it its class's limits: %s", (const char *) userdata,
                            message);
}

/* ---- reading a unit's own values ---- */

/* An io property's value (a(st), the variant entered) as "PATH=VALUE PATH=VALUE". */
static int read_io(sd_bus_message *reply, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        const char *dev;
        uint64_t v;
        FILE *f;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(st)");
        if (r < 0)
                return r;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        for (bool first = true; (r = sd_bus_message_read(reply, "(st)", &dev, &v)) > 0; first = false)
                fprintf(f, "%s%s=%" PRIu64, first ? "" : " ", dev, v);
        if (fclose(f) != 0)
                return -ENOMEM;
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;
        free(*ret); /* a property given twice: the last one */
        *ret = TAKE_PTR(text);
        return 0;
}

/* The values pagewarden sets, from GetAll's a{sv}; -EBADMSG if one is missing. */
static int parse_own(sd_bus_message *reply, struct unit_limits *l) {
        static const char *const u64[] = { "MemoryHigh", "MemoryMax", "MemorySwapMax", "CPUWeight" };
        uint64_t *dst[] = { &l->memory_high, &l->memory_max, &l->memory_swap_max, &l->cpu_weight };
        unsigned found = 0;
        const char *name;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                int k = -1;

                r = sd_bus_message_read(reply, "s", &name);
                for (size_t i = 0; r >= 0 && k < 0 && i < ELEMENTSOF(u64); i++)
                        if (streq(name, u64[i])) {
                                k = (int) i;
                                r = sd_bus_message_read(reply, "v", "t", dst[i]);
                        }
                for (size_t i = 0; r >= 0 && k < 0 && i < ELEMENTSOF(io_properties); i++)
                        if (streq(name, io_properties[i])) {
                                k = (int) (ELEMENTSOF(u64) + i);
                                r = sd_bus_message_enter_container(reply, 'v', "a(st)");
                                if (r >= 0)
                                        r = read_io(reply, &l->io[i]);
                                if (r >= 0)
                                        r = sd_bus_message_exit_container(reply);
                        }
                if (r >= 0 && k < 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (k >= 0)
                        found |= 1u << k;
        }
        if (r < 0)
                return r;
        return found == (1u << (ELEMENTSOF(u64) + ELEMENTSOF(io_properties))) - 1 ? 0 : -EBADMSG;
}

/* PID 1's answer with a unit's own values: kept (and persisted), then the class's limits sent. */
static void own_answered(struct backend *b, sd_bus_message *reply, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const char *unit = userdata;
        struct unit_limits *l = saved_find(b, unit);
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        if (!l || !l->reading)
                return; /* its rule went meanwhile (restored before anything was written), or asked twice */
        r = e ? sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO)) : parse_own(reply, l);
        if (r < 0) {
                log_warning("systemd: unit %s: cannot read its own values, so it does not get its class's limits: %s",
                            unit,
                            e               ? e->message ?: e->name
                            : r == -EBADMSG ? "the answer lacks one of MemoryHigh, MemoryMax, MemorySwapMax, "
                                              "CPUWeight, IO*Max"
                                            : strerror(-r));
                saved_remove(b, l);
                return;
        }
        l->reading = false;
        m = TAKE_PTR(l->then_class);
        r = state_save(b);
        if (r < 0)
                log_warning_errno(r, "Cannot keep %s's own values in %s: %m", unit, sysd_data(b)->units_state);
        r = m ? call_for_unit(b, m, "giving a unit its class's limits", class_written, unit) : 0;
        if (r < 0)
                log_warning_errno(r, "systemd: unit %s: cannot give it its class's limits: %m", unit);
}

/* Asks PID 1 for a unit's own values (GetAll on its object loads a unit that has not started); a new entry
 * waits for them with the class's limits m.  The answer comes through the loop, never before this returns. */
static int ask_own(struct backend *b, const char *unit, sd_bus_message *m) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *get = NULL;
        _cleanup_free_ char *path = NULL, *name = NULL;
        struct unit_limits l = { .reading = true };
        const char *iface = sysd_unit_interface(unit);
        int r;

        if (!iface)
                return -EINVAL;
        r = sd_bus_path_encode(SD_PATH "/unit", unit, &path);
        if (r >= 0)
                r = sd_bus_message_new_method_call(sysd_data(b)->bus, &get, SD_DEST, path,
                                                   "org.freedesktop.DBus.Properties", "GetAll");
        if (r >= 0)
                r = sd_bus_message_append(get, "s", iface);
        if (r < 0)
                return r;
        l.unit = strdup(unit);
        l.then_class = sd_bus_message_ref(m);
        name = strdup(unit);
        if (!l.unit || !name)
                r = -ENOMEM;
        if (r >= 0)
                r = sysd_call_later_reply(b, get, "reading a unit's own values", own_answered, TAKE_PTR(name));
        if (r >= 0)
                r = add_saved(b, &l); /* if not, the answer finds no entry and is dropped */
        limits_done(&l);
        return r < 0 ? r : 0;
}

/* ---- placing and giving back ---- */

/* The class's limits as a SetUnitProperties message for unit. */
static int class_message(struct backend *b, const char *unit, const struct pw_job_class *c, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sysd_new_set_properties(b, unit, &m);
        if (r >= 0)
                r = sysd_append_class_properties(m, c);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Nothing here waits for PID 1: the class's limits go once the unit's own values are saved (the first time, when
 * PID 1 has answered with them); errors are logged when it answers. */
int sysd_unit_apply(struct backend *b, const char *unit, const struct pw_job_class *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        struct unit_limits *l = saved_find(b, unit);
        int r;

        r = class_message(b, unit, c, &m);
        if (r < 0)
                return r;
        if (!l)
                return ask_own(b, unit, m);
        if (l->reading) { /* placed again before its own values came: the latest class goes */
                sd_bus_message_unref(l->then_class);
                l->then_class = TAKE_PTR(m);
                return 0;
        }
        l->restoring = false; /* placed again before its own values were answered: they stay saved */
        return call_for_unit(b, m, "giving a unit its class's limits", class_written, unit);
}

int sysd_unit_restore(struct backend *b, const char *unit) {
        struct unit_limits *l = saved_find(b, unit);
        int r;

        if (!l || l->restoring)
                return 0;
        if (l->reading) { /* nothing was written to it: nothing to give back */
                saved_remove(b, l);
                return 0;
        }
        r = write_own(b, l);
        if (r < 0)
                return r; /* kept: tried again at the next restore */
        l->restoring = true;
        return 0;
}

/* ---- finding and following units ---- */

struct found {
        char **names;
        size_t n, allocated;
};

static int found_add(struct found *f, const char *name) {
        char *copy;

        for (size_t i = 0; i < f->n; i++)
                if (streq(f->names[i], name))
                        return 0;
        copy = strdup(name);
        if (!copy || GROW(f->names, f->allocated, f->n + 1) < 0) {
                free(copy);
                return -ENOMEM;
        }
        f->names[f->n++] = copy;
        return 0;
}

static void found_done(struct found *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->names[i]);
        free(f->names);
        *f = (struct found){};
}

/*
 * A search under way: the loaded units and the unit files that match the
 * patterns, asked of PID 1 in two calls the loop does not wait for.  fn gets
 * the names once both are answered (the loaded units first), and nothing if
 * either failed.  Each call's slot holds a reference: the bus frees the
 * search with the last (answered, or the bus closed, when fn is not called).
 */
struct units_find {
        void (*fn)(void *userdata, const char *unit);
        void *userdata;
        struct found loaded, files;
        unsigned refs, answered;
        int r;
};

static void units_find_unref(void *p) {
        struct units_find *u = p;

        if (--u->refs > 0)
                return;
        found_done(&u->loaded);
        found_done(&u->files);
        free(u);
}

static void units_find_answered(struct units_find *u) {
        struct found all = {};

        if (++u->answered < 2)
                return;
        if (u->r < 0) {
                log_warning("systemd: cannot list the units the units: rules name: %s", strerror(-u->r));
                return;
        }
        for (size_t i = 0; u->r >= 0 && i < u->loaded.n; i++)
                u->r = found_add(&all, u->loaded.names[i]);
        for (size_t i = 0; u->r >= 0 && i < u->files.n; i++)
                u->r = found_add(&all, u->files.names[i]);
        for (size_t i = 0; u->r >= 0 && i < all.n; i++)
                u->fn(u->userdata, all.names[i]);
        if (u->r < 0)
                log_error("systemd: out of memory listing units");
        found_done(&all);
}

static int reply_error(sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (!e)
                return 0;
        log_debug("systemd: %s: %s", e->name ?: "?", e->message ?: "");
        return sysd_bus_errno(e, -(sd_bus_error_get_errno(e) ?: EIO));
}

static int on_loaded(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct units_find *u = userdata;
        const char *name;
        int r = reply_error(reply);

        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, NULL, NULL, NULL, NULL,
                                                  NULL, NULL, NULL)) > 0)
                r = found_add(&u->loaded, name);
        if (r < 0 && u->r >= 0)
                u->r = r;
        units_find_answered(u);
        return 0;
}

/* Unit files on disk (units that are not loaded yet), templates aside: only their instances are units. */
static int on_files(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct units_find *u = userdata;
        const char *path, *state;
        int r = reply_error(reply);

        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', "(ss)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ss)", &path, &state)) > 0) {
                const char *name = strrchr(path, '/');

                name = name ? name + 1 : path;
                if (!strstr(name, "@.") && !policy_unit_name_problem(name))
                        r = found_add(&u->files, name);
        }
        if (r < 0 && u->r >= 0)
                u->r = r;
        units_find_answered(u);
        return 0;
}

/* Sends member(states: none, patterns) without waiting; the slot holds a reference to u. */
static int units_find_send(struct backend *b, struct units_find *u, const char *member, const char *const *patterns,
                           size_t n, sd_bus_message_handler_t handler) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        sd_bus *bus = sysd_data(b)->bus;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, member);
        if (r >= 0)
                r = sd_bus_message_append(m, "as", 0);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "s");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(m, "s", patterns[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, m, handler, u, BUS_TIMEOUT_USEC);
        if (r < 0)
                return r;
        u->refs++;
        (void) sd_bus_slot_set_destroy_callback(slot, units_find_unref);
        (void) sd_bus_slot_set_floating(slot, 1);
        return 0;
}

int sysd_units_find(struct backend *b, const char *const *patterns, size_t n,
                    void (*fn)(void *userdata, const char *unit), void *userdata) {
        struct units_find *u = calloc(1, sizeof(*u));
        int r;

        if (!u)
                return -ENOMEM;
        *u = (struct units_find){ .fn = fn, .userdata = userdata, .refs = 1 };
        r = units_find_send(b, u, "ListUnitsByPatterns", patterns, n, on_loaded);
        if (r >= 0)
                r = units_find_send(b, u, "ListUnitFilesByPatterns", patterns, n, on_files);
        if (r < 0)
                u->r = r, u->answered = 1; /* the first, if sent, answers into a failed search */
        units_find_unref(u);
        return r;
}

/* ---- units' events ---- */

/*
 * A unit started, stopped or changed: what was kept of its cgroup may be wrong now, and whoever needs it next asks
 * again.  Not while it is being asked: the event may be the ask's own doing (asking a unit's object loads a unit
 * that systemd has just unloaded, and systemd announces it), and forgetting would ask again, and again, for as long
 * as systemd keeps unloading an idle unit (test-backend-systemd reproduces it); the answer on its way is
 * the later one.
 */
static void unit_event(struct systemd_data *d, const char *unit) {
        d->unit_events++;
        if (!sysd_unit_cgroup_is_asking(d, unit, 0))
                sysd_unit_cgroup_forget(d, unit);
        sysd_units_tell(d, unit);
}

static int on_unit_new(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *unit, *path;

        if (sd_bus_message_read(m, "so", &unit, &path) >= 0)
                unit_event(userdata, unit);
        return 0;
}

static int on_job_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *job, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) >= 0)
                unit_event(userdata, unit);
        return 0;
}

/* "/org/freedesktop/systemd1/unit/backup_2eservice" is backup.service (sd_bus_path_encode's escaping). */
static int unit_from_path(const char *path, char *buf, size_t len) {
        const char *p = startswith(path, SD_PATH "/unit/");
        size_t n = 0;

        if (!p)
                return -EINVAL;
        for (; *p && n + 1 < len; n++) {
                unsigned hex;

                if (*p == '_' && sscanf(p + 1, "%2x", &hex) == 1 && isxdigit((unsigned char) p[1]) &&
                    isxdigit((unsigned char) p[2])) {
                        buf[n] = (char) hex;
                        p += 3;
                } else
                        buf[n] = *p++;
        }
        buf[n] = '\0';
        return *p ? -ENAMETOOLONG : 0;
}

/* A unit's state changed (it started, or stopped): what a JobRemoved does not tell of a unit that runs
 * between its start job and its end (ExecStartPost=, a oneshot). */
static int on_unit_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        char unit[256];

        if (unit_from_path(sd_bus_message_get_path(m), unit, sizeof(unit)) >= 0)
                unit_event(userdata, unit);
        return 0;
}

int sysd_units_watch(struct backend *b, void (*fn)(void *userdata, const char *unit), void *userdata) {
        struct systemd_data *d = sysd_data(b);
        size_t i = 0;
        int r;

        while (i < SYSD_UNIT_LISTENERS && d->unit_listeners[i].fn)
                i++;
        if (i == SYSD_UNIT_LISTENERS)
                return -ENOSPC;
        d->unit_listeners[i].fn = fn;
        d->unit_listeners[i].userdata = userdata;
        if (d->unit_new)
                return 0;
        r = sd_bus_match_signal_async(d->bus, &d->unit_new, SD_DEST, SD_PATH, SD_MANAGER, "UnitNew", on_unit_new, NULL,
                                      d);
        if (r >= 0)
                r = sd_bus_match_signal_async(d->bus, &d->job_removed, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
                                              on_job_done, NULL, d);
        if (r >= 0)
                r = sd_bus_add_match_async(d->bus, &d->unit_changed,
                                           "type='signal',sender='" SD_DEST
                                           "',interface='org.freedesktop.DBus.Properties',"
                                           "member='PropertiesChanged',arg0='org.freedesktop.systemd1.Unit'",
                                           on_unit_changed, NULL, d);
        /* systemd sends UnitNew and JobRemoved for every unit only to subscribers. */
        if (r >= 0)
                r = sysd_method_later(b, "Subscribe", NULL, NULL);
        return r;
}
