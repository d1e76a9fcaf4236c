/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the policy parser (policy.c and policy-match.c): a job
 * class's match: lists.  Errors as in policy-parse.h.
 */

#include "policy-parse.h"

/* The keys of match: (units, exe, cmdline, user, under), for a class's field table. */
extern const struct field policy_match_fields[];
void policy_match_done(struct pw_match *m);
/* The checks across c's match: lists once its fields are parsed (entry: the class's mapping; p: the policy so
 * far, for the bound on entries in all). */
void policy_match_finish(struct pstate *st, const struct ynode *entry, struct pw_job_class *c,
                         const struct pw_policy *p);
/* extend: moves from's entries to the end of to's lists, each marked with the file that added it. */
void policy_match_move(struct pstate *st, struct pw_match *to, struct pw_match *from, const char *source);
bool policy_match_equal(const struct pw_match *a, const struct pw_match *b);
/* The node of list (match.exe, ...) in entry that holds text, else the list's (or entry's) own. */
const struct ynode *policy_pattern_node(const struct ynode *entry, const char *list, const char *text);

/*
 * The executables (or unit patterns) of the policy's classes, sorted, to
 * find which class names one already: comparing each new entry with all
 * the others made checking a policy of many classes slow.  Entries point
 * to texts that the policy owns and does not move.
 */
struct pattern_index {
        struct pattern_ref {
                const char *text;
                size_t class, pattern; /* p->classes[class].match.LIST.v[pattern] */
        } * v;
        size_t n, allocated;
        const struct pw_patterns *(*list)(const struct pw_job_class *c); /* which list of a class */
};

/* The executables and the unit patterns of the policy's classes. */
struct match_index {
        struct pattern_index exe, units;
};

/* -ENOMEM, or 0. */
int match_index_init(struct match_index *mi, const struct pw_policy *p);
/* Adds class k of p: its exe entries from exe_from on, its units entries from units_from on. */
int match_index_add(struct match_index *mi, const struct pw_policy *p, size_t k, size_t exe_from, size_t units_from);
void match_index_done(struct match_index *mi);
/* An error for each exe or units entry of c that another class of p names already. */
void match_index_check(struct pstate *st, const struct ynode *entry, const struct pw_job_class *c,
                       const struct pw_policy *p, const struct match_index *mi);
