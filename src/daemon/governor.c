/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>

#include "governor.h"
#include "units.h"
#include "util.h"

#define MIB (UINT64_C(1) << 20)

void governor_init(struct governor *g, const struct pw_settings *s, uint64_t ram_bytes) {
        *g = (struct governor){
                .window_usec = s->pressure.window_usec,
                .cooldown_usec = s->pressure.cooldown_usec,
                .release = s->pressure.release,
                .ram_bytes = ram_bytes,
        };
}

int governor_class_init(struct governor_class *c, const struct pw_job_class *pc) {
        *c = (struct governor_class){
                .configured_high = pc->memory_high,
                .floor_high = pc->memory_high_floor,
                .io_floor = pc->io_floor,
                .freeze_allowed = pc->freeze,
                .freeze_max_usec = pc->freeze_max_usec,
                .high = pc->memory_high,
        };
        snprintf(c->name, sizeof(c->name), "%s", pc->name);
        c->io = calloc(pc->n_io + 1, sizeof(*c->io));
        if (!c->io)
                return -ENOMEM;
        for (size_t i = 0; i < pc->n_io; i++)
                if (!pc->io[i].absent) /* a device not there has no io.max to tighten */
                        c->io[c->n_io++] = (struct governor_io){
                                .major = pc->io[i].major,
                                .minor = pc->io[i].minor,
                                .configured_rbps = pc->io[i].read_bps,
                                .rbps = pc->io[i].read_bps,
                                .configured_wbps = pc->io[i].write_bps,
                                .wbps = pc->io[i].write_bps,
                        };
        return 0;
}

void governor_class_done(struct governor_class *c) {
        c->io = mfree(c->io);
        c->n_io = 0;
}

const char *governor_action_name(enum governor_action_type t) {
        switch (t) {
        case GOV_SET_MEMORY_HIGH:
                return "set memory.high";
        case GOV_SET_IO:
                return "set io.max";
        case GOV_FREEZE:
                return "freeze";
        case GOV_THAW:
                return "thaw";
        }
        return "?";
}

static bool io_at_floor(const struct governor_class *c) {
        for (size_t i = 0; i < c->n_io; i++)
                if ((c->io[i].rbps != UNITS_MAX && c->io[i].rbps > c->io_floor) ||
                    (c->io[i].wbps != UNITS_MAX && c->io[i].wbps > c->io_floor))
                        return false;
        return true;
}

static bool class_at_floor(const struct governor_class *c) {
        return c->high <= c->floor_high && io_at_floor(c);
}

bool governor_class_at_rest(const struct governor_class *c) {
        if (c->frozen || c->high != c->configured_high)
                return false;
        for (size_t i = 0; i < c->n_io; i++)
                if (c->io[i].rbps != c->io[i].configured_rbps || c->io[i].wbps != c->io[i].configured_wbps)
                        return false;
        return true;
}

bool governor_at_rest(const struct governor *g) {
        for (size_t i = 0; i < g->n_classes; i++)
                if (!governor_class_at_rest(&g->classes[i]))
                        return false;
        return true;
}

static struct governor_action *emit(struct governor_action *a, size_t *n, size_t max, enum governor_action_type t,
                                    struct governor_class *c, uint64_t value, uint64_t now, const char *why) {
        struct governor_action *x;

        if (*n >= max)
                return NULL;
        x = &a[(*n)++];
        *x = (struct governor_action){ .type = t, .class = c, .value = value };
        snprintf(x->reason, sizeof(x->reason), "%s", why);
        snprintf(c->last_action, sizeof(c->last_action), "%s: %s", governor_action_name(t), x->reason);
        c->last_action_usec = now;
        return x;
}

static uint64_t halve_to(uint64_t cur, uint64_t floor) {
        uint64_t v = cur / 2;

        return v < floor ? floor : v;
}

