/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "log.h"
#include "protect.h"
#include "unit-front.h"
#include "units.h"

void protect_init(struct protect *p, sd_event *event, struct backend *backend, struct action_log *log) {
        *p = (struct protect){ .event = event, .backend = backend, .log = log };
}

static void unwatch(struct protect *p) {
        for (size_t i = 0; i < p->n_watches; i++) {
                sd_event_source_disable_unref(p->watches[i].source);
                free(p->watches[i].dir);
        }
        p->n_watches = 0;
}

void protect_clear_auto(struct protect *p) {
        for (size_t i = 0; i < p->n_autos; i++)
                free(p->autos[i].name);
        p->n_autos = 0;
}

static void waiting_units_clear(struct protect *p) {
        for (size_t i = 0; i < p->n_waiting_units; i++)
                free(p->waiting_units[i]);
        p->n_waiting_units = 0;
}

static void reported_clear(struct protect *p) {
        for (size_t i = 0; i < p->n_reported; i++)
                free(p->reported[i].name);
        p->n_reported = 0;
}

static void fronts_clear(struct protect *p) {
        for (size_t i = 0; i < p->n_fronts; i++)
                free(p->fronts[i]);
        p->fronts = mfree(p->fronts);
        p->n_fronts = 0;
}

void protect_done(struct protect *p) {
        fronts_clear(p);
        reported_clear(p);
        free(p->reported);
        protect_clear_auto(p);
        free(p->autos);
        waiting_units_clear(p);
        free(p->waiting_units);
        unwatch(p);
        free(p->watches);
        sd_event_source_disable_unref(p->again);
        *p = (struct protect){};
}

/* ---- oneshot fronts ---- */

bool protect_unit_is_front(const struct protect *p, const char *unit) {
        for (size_t i = 0; unit && i < p->n_fronts; i++)
                if (streq(p->fronts[i], unit))
                        return true;
        return false;
}

/* PID 1's answer: unit is a front.  Said of each entry that names it in the policy applied since. */
static void on_front(void *userdata, const char *unit) {
        struct protect *p = userdata;
        bool named = false;
        char **f;

        if (protect_unit_is_front(p, unit))
                return;
        for (size_t i = 0; p->policy && i < p->policy->n_protects; i++)
                if (streq_ptr(p->policy->protects[i].unit, unit)) {
                        char why[512];

                        unit_front_sentence(unit, why, sizeof(why));
                        action_log_add(p->log, LOG_LEVEL_WARNING, "Protect %s: %s", p->policy->protects[i].name, why);
                        named = true;
                }
        if (!named)
                return; /* the answer to an earlier load's question */
        f = realloc(p->fronts, (p->n_fronts + 1) * sizeof(*f));
        if (!f)
                return;
        p->fronts = f;
        if ((p->fronts[p->n_fronts] = strdup(unit)))
                p->n_fronts++;
}

void protect_find_fronts(struct protect *p, const struct pw_policy *policy) {
        fronts_clear(p);
        for (size_t i = 0; i < policy->n_protects; i++)
                if (policy->protects[i].unit)
                        (void) backend_unit_front_async(p->backend, policy->protects[i].unit, on_front, p);
}

int protect_set_auto(struct protect *p, const char *name, uint64_t bytes) {
        char *n;

        for (size_t i = 0; i < p->n_autos; i++)
                if (streq(p->autos[i].name, name)) {
                        p->autos[i].bytes = bytes;
                        return 0;
                }
        n = strdup(name);
        if (!n || GROW(p->autos, p->allocated_autos, p->n_autos + 1) < 0) {
                free(n);
                return -ENOMEM;
        }
        p->autos[p->n_autos++] = (struct protect_auto){ .name = n, .bytes = bytes };
        return 0;
}

static uint64_t auto_bytes(const struct protect *p, const char *name) {
        for (size_t i = 0; i < p->n_autos; i++)
                if (streq(p->autos[i].name, name))
                        return p->autos[i].bytes;
        return 0;
}

