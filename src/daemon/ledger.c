/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>

#include "cgroup-values.h"
#include "ledger.h"
#include "util.h"

#define STATE_FILE_MAX (4 * 1024 * 1024)

/* The node is gone, or another one is in its place (-ESTALE: made again under its key). */
static bool gone(int r) {
        return r == -ENOENT || r == -ENODEV || r == -ESTALE;
}

static uint64_t max_u64(uint64_t a, uint64_t b) {
        return a > b ? a : b;
}

const struct ledger_entry *ledger_find(const struct ledger *l, const char *key) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->entries[i].key, key))
                        return &l->entries[i];
        return NULL;
}

static struct ledger_entry *find(struct ledger *l, const char *key) {
        return (struct ledger_entry *) ledger_find(l, key);
}

static int add(struct ledger *l, const char *key, const struct ledger_values *orig) {
        char *k = strdup(key);

        if (!k || GROW(l->entries, l->allocated, l->n + 1) < 0) {
                free(k);
                return -ENOMEM;
        }
        l->entries[l->n++] = (struct ledger_entry){ .key = k, .orig = *orig };
        return 0;
}

static void drop(struct ledger *l, struct ledger_entry *e) {
        free(e->key);
        *e = l->entries[--l->n];
}

/* ---- apply ---- */

static bool wants_swap_deny(const struct ledger_request *req, size_t n, const char *path) {
        for (size_t i = 0; i < n; i++)
                if (req[i].swap_deny && streq_ptr(req[i].path, path))
                        return true;
        return false;
}

/*
 * The node's entry, saved now if it was not; its swap too when swap is needed.
 * An entry only loaded from the state file is read once to learn which node
 * it is (its values stay: they are the node's originals, ours are in force).
 */
static int save(struct ledger *l, const struct ledger_io *io, const char *key, bool swap, struct ledger_entry **ret) {
        struct ledger_entry *e = find(l, key);
        struct ledger_values v;
        uint64_t id = 0;
        int r;

        if (e && e->seen && (!swap || e->orig.has_swap)) {
                *ret = e;
                return 0;
        }
        r = io->read(io->userdata, key, e ? e->id : 0, swap, &v, &id);
        if (r == -ESTALE) {
                drop(l, e); /* saved from a node that is gone: the new one has its own originals */
                e = NULL;
                r = io->read(io->userdata, key, 0, swap, &v, &id);
        }
        if (r < 0)
                return r;
        if (!e) {
                r = add(l, key, &v);
                if (r < 0)
                        return r;
                e = &l->entries[l->n - 1];
        } else if (v.has_swap && !e->orig.has_swap) {
                e->orig.has_swap = true;
                e->orig.swap_max = v.swap_max;
        }
        e->id = id;
        e->seen = true;
        *ret = e;
        return 0;
}

/* How often a raise saves and writes again when the node keeps being made again under its key. */
#define RAISE_TRIES 3

/* Raises one node of the plan: never below its original, swap 0 for swap: deny. */
static int raise_node(struct ledger *l, const struct ledger_io *io, const struct cgv_protect_need *need, bool swap) {
        const char *key = io->key(need->path);
        struct ledger_entry *e;
        struct ledger_values w;
        bool give_swap_back;
        int r;

        for (unsigned tries = 1;; tries++) {
                r = save(l, io, key, swap, &e);
                if (r < 0) {
                        if (gone(r) && (e = find(l, key)))
                                drop(l, e); /* a cgroup created again later has its own originals */
                        return r;
                }
                give_swap_back = !swap && e->orig.has_swap; /* swap: deny was withdrawn */
                w = (struct ledger_values){
                        .min = max_u64(need->min, e->orig.min),
                        .low = max_u64(need->low, e->orig.low),
                        .has_swap = e->orig.has_swap,
                        .swap_max = swap ? 0 : e->orig.swap_max,
                };
                r = io->write(io->userdata, key, e->id, &w);
                if (r != -ESTALE || tries == RAISE_TRIES)
                        break;
                drop(l, e); /* made again since it was saved: save the new one's own values first */
        }
        if (gone(r))
                drop(l, e); /* a cgroup created again later has its own originals */
        else if (r >= 0 && give_swap_back)
                e->orig.has_swap = false;
        return r;
}

static bool in_plan(const struct ledger_io *io, const struct cgv_protect_need *needs, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(io->key(needs[i].path), key))
                        return true;
        return false;
}

/* A node that waits for its values (the io's read answered -EINPROGRESS). */
static bool waiting(int r) {
        return r == -EINPROGRESS;
}

/* Gives every node the plan does not need any more its originals back. */
static int restore(struct ledger *l, const struct ledger_io *io, const struct cgv_protect_need *needs, size_t n) {
        int r = 0;

        for (size_t i = l->n; i-- > 0;) {
                struct ledger_entry *e = &l->entries[i];
                int k;

                if (in_plan(io, needs, n, e->key))
                        continue;
                /* -ESTALE: created again since; its values are its own, not ours to restore. */
                k = io->write(io->userdata, e->key, e->id, &e->orig);
                if (k < 0 && !gone(k)) {
                        r = r ?: k; /* kept: tried again at the next apply */
                        continue;
                }
                drop(l, e);
        }
        return r;
}