/* One step of the way back: a quarter of the distance from floor to target. */
static uint64_t step_up(uint64_t cur, uint64_t floor, uint64_t configured, uint64_t top) {
        uint64_t target = configured == UNITS_MAX ? top : configured, step;

        if (cur >= target)
                return configured;
        step = (target - (floor < target ? floor : 0)) / 4;
        if (step < MIB)
                step = MIB;
        return cur + step >= target ? configured : cur + step;
}

/* ---- did it help? ---- */

/* The harm per second from then to now (zeros for no time). */
static struct governor_rates harm_rates(const struct governor_harm *then, const struct governor_harm *now) {
        uint64_t dt = now->usec - then->usec;

        if (now->usec <= then->usec)
                return (struct governor_rates){};
        return (struct governor_rates){
                .stall_usec = (uint64_t) ((unsigned __int128) (now->stall_usec - then->stall_usec) * 1000000 / dt),
                .pages = (uint64_t) ((unsigned __int128) (now->pages - then->pages) * 1000000 / dt),
        };
}

/* Adds a step's harm; the marks are a window apart, so that mark[0] is one to two windows old. */
static void harm_add(struct governor *g, const struct governor_reading *r) {
        g->harm.usec = r->now_usec;
        g->harm.stall_usec += r->stall_usec;
        g->harm.pages += r->pages;
        if (!g->mark[1].usec)
                g->mark[0] = g->mark[1] = g->harm;
        else if (r->now_usec - g->mark[1].usec >= g->window_usec) {
                g->mark[0] = g->mark[1];
                g->mark[1] = g->harm;
        }
}

/* A rate fell by a quarter; with nothing measured before (no stall, nothing reclaimed: the signal was another
 * counter) there is nothing to judge by, and the action stands. */
static bool helped(const struct governor_rates *before, const struct governor_rates *after) {
        if (!before->stall_usec && !before->pages)
                return true;
        return (before->stall_usec && after->stall_usec * 4 <= before->stall_usec * 3) ||
               (before->pages && after->pages * 4 <= before->pages * 3);
}

/* The first tightening of a sequence: what to check it against, and what to give back if it does not help. */
static void check_start(struct governor *g, struct governor_class *c, uint64_t now) {
        if (c->check_since)
                return;
        c->check_since = now;
        c->check_from = g->harm;
        c->before_rates = harm_rates(&g->mark[0], &g->harm);
        c->before_high = c->high;
        for (size_t i = 0; i < c->n_io; i++) {
                c->io[i].rbps_before = c->io[i].rbps;
                c->io[i].wbps_before = c->io[i].wbps;
        }
}

/* It did not help: the limits as they were before, at once, and no tightening for the cooldown. */
static void undo(struct governor *g, struct governor_class *c, uint64_t now, const struct governor_rates *after,
                 struct governor_action *a, size_t *n, size_t max) {
        struct governor_action *x;
        size_t n0 = *n;
        bool io = false;
        char why[160];

        snprintf(why, sizeof(why),
                 "did not help, released after %.1f s (the protected applications stalled %" PRIu64 " -> %" PRIu64
                 " ms/s, lost %" PRIu64 " -> %" PRIu64 " pages/s)",
                 (double) (now - c->check_since) / 1e6, c->before_rates.stall_usec / 1000, after->stall_usec / 1000,
                 c->before_rates.pages, after->pages);
        if (c->frozen) {
                c->frozen = false;
                c->thawed_at = now;
                emit(a, n, max, GOV_THAW, c, 0, now, why);
        }
        if (c->high != c->before_high) {
                c->high = c->before_high;
                x = emit(a, n, max, GOV_SET_MEMORY_HIGH, c, c->high, now, why);
                if (x)
                        x->relaxes = true;
        }
        for (size_t i = 0; i < c->n_io; i++)
                if (c->io[i].rbps != c->io[i].rbps_before || c->io[i].wbps != c->io[i].wbps_before) {
                        c->io[i].rbps = c->io[i].rbps_before;
                        c->io[i].wbps = c->io[i].wbps_before;
                        io = true;
                }
        if (io && (x = emit(a, n, max, GOV_SET_IO, c, 0, now, why)))
                x->relaxes = true;
        if (*n == n0) { /* freeze_max thawed it already, and its limits were the floors */
                snprintf(c->last_action, sizeof(c->last_action), "%s", why);
                c->last_action_usec = now;
        }
        c->n_unhelpful++;
        c->hold_until = now + g->cooldown_usec;
}

