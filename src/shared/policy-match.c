/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The match: lists of a job class, the rules the daemon applies itself:
 * their values checked and parsed, the checks across them, the index that
 * finds an executable or a unit pattern that another class names already,
 * and what extend: and a comparison of two policies need of them.  Part of
 * policy.c's parser (policy-match.h).
 */
#include <limits.h>

#include "policy-match.h"
#include "policy-programs.h"

/* ---- values ---- */

static void patterns_done(struct pw_patterns *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->v[i].text);
                free(p->v[i].source);
        }
        free(p->v);
        *p = (struct pw_patterns){};
}

void policy_match_done(struct pw_match *m) {
        patterns_done(&m->units);
        patterns_done(&m->exe);
        patterns_done(&m->cmdline);
        patterns_done(&m->user);
        patterns_done(&m->under);
}

bool policy_class_matches(const struct pw_job_class *c) {
        return c->match.units.n || c->match.exe.n || c->match.cmdline.n;
}

static void pattern_add(struct pstate *st, struct pw_patterns *p, const struct ynode *v) {
        char *copy;

        for (size_t i = 0; i < p->n; i++)
                if (streq(p->v[i].text, v->value)) {
                        pstate_error(st, v, "'%s' is listed twice", v->value);
                        return;
                }
        copy = strdup(v->value);
        if (!copy || GROW(p->v, p->allocated, p->n + 1) < 0) {
                free(copy);
                st->oom = true;
                return;
        }
        p->v[p->n++] = (struct pw_pattern){ .text = copy, .line = v->line, .column = v->column };
}

/* Why a value of this list is wrong, or NULL. */
typedef const char *(*pattern_check)(struct pstate *st, const char *value);

static const char *exe_problem(struct pstate *st, const char *v) {
        if (v[0] != '/')
                return "an executable must be an absolute path";
        if (strlen(v) >= PATH_MAX)
                return "path is too long";
        if (strstr(v, "//") || strstr(v, "/./") || strstr(v, "/../") || endswith(v, "/.") || endswith(v, "/..") ||
            endswith(v, "/"))
                return "path must be normalised (no //, . or .., no trailing /)";
        if (strpbrk(v, "*?["))
                return "an executable is a path, not a pattern (use cmdline: for patterns)";
        return NULL;
}

static const char *cmdline_problem(struct pstate *st, const char *v) {
        if (!v[0])
                return "a command-line pattern cannot be empty";
        if (strlen(v) > 1024)
                return "a command-line pattern has at most 1024 characters";
        if (has_control_char(v))
                return "a command-line pattern cannot hold control characters";
        return NULL;
}

static const char *unit_problem(struct pstate *st, const char *v) {
        return policy_unit_pattern_problem(v);
}

static const char *user_problem(struct pstate *st, const char *v) {
        const char *why = policy_user_name_problem(v);

        if (why)
                return why;
        switch (pstate_account_known(st, v, false)) {
        case 0:
                return "unknown user";
        case -E2BIG:
                return pstate_lookups_problem();
        default:
                return NULL; /* known, or out of memory (st->oom) */
        }
}

static const char *under_problem(struct pstate *st, const char *v) {
        return v[0] == '/' ? policy_cgroup_path_problem(v) : policy_unit_name_problem(v);
}

static void parse_patterns(struct pstate *st, const struct ynode *val, struct pw_patterns *p, const char *what,
                           pattern_check check) {
        for (size_t i = 0; i < val->n_children && !st->oom; i++) {
                const struct ynode *v = val->children[i];
                const char *why;

                if (i >= PW_MAX_MATCH) {
                        char entries[64];

                        snprintf(entries, sizeof(entries), "entries in match.%s", what);
                        policy_list_full(st, val, i, PW_MAX_MATCH, entries);
                        break;
                }
                if (v->type != YNODE_SCALAR) {
                        pstate_error(st, v, "match.%s must be a list of strings, not of %s", what,
                                     ynode_type_name(v->type));
                        continue;
                }
                why = check(st, v->value);
                if (why)
                        pstate_error(st, v, "match.%s '%s': %s", what, v->value, why);
                else if (!st->oom)
                        pattern_add(st, p, v);
        }
}