static uint64_t size_now(const struct protect *p, const struct pw_protect *pr, const struct pw_protect_size *ps) {
        switch (ps->mode) {
        case PW_PROTECT_BYTES:
                return ps->bytes;
        case PW_PROTECT_AUTO:
                return auto_bytes(p, pr->name);
        default:
                return 0;
        }
}

void protect_wanted(const struct protect *p, const struct pw_protect *pr, uint64_t *ret_min, uint64_t *ret_low) {
        *ret_min = size_now(p, pr, &pr->min);
        *ret_low = size_now(p, pr, &pr->low);
}

/*
 * Swaps the entry's last logged error for this one; returns whether it changed.
 * An entry never logged counts as in force, so that success is not announced.
 */
static bool reported_changed(struct protect *p, const char *name, int error) {
        struct protect_reported *rep = NULL;
        int before;

        for (size_t i = 0; i < p->n_reported && !rep; i++)
                if (streq(p->reported[i].name, name))
                        rep = &p->reported[i];
        if (!rep) {
                char *n = strdup(name);

                if (!n || GROW(p->reported, p->allocated_reported, p->n_reported + 1) < 0) {
                        free(n);
                        return true; /* logged again next time: better than never */
                }
                rep = &p->reported[p->n_reported++];
                *rep = (struct protect_reported){ .name = n };
        }
        before = rep->error;
        rep->error = error;
        return before != error;
}

/* Forgets what was logged of entries the policy no longer has. */
static void reported_prune(struct protect *p, const struct pw_policy *policy) {
        size_t k = 0;

        for (size_t i = 0; i < p->n_reported; i++) {
                bool keep = false;

                for (size_t j = 0; j < policy->n_protects && !keep; j++)
                        keep = streq(policy->protects[j].name, p->reported[i].name);
                if (keep)
                        p->reported[k++] = p->reported[i];
                else
                        free(p->reported[i].name);
        }
        p->n_reported = k;
}

/*
 * An entry's result, logged when it differs from the last one logged: a unit:
 * entry on a host without systemd is said once, not at every reload and every
 * job's start, and an entry in force again says so.  status always shows it.
 */
static void log_result(struct protect *p, const struct backend_protect *req, const struct cgroup_protect_result *res) {
        const char *what = req->unit ?: req->cgroup;
        char min[32], eff[32];

        units_format_human(res->min, min, sizeof(min));
        units_format_human(res->effective_min, eff, sizeof(eff));
        if (res->error == -EINPROGRESS) /* the backend asks systemd for the unit's values: applied when they come */
                log_debug("Protect %s: %s: its own values are asked of systemd", req->name, what);
        else if (!reported_changed(p, req->name, res->error))
                log_debug("Protect %s: %s: %s", req->name, what, res->error < 0 ? strerror(-res->error) : "in force");
        else if (res->error == -ENOENT)
                action_log_add(p->log, LOG_LEVEL_WARNING, "Protect %s: %s does not exist or does not run (yet)",
                               req->name, what);
        else if (res->error == -EOPNOTSUPP)
                action_log_add(p->log, LOG_LEVEL_WARNING,
                               "Protect %s: unit %s needs the systemd backend (systemd is not PID 1 here, or "
                               "backend: cgroupfs is set); give its cgroup: instead",
                               req->name, what);
        else if (res->error < 0)
                action_log_add(p->log, LOG_LEVEL_WARNING, "Protect %s: %s: %s", req->name, what, strerror(-res->error));
        else
                action_log_add(p->log, LOG_LEVEL_INFO, "Protect %s: %s is protected now (memory.min %s, effective %s)",
                               req->name, what, min, eff);
}

/* ---- following the cgroups ---- */

/* How often rewatch() looks again for directories made while it set its watches: each round catches one more
 * level of a tree being made right then; the next event catches the rest. */
#define REWATCH_ROUNDS 4

