/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>

#include "policy-parse.h"

/* ---- parse state ----------------------------------------------------------- */

void pstate_init(struct pstate *st, const struct policy_context *ctx, const struct source *src,
                 struct diag_list *diags) {
        assert(st);
        assert(ctx);
        assert(src);
        assert(diags);
        *st = (struct pstate){ .ctx = ctx, .src = src, .diags = diags, .first_error = diags->n_errors };
}

void pstate_error(struct pstate *st, const struct ynode *n, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(st->diags, st->src, n ? n->line : 0, n ? n->column : 0, fmt, ap);
        va_end(ap);
        if (st->diags->oom) /* the error was lost: nothing that depends on counting errors may go on */
                st->oom = true;
}

void pstate_warning(struct pstate *st, const struct ynode *n, const char *fmt, ...) {
        char buf[DIAG_MAX_MESSAGE];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        diag_warn(st->diags, st->src, n ? n->line : 0, n ? n->column : 0, "%s", buf);
        if (st->diags->oom)
                st->oom = true;
}

int pstate_result(const struct pstate *st) {
        if (st->oom || st->diags->oom)
                return -ENOMEM;
        return st->diags->n_errors > st->first_error ? -EINVAL : 0;
}

void pstate_done(struct pstate *st) {
        assert(st);
        for (size_t i = 0; i < st->n_lookups; i++)
                free(st->lookups[i].name);
        free(st->lookups);
        st->lookups = NULL;
        st->n_lookups = st->allocated_lookups = 0;
}

/* ---- lookups outside the file ----------------------------------------------- */

enum {
        LOOKUP_USER,
        LOOKUP_GROUP,
        LOOKUP_DEVICE,
};

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

const char *pstate_lookups_problem(void) {
        return "more than " STRINGIFY(PW_MAX_LOOKUPS) " different user, group and device names to look up in one file";
}

/* Lookups are kept sorted by kind and name: a file may give thousands of names, each is looked for. */
static int lookup_cmp(int kind, const char *name, const struct pstate_lookup *l) {
        if (kind != l->kind)
                return kind < l->kind ? -1 : 1;
        return strcmp(name, l->name);
}

/* The index of the earlier lookup of name, or where it would go (then *ret_found is false). */
static size_t lookup_search(const struct pstate *st, int kind, const char *name, bool *ret_found) {
        size_t lo = 0, hi = st->n_lookups;

        *ret_found = false;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = lookup_cmp(kind, name, &st->lookups[mid]);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return lo;
}

static const struct pstate_lookup *lookup_find(const struct pstate *st, int kind, const char *name) {
        bool found;
        size_t i = lookup_search(st, kind, name, &found);

        return found ? &st->lookups[i] : NULL;
}

/* Remembers a lookup's result; -ENOMEM (st->oom set). */
static int lookup_add(struct pstate *st, int kind, const char *name, int r, const struct device_info *device) {
        char *copy = strdup(name);
        bool found;
        size_t i;

        if (!copy || GROW(st->lookups, st->allocated_lookups, st->n_lookups + 1) < 0) {
                free(copy);
                st->oom = true;
                return -ENOMEM;
        }
        i = lookup_search(st, kind, name, &found);
        assert(!found);
        memmove(st->lookups + i + 1, st->lookups + i, (st->n_lookups - i) * sizeof(*st->lookups));
        st->n_lookups++;
        st->lookups[i] = (struct pstate_lookup){
                .name = copy,
                .kind = kind,
                .r = r,
                .device = device ? *device : (struct device_info){},
        };
        return 0;
}