/* The check of c's tightening, once its time has come; true if it was undone. */
static bool check(struct governor *g, struct governor_class *c, uint64_t now, struct governor_action *a, size_t *n,
                  size_t max) {
        struct governor_rates after;
        bool ok;

        if (!c->check_since || now - c->check_since < GOVERNOR_CHECK_WINDOWS * g->window_usec)
                return false;
        after = harm_rates(&c->check_from, &g->harm);
        ok = helped(&c->before_rates, &after);
        if (!ok)
                undo(g, c, now, &after, a, n, max);
        c->check_since = 0;
        return !ok;
}

/* ---- the ladder ---- */

static void tighten(struct governor *g, struct governor_class *c, const struct governor_reading *r,
                    struct governor_action *a, size_t *n, size_t max) {
        uint64_t base = c->high < c->memory_current ? c->high : c->memory_current, v;
        bool io = false;
        char why[160];

        check_start(g, c, r->now_usec);
        snprintf(why, sizeof(why), "pressure: %s", r->why ?: "?");
        v = halve_to(base, c->floor_high);
        if (v < c->high) {
                c->high = v;
                emit(a, n, max, GOV_SET_MEMORY_HIGH, c, v, r->now_usec, why);
                c->n_tightened++;
        }
        for (size_t i = 0; i < c->n_io; i++) {
                if (c->io[i].configured_rbps != UNITS_MAX && c->io[i].rbps > c->io_floor) {
                        c->io[i].rbps = halve_to(c->io[i].rbps, c->io_floor);
                        io = true;
                }
                if (c->io[i].configured_wbps != UNITS_MAX && c->io[i].wbps > c->io_floor) {
                        c->io[i].wbps = halve_to(c->io[i].wbps, c->io_floor);
                        io = true;
                }
        }
        if (io) {
                emit(a, n, max, GOV_SET_IO, c, 0, r->now_usec, why);
                c->n_tightened++;
        }
}

static void relax(struct governor *g, struct governor_class *c, uint64_t now, struct governor_action *a, size_t *n,
                  size_t max) {
        bool io = false;

        if (c->high != c->configured_high) {
                c->high = step_up(c->high, c->floor_high, c->configured_high, g->ram_bytes);
                struct governor_action *x =
                        emit(a, n, max, GOV_SET_MEMORY_HIGH, c, c->high, now, "calm for the cooldown");

                if (x)
                        x->relaxes = true;
                c->n_relaxed++;
        }
        for (size_t i = 0; i < c->n_io; i++) {
                if (c->io[i].rbps != c->io[i].configured_rbps) {
                        c->io[i].rbps =
                                step_up(c->io[i].rbps, c->io_floor, c->io[i].configured_rbps, c->io[i].configured_rbps);
                        io = true;
                }
                if (c->io[i].wbps != c->io[i].configured_wbps) {
                        c->io[i].wbps =
                                step_up(c->io[i].wbps, c->io_floor, c->io[i].configured_wbps, c->io[i].configured_wbps);
                        io = true;
                }
        }
        if (io) {
                struct governor_action *x = emit(a, n, max, GOV_SET_IO, c, 0, now, "calm for the cooldown");

                if (x)
                        x->relaxes = true;
        }
}