static int on_again(sd_event_source *s, void *userdata) {
        struct protect *p = userdata;

        if (p->policy)
                (void) protect_apply(p, p->policy);
        return 0;
}

/* Applies again on the next turn of the loop, once however many events ask for it now. */
static void apply_again_soon(struct protect *p) {
        if (!p->again && sd_event_add_defer(p->event, &p->again, on_again, p) >= 0)
                (void) sd_event_source_set_description(p->again, "protect-again");
        if (p->again)
                (void) sd_event_source_set_enabled(p->again, SD_EVENT_ONESHOT);
}

/* systemd reported an event of a unit: apply again if an entry waits for that unit to run. */
static void on_unit(void *userdata, const char *unit) {
        struct protect *p = userdata;

        for (size_t i = 0; i < p->n_waiting_units; i++)
                if (streq(p->waiting_units[i], unit)) {
                        log_debug("Protection: unit %s changed: applying again", unit);
                        apply_again_soon(p);
                        return;
                }
}

/* The unit an entry is about: unit:, or a cgroup: path's last component if it is a unit's name. */
static const char *entry_unit(const struct pw_protect *pr) {
        const char *last;

        if (pr->unit)
                return pr->unit;
        last = strrchr(pr->cgroup, '/');
        last = last ? last + 1 : pr->cgroup;
        return policy_unit_name_problem(last) ? NULL : last;
}

/* Remembers the units of entries that could not be applied because their unit does not run, or because the
 * backend asked systemd for the unit's own values (it tells of the unit when they come). */
static void wait_for_units(struct protect *p, const struct pw_policy *policy, const struct cgroup_protect_result *res) {
        waiting_units_clear(p);
        if (!p->event || !backend_protects_units(p->backend))
                return;
        for (size_t i = 0; i < policy->n_protects; i++) {
                const char *unit = entry_unit(&policy->protects[i]);
                char *copy;

                if ((res[i].error != -ENOENT && res[i].error != -EINPROGRESS) || !unit)
                        continue;
                copy = strdup(unit);
                if (!copy || GROW(p->waiting_units, p->allocated_waiting_units, p->n_waiting_units + 1) < 0) {
                        free(copy);
                        return; /* out of memory: it is applied at the next reload */
                }
                p->waiting_units[p->n_waiting_units++] = copy;
        }
        if (p->n_waiting_units > 0 && !p->watching_units) {
                int r = backend_units_watch(p->backend, on_unit, p);

                if (r < 0)
                        log_warning_errno(r,
                                          "Cannot follow systemd's units (%m): a protected unit that starts later "
                                          "is protected at the next reload");
                else
                        p->watching_units = true;
        }
}

/* A directory came or went in a watched one: apply again if it is a protected cgroup or on the way to one. */
static int on_dir(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        struct protect_watch *w = userdata;
        struct protect *p = w->p;
        _cleanup_free_ char *path = NULL;
        bool relevant = ev->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF);

        if (!relevant && (ev->mask & IN_ISDIR) && ev->len > 0 &&
            asprintf(&path, "%s%s%s", w->dir, streq(w->dir, "/") ? "" : "/", ev->name) >= 0)
                for (size_t i = 0; p->policy && i < p->policy->n_protects && !relevant; i++) {
                        const char *cg = p->policy->protects[i].cgroup;

                        relevant = cg && path_under(cg, path);
                }
        if (!relevant)
                return 0;
        if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
                p->watches_stale = true; /* this directory's watch is gone: watch anew even if the path is the same */
        log_debug("Protection: %s%s%s changed: applying again", w->dir, path ? " -> " : "", path ?: "");
        apply_again_soon(p);
        return 0;
}