int pstate_account_known(struct pstate *st, const char *name, bool group) {
        int kind = group ? LOOKUP_GROUP : LOOKUP_USER;
        const struct pstate_lookup *old;
        bool known;

        assert(name);
        if (!st->ctx->resolve_users || strspn(name, "0123456789") == strlen(name))
                return 1;
        old = lookup_find(st, kind, name);
        if (old)
                return old->r;
        if (st->n_lookups >= PW_MAX_LOOKUPS)
                return -E2BIG;
        /* The reentrant calls (the daemon reads a reload's files on a thread), with room for a large group. */
        for (size_t size = 16384;; size *= 2) {
                _cleanup_free_ char *buf = malloc(size);
                struct passwd pw, *pwr = NULL;
                struct group gr, *grr = NULL;
                int e;

                if (!buf) {
                        st->oom = true;
                        return -ENOMEM;
                }
                e = group ? getgrnam_r(name, &gr, buf, size, &grr) : getpwnam_r(name, &pw, buf, size, &pwr);
                if (e == ERANGE && size < 1024 * 1024)
                        continue;
                known = group ? grr != NULL : pwr != NULL;
                if (!known && e == ENOMEM) {
                        st->oom = true;
                        return -ENOMEM;
                }
                break;
        }
        return lookup_add(st, kind, name, known, NULL) ?: known;
}

int pstate_device_resolve(struct pstate *st, const char *device, struct device_info *ret) {
        const struct pstate_lookup *old;
        int r;

        assert(device);
        assert(ret);
        old = lookup_find(st, LOOKUP_DEVICE, device);
        if (old) {
                *ret = old->device;
                return old->r;
        }
        *ret = (struct device_info){};
        if (st->n_lookups >= PW_MAX_LOOKUPS)
                return -E2BIG;
        r = device_resolve(device, st->ctx->sysfs, st->ctx->mountinfo, st->ctx->fstab, ret);
        if (r == -ENOMEM)
                return r;
        return lookup_add(st, LOOKUP_DEVICE, device, r, ret) ?: r;
}

/* ---- unknown keys ----------------------------------------------------------- */

static unsigned edit_distance(const char *a, const char *b) {
        unsigned row[POLICY_NAME_MAX + 1];
        size_t la = strlen(a), lb = strlen(b);

        if (la > POLICY_NAME_MAX || lb > POLICY_NAME_MAX)
                return UINT_MAX;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (unsigned) j;
        for (size_t i = 1; i <= la; i++) {
                unsigned diag = row[0];

                row[0] = (unsigned) i;
                for (size_t j = 1; j <= lb; j++) {
                        unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        diag = up;
                        row[j] = best;
                }
        }
        return row[lb];
}

/* Keys that people put in the wrong file. */
static const char *misplaced_hint(const char *key) {
        static const char *const settings_keys[] = { "policy_dir",   "socket",          "socket_group", "cgroup_root",
                                                     "backend",      "restore_on_stop", "run_fallback", "history_jobs",
                                                     "history_days", "log_level",       "pressure",     "reserve" };

        for (size_t i = 0; i < ELEMENTSOF(settings_keys); i++)
                if (streq(key, settings_keys[i]))
                        return " (a daemon setting: it belongs in pagewarden.yaml)";
        if (streq(key, "jobs") || streq(key, "protect"))
                return " (policies belong in files in the policy directory, not in pagewarden.yaml)";
        return NULL;
}

static void report_unknown_key(struct pstate *st, const struct ynode *key, const char *where,
                               const struct field *fields) {
        char expected[512] = "";
        size_t len = 0;
        const char *best = NULL, *hint = misplaced_hint(key->value);
        unsigned best_d = 3;

        if (!diag_would_record(st->diags, st->src)) {
                /* Only counted: no suggestion to look for (thousands of unknown keys took 50 ms that way). */
                pstate_error(st, key, "unknown key");
                return;
        }
        for (const struct field *f = fields; f->key; f++) {
                unsigned d = edit_distance(key->value, f->key);

                if (d < best_d) {
                        best_d = d;
                        best = f->key;
                }
                len += (size_t) snprintf(expected + len, sizeof(expected) - len, "%s%s",
                                         f == fields ? "" : (f[1].key ? ", " : " or "), f->key);
                if (len >= sizeof(expected))
                        break;
        }
        if (hint)
                pstate_error(st, key, "unknown key '%s' in %s%s", key->value, where, hint);
        else if (best)
                pstate_error(st, key, "unknown key '%s' in %s: did you mean '%s'?", key->value, where, best);
        else
                pstate_error(st, key, "unknown key '%s' in %s: expected %s", key->value, where, expected);
}