size_t governor_step(struct governor *g, const struct governor_reading *r, struct governor_action *a, size_t max) {
        uint64_t now = r->now_usec;
        bool all_running_at_floor = true, any_running = false;
        size_t n = 0;

        harm_add(g, r);
        /* Is it under pressure, or calm long enough to give room back? */
        if (r->pressure) {
                g->calm_since = 0;
                if (!g->under_pressure)
                        g->pressure_since = now;
                g->under_pressure = true;
        } else if (r->psi_avg10 * 100.0 < (double) g->release) {
                if (!g->calm_since)
                        g->calm_since = now;
                if (g->under_pressure && now - g->calm_since >= g->cooldown_usec)
                        g->under_pressure = false;
        } else
                g->calm_since = 0;

        for (size_t i = 0; i < g->n_classes; i++) {
                struct governor_class *c = &g->classes[i];

                /* A job never stays frozen for longer than its class allows. */
                if (c->frozen && now - c->frozen_since >= c->freeze_max_usec) {
                        c->frozen = false;
                        c->thawed_at = now;
                        emit(a, &n, max, GOV_THAW, c, 0, now, "frozen for freeze_max");
                }
                if (c->jobs > 0) {
                        any_running = true;
                        if (!class_at_floor(c))
                                all_running_at_floor = false;
                }
        }

        for (size_t i = 0; i < g->n_classes; i++) {
                struct governor_class *c = &g->classes[i];
                bool backed_off = !c->last_action_usec || now - c->last_action_usec >= g->window_usec;

                if (check(g, c, now, a, &n, max) || !backed_off)
                        continue;
                if (r->pressure) {
                        if (c->jobs == 0 || c->frozen || now < c->hold_until)
                                continue;
                        if (!class_at_floor(c))
                                tighten(g, c, r, a, &n, max);
                        else if (all_running_at_floor && any_running && c->freeze_allowed &&
                                 (!c->thawed_at || now - c->thawed_at >= c->freeze_max_usec)) {
                                char why[160];

                                snprintf(why, sizeof(why), "pressure at the floors: %s", r->why ?: "?");
                                check_start(g, c, now);
                                c->frozen = true;
                                c->frozen_since = now;
                                c->n_frozen++;
                                emit(a, &n, max, GOV_FREEZE, c, 0, now, why);
                        }
                } else if (!g->under_pressure && !governor_class_at_rest(c)) {
                        if (c->frozen) {
                                c->frozen = false;
                                c->thawed_at = now;
                                emit(a, &n, max, GOV_THAW, c, 0, now, "calm for the cooldown");
                        } else
                                relax(g, c, now, a, &n, max);
                }
        }
        return n;
}

/* ---- signals ---- */

/* cur - prev, or 0 when the counter went back (a new cgroup counts from 0). */
static uint64_t grew(uint64_t prev, uint64_t cur) {
        return cur > prev ? cur - prev : 0;
}

/* A threshold per window, over the windows cur spans since its previous sample. */
static uint64_t over(const struct governor_sample *cur, uint64_t per_window) {
        return per_window * (cur->windows > 1 ? cur->windows : 1);
}

bool governor_early_signal(const struct governor_sample *prev, const struct governor_sample *cur, char *why,
                           size_t len) {
        uint64_t d;

        assert(prev && cur && why);
        if ((d = grew(prev->pgsteal, cur->pgsteal)) >= over(cur, GOVERNOR_SIGNAL_PAGES))
                snprintf(why, len, "its memory is being reclaimed (pgsteal +%" PRIu64 ")", d);
        else if ((d = grew(prev->refaults, cur->refaults)) >= over(cur, GOVERNOR_SIGNAL_PAGES))
                snprintf(why, len, "it refaults evicted pages (+%" PRIu64 ")", d);
        else if ((d = grew(prev->majfaults, cur->majfaults)) >= over(cur, GOVERNOR_SIGNAL_PAGES))
                snprintf(why, len, "major faults +%" PRIu64, d);
        else if ((d = grew(prev->swap, cur->swap)) >= over(cur, GOVERNOR_SIGNAL_SWAP_BYTES))
                snprintf(why, len, "memory.swap.current grew by %" PRIu64 " KiB", d >> 10);
        else if ((d = grew(prev->low_events, cur->low_events)) > 0)
                snprintf(why, len, "memory.events low +%" PRIu64, d);
        else
                return false;
        return true;
}