#define MATCH_PARSER(field, check)                                                                      \
        static void p_match_##field(struct pstate *st, const struct ynode *val, void *target) {         \
                parse_patterns(st, val, &((struct pw_job_class *) target)->match.field, #field, check); \
        }
MATCH_PARSER(units, unit_problem)
MATCH_PARSER(cmdline, cmdline_problem)
MATCH_PARSER(user, user_problem)
MATCH_PARSER(under, under_problem)

/* Programs are also looked at on this host, when the context asks: a warning for one that cannot match. */
static void p_match_exe(struct pstate *st, const struct ynode *val, void *target) {
        struct pw_patterns *exe = &((struct pw_job_class *) target)->match.exe;
        size_t first = exe->n;

        parse_patterns(st, val, exe, "exe", exe_problem);
        for (size_t i = first; i < exe->n && st->ctx->check_programs && !st->oom; i++)
                if (policy_check_program(st->src, &exe->v[i], st->diags) < 0)
                        st->oom = true;
}

/* clang-format off */
const struct field policy_match_fields[] = {
        { "units", YNODE_SEQ, p_match_units, 0 },
        { "exe", YNODE_SEQ, p_match_exe, 0 },
        { "cmdline", YNODE_SEQ, p_match_cmdline, 0 },
        { "user", YNODE_SEQ, p_match_user, 0 },
        { "under", YNODE_SEQ, p_match_under, 0 },
        {},
};
/* clang-format on */

static size_t match_count(const struct pw_match *m) {
        return m->units.n + m->exe.n + m->cmdline.n + m->user.n + m->under.n;
}

void policy_match_finish(struct pstate *st, const struct ynode *entry, struct pw_job_class *c,
                         const struct pw_policy *p) {
        const struct ynode *m = ymap_where(entry, "match", NULL);
        size_t total = match_count(&c->match);

        if (m && !policy_class_matches(c))
                pstate_error(st, m, "match: needs units, exe or cmdline (user and under only narrow those)");
        /* Anyone may start a program with any arguments, so argv alone names no one's work. */
        if (m && c->match.cmdline.n && !c->match.user.n && !c->match.under.n)
                pstate_error(st, ymap_where(m, "cmdline", NULL),
                             "match.cmdline needs user or under as well: any local user can give a program any "
                             "command line");
        if (!m || total == 0)
                return;
        for (size_t i = 0; i < p->n_classes; i++)
                if (&p->classes[i] != c) /* a class that extend: adds to is counted once */
                        total += match_count(&p->classes[i].match);
        if (total > PW_MAX_MATCH_TOTAL)
                pstate_error(st, m, "the job classes would have %zu match entries in all, more than %d", total,
                             PW_MAX_MATCH_TOTAL);
}

/* ---- one class per executable and unit pattern ---- */

/* The node of list (match.exe, ...) in entry that holds text. */
const struct ynode *policy_pattern_node(const struct ynode *entry, const char *list, const char *text) {
        const struct ynode *seq = ymap_where(entry, list, entry);

        for (size_t i = 0; seq->type == YNODE_SEQ && i < seq->n_children; i++)
                if (seq->children[i]->type == YNODE_SCALAR && streq(seq->children[i]->value, text))
                        return seq->children[i];
        return seq;
}

static const struct pw_patterns *match_exe(const struct pw_job_class *c) {
        return &c->match.exe;
}

static const struct pw_patterns *match_units(const struct pw_job_class *c) {
        return &c->match.units;
}

static int pattern_ref_cmp(const void *a, const void *b) {
        return strcmp(((const struct pattern_ref *) a)->text, ((const struct pattern_ref *) b)->text);
}

/* Adds the entries of class k of p from the from-th on; -ENOMEM. */
static int pattern_index_add(struct pattern_index *idx, const struct pw_policy *p, size_t k, size_t from) {
        const struct pw_patterns *l = idx->list(&p->classes[k]);

        if (l->n <= from)
                return 0;
        if (GROW(idx->v, idx->allocated, idx->n + l->n - from) < 0)
                return -ENOMEM;
        for (size_t j = from; j < l->n; j++)
                idx->v[idx->n++] = (struct pattern_ref){ .text = l->v[j].text, .class = k, .pattern = j };
        qsort(idx->v, idx->n, sizeof(*idx->v), pattern_ref_cmp);
        return 0;
}