/* ---- field tables ------------------------------------------------------------ */

static void parse_field(struct pstate *st, const struct field *f, const struct ynode *key, const struct ynode *val,
                        const char *where, void *base) {
        _cleanup_free_ char *sub = NULL;

        if (val->type == YNODE_SCALAR && val->value[0] == '\0' && f->type == YNODE_SCALAR) {
                pstate_error(st, key, "'%s' needs a value", key->value);
                return;
        }
        if (f->type == YNODE_MAP && ynode_is_null(val))
                return; /* an empty section: all defaults */
        if (val->type != f->type) {
                pstate_error(st, val, "'%s' must be %s, not %s", key->value, ynode_type_name(f->type),
                             ynode_type_name(val->type));
                return;
        }
        if (f->group) {
                if (asprintf(&sub, "%s.%s", where, key->value) < 0) {
                        sub = NULL;
                        st->oom = true;
                        return;
                }
                fields_parse(st, val, sub, f->group, base);
                return;
        }
        f->parse(st, val, (char *) base + f->offset);
}

void fields_parse(struct pstate *st, const struct ynode *map, const char *where, const struct field *fields,
                  void *base) {
        const struct ynode *k, *v;

        assert(st);
        assert(map && map->type == YNODE_MAP);
        assert(where);
        assert(fields);
        assert(base);
        YMAP_FOREACH(k, v, map, i) {
                const struct field *f;

                if (st->oom)
                        return;
                for (f = fields; f->key; f++)
                        if (streq(f->key, k->value))
                                break;
                if (!f->key) {
                        report_unknown_key(st, k, where, fields);
                        continue;
                }
                parse_field(st, f, k, v, where, base);
        }
}

/* ---- scalar parsers ------------------------------------------------------------ */

void field_size(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_size(val->value, st->ctx->ram_bytes, target, &e) < 0)
                pstate_error(st, val, "'%s': %s", val->value, e);
}

void field_bandwidth(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_bandwidth(val->value, target, &e) < 0)
                pstate_error(st, val, "'%s': %s", val->value, e);
}

void field_iops(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_iops(val->value, target, &e) < 0)
                pstate_error(st, val, "'%s': %s", val->value, e);
}

void field_duration(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_duration(val->value, target, &e) < 0)
                pstate_error(st, val, "'%s': %s", val->value, e);
}

void field_percent(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_percent(val->value, target, &e) < 0)
                pstate_error(st, val, "'%s': %s", val->value, e);
}

void field_bool(struct pstate *st, const struct ynode *val, void *target) {
        if (val->plain && streq(val->value, "true"))
                *(bool *) target = true;
        else if (val->plain && streq(val->value, "false"))
                *(bool *) target = false;
        else
                pstate_error(st, val, "'%s': expected true or false%s", val->value,
                             val->plain ? "" : ", without quotes");
}

void field_string(struct pstate *st, const struct ynode *val, void *target) {
        char **s = target, *copy = strdup(val->value);

        if (!copy) {
                st->oom = true;
                return;
        }
        free(*s);
        *s = copy;
}

/* Whether item i of the list val is past max: then an error says so, and the rest of the list is not read. */
bool policy_list_full(struct pstate *st, const struct ynode *val, size_t i, size_t max, const char *what) {
        if (i < max)
                return false;
        pstate_error(st, val->children[i], "more than %zu %s (the rest of the list is not read)", max, what);
        return true;
}