/* ---- "auto" ---- */

const char *governor_auto_source_name(enum governor_auto_source s) {
        switch (s) {
        case GOVERNOR_AUTO_NONE:
                return "not sampled yet";
        case GOVERNOR_AUTO_WORKING_SET:
                return "working set: anonymous + active file";
        case GOVERNOR_AUTO_USAGE:
                return "usage: the kernel's lists do not age read pages (MGLRU)";
        case GOVERNOR_AUTO_REFAULTS:
                return "usage: it refaulted pages it had lost";
        }
        return "?";
}

bool governor_auto_estimate(struct governor_auto *a, const struct governor_sample *prev,
                            const struct governor_sample *cur, bool lists_age) {
        enum governor_auto_source source = GOVERNOR_AUTO_WORKING_SET;
        uint64_t est = cur->anon + cur->active_file + cur->unevictable;

        assert(a && cur);
        if (prev && a->source != GOVERNOR_AUTO_NONE &&
            grew(prev->refaults, cur->refaults) >= over(cur, GOVERNOR_SIGNAL_PAGES)) {
                source = GOVERNOR_AUTO_REFAULTS;
                est = cur->current;
        } else if (!lists_age) {
                source = GOVERNOR_AUTO_USAGE;
                est = cur->current;
        }
        if (est > cur->current) /* the counters are read one after another */
                est = cur->current;
        if (a->source != GOVERNOR_AUTO_NONE && (est <= a->want || est - a->want <= GOVERNOR_AUTO_STEP))
                return false;
        a->want = est;
        a->source = source;
        return true;
}

bool governor_early_signal_auto(const struct governor_sample *prev, const struct governor_sample *cur,
                                const struct governor_auto *a, char *why, size_t len) {
        struct governor_sample c = *cur;

        if (a && a->source != GOVERNOR_AUTO_NONE && cur->current > a->gets)
                c.pgsteal = prev->pgsteal; /* the reclaim of what auto left unprotected */
        return governor_early_signal(prev, &c, why, len);
}

uint64_t governor_auto_available(uint64_t ram_bytes, uint64_t reserve, uint64_t floors, uint64_t fixed) {
        uint64_t taken = reserve;

        taken = taken + floors < taken ? UINT64_MAX : taken + floors;
        taken = taken + fixed < taken ? UINT64_MAX : taken + fixed;
        return ram_bytes > taken ? ram_bytes - taken : 0;
}

bool governor_auto_share(struct governor_auto *const *autos, size_t n, uint64_t available) {
        unsigned __int128 total = 0;
        bool changed = false;

        for (size_t i = 0; i < n; i++)
                total += autos[i]->want;
        for (size_t i = 0; i < n; i++) {
                uint64_t gets = autos[i]->want;

                if (total > available)
                        gets = (uint64_t) ((unsigned __int128) autos[i]->want * available / total);
                changed = changed || gets != autos[i]->gets;
                autos[i]->gets = gets;
        }
        return changed;
}

uint64_t governor_reserve(uint64_t configured, uint64_t ram_bytes) {
        uint64_t r = ram_bytes / 10;

        if (configured != UNITS_MAX)
                return configured;
        return r > GOVERNOR_RESERVE_MIN ? r : GOVERNOR_RESERVE_MIN;
}

/* ---- who can be the cause ---- */

/* The index of u's device major:minor, or u->n. */
static size_t io_dev_find(const struct governor_io_use *u, unsigned major, unsigned minor) {
        size_t i = 0;

        while (i < u->n && (u->dev[i].major != major || u->dev[i].minor != minor))
                i++;
        return i;
}