/* The directory to watch for cgroup: path cg: its parent, or while that is missing the nearest that exists. */
static char *dir_to_watch(const char *mount, const char *cg) {
        _cleanup_free_ char *dir = strdup(cg);
        char *slash;

        if (!dir)
                return NULL;
        while ((slash = strrchr(dir, '/'))) {
                _cleanup_free_ char *abs = NULL;
                struct stat st;

                if (slash == dir) {
                        dir[1] = '\0';
                        break;
                }
                *slash = '\0';
                if (asprintf(&abs, "%s%s", mount, dir) < 0)
                        return NULL;
                if (stat(abs, &st) >= 0 && S_ISDIR(st.st_mode))
                        break;
        }
        return TAKE_PTR(dir);
}

/* Watches dir (taken), below mount; the room for it was made. */
static int add_watch(struct protect *p, const char *mount, char *dir) {
        _cleanup_free_ char *abs = NULL;
        struct protect_watch *w = &p->watches[p->n_watches];
        struct stat st;
        int r;

        assert(p->n_watches < p->allocated_watches);
        *w = (struct protect_watch){ .p = p, .dir = dir };
        if (asprintf(&abs, "%s%s", mount, streq(dir, "/") ? "" : dir) < 0) {
                free(dir);
                return -ENOMEM;
        }
        if (stat(abs, &st) >= 0)
                w->ino = st.st_ino;
        r = sd_event_add_inotify(p->event, &w->source, abs,
                                 IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF |
                                         IN_ONLYDIR,
                                 on_dir, w);
        if (r < 0) {
                free(dir);
                return r;
        }
        (void) sd_event_source_set_description(w->source, "protect-dir");
        p->n_watches++;
        return 0;
}

/* Whether dir is watched, and is still the directory that was (its DELETE_SELF may not have come yet). */
static bool watched(const struct protect *p, const char *mount, const char *dir) {
        for (size_t i = 0; i < p->n_watches; i++)
                if (streq(p->watches[i].dir, dir)) {
                        _cleanup_free_ char *abs = NULL;
                        struct stat st;

                        if (asprintf(&abs, "%s%s", mount, streq(dir, "/") ? "" : dir) < 0)
                                return false;
                        return stat(abs, &st) >= 0 && st.st_ino == p->watches[i].ino;
                }
        return false;
}

/* Adds dir (taken) to dirs unless it is there. */
static int dirs_add(char ***dirs, size_t *n, size_t *allocated, char *dir) {
        for (size_t k = 0; k < *n; k++)
                if (streq((*dirs)[k], dir)) {
                        free(dir);
                        return 0;
                }
        if (GROW(*dirs, *allocated, *n + 1) < 0) {
                free(dir);
                return -ENOMEM;
        }
        (*dirs)[(*n)++] = dir;
        return 0;
}

static void dirs_free(char **dirs, size_t n) {
        for (size_t k = 0; k < n; k++)
                free(dirs[k]);
        free(dirs);
}

/* The directories the cgroup: entries of policy need watched now: for each, the nearest directory that exists,
 * and each above it (a watched directory removed and made again is seen in its parent: cgroupfs does not always
 * send its IN_DELETE_SELF). */
static int needed_dirs(const char *mount, const struct pw_policy *policy, char ***ret, size_t *ret_n) {
        char **dirs = NULL;
        size_t n = 0, allocated = 0;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < policy->n_protects; i++) {
                char *dir;

                if (!policy->protects[i].cgroup)
                        continue;
                dir = dir_to_watch(mount, policy->protects[i].cgroup);
                if (!dir)
                        r = -ENOMEM;
                while (dir && r >= 0) {
                        char *slash = strrchr(dir, '/'), *up = NULL;

                        if (!streq(dir, "/") &&
                            !(up = slash == dir ? strdup("/") : strndup(dir, (size_t) (slash - dir))))
                                r = -ENOMEM;
                        if (dirs_add(&dirs, &n, &allocated, dir) < 0)
                                r = -ENOMEM;
                        dir = up;
                }
                free(dir);
        }
        if (r < 0) {
                dirs_free(dirs, n);
                return r;
        }
        *ret = dirs;
        *ret_n = n;
        return 0;
}