/* A request's error: the first error on its path from the top (parents come first in the plan). */
static int request_error(const struct ledger_request *req, const struct cgv_protect_need *needs, const int *errs,
                         size_t n) {
        for (size_t i = 0; i < n; i++)
                if (errs[i] < 0 && path_under(req->path, needs[i].path))
                        return gone(errs[i]) ? -ENOENT : errs[i]; /* -EINPROGRESS too: it waits */
        return 0;
}

/* Writes the state file when what it would hold changed (an apply that changes nothing writes nothing). */
static int persist(struct ledger *l) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (!l->state_file)
                return 0;
        text = ledger_format(l);
        if (!text)
                return -ENOMEM;
        if (l->persisted && streq(l->persisted, text))
                return 0;
        r = write_file_atomic(l->state_file, text);
        free(l->persisted);
        l->persisted = r >= 0 ? TAKE_PTR(text) : NULL;
        return r;
}

int ledger_apply(struct ledger *l, const struct ledger_request *req, size_t n, const struct ledger_io *io,
                 int *ret_errors) {
        _cleanup_free_ struct cgv_protect_request *creq = calloc(n + 1, sizeof(*creq));
        _cleanup_free_ int *errs = NULL;
        struct cgv_protect_need *needs = NULL;
        size_t n_needs = 0, n_creq = 0;
        bool pending = false;
        int r, k;

        assert(l && io && (req || n == 0));
        if (!creq)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (req[i].path)
                        creq[n_creq++] = (struct cgv_protect_request){ req[i].path, req[i].min, req[i].low };
                else
                        pending = pending || req[i].pending;
        r = cgv_protect_plan(creq, n_creq, &needs, &n_needs);
        if (r < 0)
                return r;
        errs = calloc(n_needs + 1, sizeof(int));
        if (!errs) {
                cgv_protect_needs_free(needs, n_needs);
                return -ENOMEM;
        }
        /* Parents first: below a gone node nothing exists (and what was saved of it is forgotten); below a node
         * that waits for its values, everything waits with it, as it is. */
        for (size_t i = 0; i < n_needs; i++) {
                struct ledger_entry *e;

                for (size_t p = 0; p < i && !errs[i]; p++)
                        if ((gone(errs[p]) || waiting(errs[p])) && path_under(needs[i].path, needs[p].path))
                                errs[i] = waiting(errs[p]) ? -EINPROGRESS : -ENOENT;
                if (gone(errs[i]) && (e = find(l, io->key(needs[i].path))))
                        drop(l, e);
                if (!errs[i])
                        errs[i] = raise_node(l, io, &needs[i], wants_swap_deny(req, n, needs[i].path));
                if (errs[i] < 0 && !gone(errs[i]) && !waiting(errs[i]))
                        r = r ?: errs[i];
        }
        if (!pending) { /* a pending request may need any node: nothing is given back until it is known */
                k = restore(l, io, needs, n_needs);
                r = r ?: k;
        }
        k = persist(l);
        r = r ?: k;
        for (size_t i = 0; ret_errors && i < n; i++)
                ret_errors[i] = req[i].path      ? request_error(&req[i], needs, errs, n_needs)
                                : req[i].pending ? -EINPROGRESS
                                                 : -EOPNOTSUPP;
        cgv_protect_needs_free(needs, n_needs);
        return r;
}

/* ---- persistence ---- */

char *ledger_format(const struct ledger *l) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        fprintf(f, "%s\n", l->header ?: "# pagewarden: original protection values");
        for (size_t i = 0; i < l->n; i++) {
                const struct ledger_entry *e = &l->entries[i];
                char swap[32] = "-";

                if (e->orig.has_swap)
                        cgv_format_limit(e->orig.swap_max, swap, sizeof(swap));
                fprintf(f, "%" PRIu64 " %" PRIu64 " %s %s\n", e->orig.min, e->orig.low, swap, e->key);
        }
        if (fclose(f) != 0)
                return mfree(text);
        return text;
}

int ledger_parse(struct ledger *l, const char *text) {
        _cleanup_free_ char *copy = strdup(text);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct ledger_values v = {};
                char swap[32];
                int n = 0, r;

                if (line[0] == '#')
                        continue;
                if (sscanf(line, "%" SCNu64 " %" SCNu64 " %31s %n", &v.min, &v.low, swap, &n) != 3 || n == 0 ||
                    (l->valid_key && !l->valid_key(line + n)) || find(l, line + n))
                        continue;
                v.has_swap = !streq(swap, "-");
                if (v.has_swap && cgv_parse_limit(swap, &v.swap_max) < 0)
                        continue;
                r = add(l, line + n, &v);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ledger_init(struct ledger *l, const char *state_file, const char *header, bool (*valid_key)(const char *key)) {
        _cleanup_free_ char *text = NULL;
        int r;

        *l = (struct ledger){ .header = header, .valid_key = valid_key };
        if (!state_file)
                return 0;
        l->state_file = strdup(state_file);
        if (!l->state_file)
                return -ENOMEM;
        r = read_full_file(state_file, STATE_FILE_MAX, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ledger_parse(l, text);
        if (r >= 0)
                l->persisted = TAKE_PTR(text); /* the file as it is (a damaged line makes the next write differ) */
        return r;
}

void ledger_done(struct ledger *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->entries[i].key);
        free(l->entries);
        free(l->state_file);
        free(l->persisted);
        *l = (struct ledger){};
}