void governor_io_use_add(struct governor_io_use *sum, const struct governor_io_use *x) {
        for (size_t i = 0; i < x->n; i++) {
                size_t k = io_dev_find(sum, x->dev[i].major, x->dev[i].minor);

                if (k < sum->n)
                        sum->dev[k].bytes += x->dev[i].bytes;
                else if (sum->n < GOVERNOR_IO_DEVICES)
                        sum->dev[sum->n++] = x->dev[i];
        }
}

/* The bytes u's device major:minor moved from prev to cur. */
static uint64_t io_grew(const struct governor_io_use *prev, const struct governor_io_use *cur, unsigned major,
                        unsigned minor) {
        size_t p = io_dev_find(prev, major, minor), c = io_dev_find(cur, major, minor);

        return c < cur->n ? grew(p < prev->n ? prev->dev[p].bytes : 0, cur->dev[c].bytes) : 0;
}

static uint64_t io_total_grew(const struct governor_io_use *prev, const struct governor_io_use *cur) {
        uint64_t sum = 0;

        for (size_t i = 0; i < cur->n; i++)
                sum += io_grew(prev, cur, cur->dev[i].major, cur->dev[i].minor);
        return sum;
}

/* A device both moved bytes on from prev to cur; false too when the application moved none (it waits for
 * I/O that has not completed yet: whose, the counters cannot say, so the jobs may be the cause). */
static bool io_shared(const struct governor_sample *prev, const struct governor_sample *cur,
                      const struct governor_jobs_sample *jprev, const struct governor_jobs_sample *jcur,
                      char *app_devices, size_t len) {
        bool app_did_io = false;
        size_t at = 0;

        app_devices[0] = '\0';
        for (size_t i = 0; i < cur->io.n; i++) {
                const struct governor_io_dev *d = &cur->io.dev[i];

                if (!io_grew(&prev->io, &cur->io, d->major, d->minor))
                        continue;
                app_did_io = true;
                if (io_grew(&jprev->io, &jcur->io, d->major, d->minor))
                        return true;
                if (at < len)
                        at += snprintf(app_devices + at, len - at, "%s%u:%u", at ? " " : "", d->major, d->minor);
        }
        return !app_did_io;
}

bool governor_jobs_can_cause(const struct governor_sample *prev, const struct governor_sample *cur,
                             const struct governor_jobs_sample *jprev, const struct governor_jobs_sample *jcur, bool io,
                             char *why, size_t len) {
        uint64_t d, jobs_io;
        char devices[64];

        assert(why);
        if (prev && cur && (d = grew(prev->high_events, cur->high_events)) > 0) {
                snprintf(why, len, "it is at its own memory.high (memory.events high +%" PRIu64 ")", d);
                return false;
        }
        if (prev && cur && (d = grew(prev->max_events, cur->max_events)) > 0) {
                snprintf(why, len, "it is at its own memory.max (memory.events max +%" PRIu64 ")", d);
                return false;
        }
        if (!jprev || !jcur)
                return true;
        jobs_io = io_total_grew(&jprev->io, &jcur->io);
        if (!jobs_io && !grew(jprev->pgfault, jcur->pgfault) && !jcur->dirty && !grew(jprev->current, jcur->current)) {
                snprintf(why, len,
                         "the jobs did nothing meanwhile (no I/O, no page fault, nothing dirty, no memory "
                         "charged)");
                return false;
        }
        if (!io)
                return true;
        if (!jobs_io) {
                snprintf(why, len, "its stall is on I/O and the jobs did none meanwhile");
                return false;
        }
        if (prev && cur && !io_shared(prev, cur, jprev, jcur, devices, sizeof(devices))) {
                snprintf(why, len, "its stall is on I/O, on %s, where the jobs did none", devices);
                return false;
        }
        return true;
}