static int pattern_index_init(struct pattern_index *idx, const struct pw_policy *p,
                              const struct pw_patterns *(*list)(const struct pw_job_class *c)) {
        *idx = (struct pattern_index){ .list = list };
        for (size_t k = 0; k < p->n_classes; k++)
                if (pattern_index_add(idx, p, k, 0) < 0)
                        return -ENOMEM;
        return 0;
}

static void pattern_index_done(struct pattern_index *idx) {
        free(idx->v);
        *idx = (struct pattern_index){};
}

static const struct pattern_ref *pattern_index_find(const struct pattern_index *idx, const char *text) {
        struct pattern_ref key = { .text = text };

        return idx->n ? bsearch(&key, idx->v, idx->n, sizeof(*idx->v), pattern_ref_cmp) : NULL;
}

/* The entries of c's list (match.exe or match.units) that another class of the policy has already. */
static void check_list_conflicts(struct pstate *st, const struct ynode *entry, const struct pw_job_class *c,
                                 const struct pw_policy *p, const struct pattern_index *idx, const char *name) {
        const struct pw_patterns *l = idx->list(c);

        for (size_t i = 0; i < l->n; i++) {
                const struct pattern_ref *ref = pattern_index_find(idx, l->v[i].text);
                const struct pw_job_class *o;

                if (!ref)
                        continue;
                o = &p->classes[ref->class];
                pstate_error(st, policy_pattern_node(entry, name, l->v[i].text),
                             "%s is matched by class '%s' already (%s:%u)", l->v[i].text, o->name,
                             idx->list(o)->v[ref->pattern].source ?: o->source, idx->list(o)->v[ref->pattern].line);
        }
}

/* An executable or a unit pattern names one class only: which would win would not be obvious. */
void match_index_check(struct pstate *st, const struct ynode *entry, const struct pw_job_class *c,
                       const struct pw_policy *p, const struct match_index *mi) {
        check_list_conflicts(st, entry, c, p, &mi->exe, "match.exe");
        check_list_conflicts(st, entry, c, p, &mi->units, "match.units");
}

int match_index_init(struct match_index *mi, const struct pw_policy *p) {
        if (pattern_index_init(&mi->exe, p, match_exe) < 0 || pattern_index_init(&mi->units, p, match_units) < 0) {
                match_index_done(mi);
                return -ENOMEM;
        }
        return 0;
}

int match_index_add(struct match_index *mi, const struct pw_policy *p, size_t k, size_t exe_from, size_t units_from) {
        return pattern_index_add(&mi->exe, p, k, exe_from) < 0 || pattern_index_add(&mi->units, p, k, units_from) < 0
                       ? -ENOMEM
                       : 0;
}

void match_index_done(struct match_index *mi) {
        pattern_index_done(&mi->exe);
        pattern_index_done(&mi->units);
}

/* ---- extend: and comparison ---- */

/* Moves the entries of from to the end of to, each marked with the file that added it. */
static void patterns_move(struct pstate *st, struct pw_patterns *to, struct pw_patterns *from, const char *source) {
        if (GROW(to->v, to->allocated, to->n + from->n) < 0) {
                st->oom = true;
                return;
        }
        for (size_t i = 0; i < from->n; i++) {
                to->v[to->n] = from->v[i];
                to->v[to->n++].source = strdup(source);
                if (!to->v[to->n - 1].source)
                        st->oom = true;
        }
        free(from->v);
        *from = (struct pw_patterns){};
}

void policy_match_move(struct pstate *st, struct pw_match *to, struct pw_match *from, const char *source) {
        patterns_move(st, &to->units, &from->units, source);
        patterns_move(st, &to->exe, &from->exe, source);
        patterns_move(st, &to->cmdline, &from->cmdline, source);
        patterns_move(st, &to->user, &from->user, source);
        patterns_move(st, &to->under, &from->under, source);
}

static bool patterns_equal(const struct pw_patterns *a, const struct pw_patterns *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!streq(a->v[i].text, b->v[i].text))
                        return false;
        return true;
}

bool policy_match_equal(const struct pw_match *a, const struct pw_match *b) {
        return patterns_equal(&a->units, &b->units) && patterns_equal(&a->exe, &b->exe) &&
               patterns_equal(&a->cmdline, &b->cmdline) && patterns_equal(&a->user, &b->user) &&
               patterns_equal(&a->under, &b->under);
}