/* Watches dirs (taken) instead of what is watched.  The new watches are added before the old ones go, so that a
 * directory in both is never unwatched for a moment (sd-event keeps one inotify watch per inode). */
static int watch_dirs(struct protect *p, const char *mount, char **dirs, size_t n) {
        struct protect old = { .watches = p->watches, .n_watches = p->n_watches };
        int r = 0;

        p->watches = calloc(n ?: 1, sizeof(*p->watches));
        p->n_watches = 0;
        p->allocated_watches = p->watches ? n : 0;
        p->watches_stale = false;
        for (size_t k = 0; k < n; k++) {
                char *dir = TAKE_PTR(dirs[k]);

                if (r >= 0 && p->watches) {
                        int q = add_watch(p, mount, dir);

                        if (q == -ENOENT || q == -ENOTDIR)
                                p->watches_stale = true; /* removed since it was seen: look again */
                        else
                                r = q;
                } else
                        free(dir);
        }
        unwatch(&old);
        free(old.watches);
        return p->watches ? r : -ENOMEM;
}

/*
 * Watches the directories the cgroup: entries of the policy need (kept as
 * they are when they are the same ones: the governor applies often).
 * Called before the apply, so that a cgroup created meanwhile is not
 * missed; and a directory made while the watches were being set (seen
 * missing, so its parent was watched instead, but there before that watch
 * was), or one removed before its watch was set, is caught by looking
 * again once they are set.  The sources point into p->watches, which is
 * sized before any is added and never grows while they live.
 */
static void rewatch(struct protect *p, const struct pw_policy *policy) {
        const char *mount = cgroup_engine_mount(p->backend->engine);
        int r = 0;

        if (!p->event)
                return;
        for (unsigned round = 0; r >= 0 && round < REWATCH_ROUNDS; round++) {
                char **dirs = NULL;
                size_t n = 0;
                bool same;

                r = needed_dirs(mount, policy, &dirs, &n);
                if (r < 0)
                        break;
                same = n == p->n_watches && !p->watches_stale;
                for (size_t k = 0; same && k < n; k++)
                        same = watched(p, mount, dirs[k]);
                if (!same)
                        r = watch_dirs(p, mount, dirs, n);
                dirs_free(dirs, n);
                if (same)
                        break;
        }
        if (r < 0 && !p->watch_warned) {
                p->watch_warned = true;
                log_warning_errno(r,
                                  "Protection: cannot watch for protected cgroups that appear later (%m): "
                                  "they are protected at the next reload");
        }
}

int protect_apply(struct protect *p, const struct pw_policy *policy) {
        size_t n = policy->n_protects;
        _cleanup_free_ struct backend_protect *req = calloc(n + 1, sizeof(*req));
        _cleanup_free_ struct cgroup_protect_result *res = calloc(n + 1, sizeof(*res));
        int r;

        assert(p && policy);
        if (!req || !res)
                return -ENOMEM;
        p->policy = policy;
        rewatch(p, policy);
        for (size_t i = 0; i < n; i++) {
                const struct pw_protect *pr = &policy->protects[i];

                req[i] = backend_protect_of(pr);
                req[i].min = size_now(p, pr, &pr->min);
                req[i].low = size_now(p, pr, &pr->low);
        }
        r = backend_protect_set(p->backend, req, n, res);
        if (r < 0)
                action_log_add(p->log, LOG_LEVEL_ERR, "Protection could not be applied completely: %s", strerror(-r));
        reported_prune(p, policy);
        for (size_t i = 0; i < n; i++)
                log_result(p, &req[i], &res[i]);
        wait_for_units(p, policy, res);
        return r;
}

int protect_withdraw(struct protect *p) {
        int r = backend_protect_set(p->backend, NULL, 0, NULL);

        if (r < 0)
                return log_warning_errno(r, "Restoring the original protection values failed: %m");
        log_info("Protection withdrawn: original memory.min/low/swap.max values restored");
        return 0;
}
