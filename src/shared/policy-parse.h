/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Internal to the two parsers of the policy language, policy.c (policy
 * files) and settings.c (pagewarden.yaml): the state of parsing one file,
 * and table-driven parsing of mappings.  A table lists a mapping's keys
 * with the parser of each value and where it goes in the target struct;
 * fields_parse() rejects unknown keys (suggesting the nearest one) and
 * values of the wrong kind, and hands every other value to its parser.
 *
 * Errors: field parsers return nothing.  A mistake in the input becomes a
 * diagnostic at the value's position (pstate_error()).  Running out of
 * memory, or losing a diagnostic to it, sets st->oom; from then on the
 * parser only cleans up, and nothing aborts.  The parse function's result
 * comes from pstate_result(): -ENOMEM if memory ran out (here or in the
 * YAML reader: diags->oom), else -EINVAL if the file had errors, else 0.
 * Not for use outside the two parsers.
 */

#include <stdbool.h>
#include <stddef.h>

#include "device.h"
#include "diag.h"
#include "policy.h"
#include "yamltree.h"

/* A name looked up outside the file: a user or group (NSS), or a device (sysfs, mountinfo). */
struct pstate_lookup {
        char *name;
        int kind; /* users, groups, devices */
        int r;    /* users and groups: 1 known, 0 unknown; devices: device_resolve()'s result */
        struct device_info device;
};

struct pstate {
        const struct policy_context *ctx;
        const struct source *src;
        struct diag_list *diags;
        size_t first_error;            /* diags->n_errors when this file started */
        bool oom;                      /* an allocation failed: the result is -ENOMEM */
        struct pstate_lookup *lookups; /* at most PW_MAX_LOOKUPS */
        size_t n_lookups, allocated_lookups;
};

void pstate_init(struct pstate *st, const struct policy_context *ctx, const struct source *src,
                 struct diag_list *diags);
void pstate_done(struct pstate *st);
/* Records an error at node n (NULL: the whole file). */
void pstate_error(struct pstate *st, const struct ynode *n, const char *fmt, ...) _printf_(3, 4);
/* A warning there: the input stays valid (pagewardenctl check --strict refuses it). */
void pstate_warning(struct pstate *st, const struct ynode *n, const char *fmt, ...) _printf_(3, 4);
int pstate_result(const struct pstate *st);
/*
 * Lookups outside the file are remembered, so that a name given many times
 * is looked up once, and at most PW_MAX_LOOKUPS different names are looked
 * up per file: NSS may ask a network service, and a reload waits for it.
 * Past that, -E2BIG, and pstate_lookups_problem() says why.
 *
 * pstate_account_known(): 1 if a valid user (or group) name is a numeric
 * id, known to NSS, or not to be looked up (the context does not resolve
 * names); 0 if unknown; -E2BIG; -ENOMEM (then st->oom is set).
 * pstate_device_resolve(): device_resolve()'s result, or -E2BIG.
 */
int pstate_account_known(struct pstate *st, const char *name, bool group);
int pstate_device_resolve(struct pstate *st, const char *device, struct device_info *ret);
const char *pstate_lookups_problem(void);

typedef void (*field_parser)(struct pstate *st, const struct ynode *val, void *target);

struct field {
        const char *key;
        enum ynode_type type;
        field_parser parse;        /* scalars, lists, and maps parsed by hand */
        size_t offset;             /* of the target in the entry's struct */
        const struct field *group; /* a map whose keys are fields of the same struct */
};

/* Parses the keys of map into base, as the table fields ({}-terminated) says; where names the map in
 * messages ("job class 'x'"). */
void fields_parse(struct pstate *st, const struct ynode *map, const char *where, const struct field *fields,
                  void *base);

/* Field parsers for the kinds of value of units.h, and true/false, and strings (target: char *, replaced). */
void field_size(struct pstate *st, const struct ynode *val, void *target);      /* uint64_t */
void field_bandwidth(struct pstate *st, const struct ynode *val, void *target); /* uint64_t */
void field_iops(struct pstate *st, const struct ynode *val, void *target);      /* uint64_t */
void field_duration(struct pstate *st, const struct ynode *val, void *target);  /* uint64_t, usec */
void field_percent(struct pstate *st, const struct ynode *val, void *target);   /* uint32_t */
void field_bool(struct pstate *st, const struct ynode *val, void *target);      /* bool */
void field_string(struct pstate *st, const struct ynode *val, void *target);    /* char * */

/* Whether item i of the list val is past max: then an error says so (the rest of the list is not read). */
bool policy_list_full(struct pstate *st, const struct ynode *val, size_t i, size_t max, const char *what);
