/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Allocation-failure injection for the unit tests.  fail-alloc.c replaces
 * malloc, calloc, realloc and free in the test runner (libc's strdup,
 * asprintf, scandir... call them too) with versions that forward to libc,
 * except that, when armed, one chosen allocation fails.
 */

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "policy.h"
#include "settings.h"

/*
 * Runs fn(data) once as it is (it must return expected), then again with
 * the first allocation failing, then the second, and so on until a run
 * makes fewer allocations than that.  A run with a failure must return
 * -ENOMEM, or expected when the failure was one that libc gets over
 * (vasprintf() then keeps its own buffer); fn sees to the rest of its
 * result (see fail_alloc_same()).  Outside AddressSanitizer, whose leak
 * checker does it there, each run must free all it allocated.  fn must
 * not use ck_assert(), which allocates.  Returns the number of runs that
 * gave -ENOMEM.
 */
unsigned fail_alloc_each(int (*fn)(void *data), void *data, int expected);

/* What a run produced, reduced to a number (FNV-1a) without allocating. */
uint64_t digest_str(uint64_t h, const char *s); /* NULL is not "" */
uint64_t digest_u64(uint64_t h, uint64_t v);
#define DIGEST_INIT UINT64_C(14695981039346656037)
uint64_t digest_policy(uint64_t h, const struct pw_policy *p);
uint64_t digest_settings(uint64_t h, const struct pw_settings *s);
uint64_t digest_diags(uint64_t h, const struct diag_list *l);

/*
 * For fn: r and the digest d of what the run produced.  The first run's
 * are kept in *ref (ref->set false before the first run); a later run
 * that did not give -ENOMEM must match them, else -EBADMSG is returned.
 */
struct fail_alloc_ref {
        bool set;
        int r;
        uint64_t digest;
};
int fail_alloc_same(struct fail_alloc_ref *ref, int r, uint64_t d);
