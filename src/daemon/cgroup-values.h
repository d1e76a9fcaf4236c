/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Pure helpers for cgroup v2 file contents: what to write for a class's
 * limits, how to read io.max, cgroup.events and memory.stat, and which
 * memory.min/memory.low every ancestor of a protected cgroup needs.  No I/O:
 * the engine (cgroup.c) reads and writes, these compute.
 *
 * Errors: negative errno (-EINVAL or -ERANGE for text that is not what
 * the kernel writes, -ENOENT for a key that is not there, -ENOMEM);
 * formatting cannot fail.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* "max" or the decimal number, as cgroup files want them. */
void cgv_format_limit(uint64_t v, char *buf, size_t len);
/* Parses "max" or a decimal number (a whole file's content, trailing newline allowed). */
int cgv_parse_limit(const char *s, uint64_t *ret);

/* One line of io.max. */
struct cgv_io_line {
        unsigned major, minor;
        uint64_t rbps, wbps, riops, wiops; /* UNITS_MAX: max */
};
/* "MAJ:MIN rbps=N wbps=N riops=N wiops=N" (every key, so that old limits are replaced). */
void cgv_format_io_line(const struct cgv_io_line *l, char *buf, size_t len);
/* Parses io.max: one line per device, keys in any order, missing keys are max. */
int cgv_parse_io_max(const char *text, struct cgv_io_line **ret, size_t *ret_n);

/*
 * The io.max lines that make a class's io.max what the policy says, given
 * what io.max holds now: one line per configured disk, and a line with every
 * key "max" for each disk that is no longer configured.
 */
int cgv_io_plan(const struct pw_io_limit *want, size_t n_want, const struct cgv_io_line *have, size_t n_have,
                struct cgv_io_line **ret, size_t *ret_n);

/* cgroup.events: "populated 0|1" and "frozen 0|1". */
int cgv_parse_events(const char *text, bool *ret_populated, bool *ret_frozen);

/* io.stat: the bytes read and written, summed over its devices ("8:0 rbytes=N wbytes=N rios=..."). */
int cgv_parse_io_stat(const char *text, uint64_t *ret_read, uint64_t *ret_written);

/* The value of key in a "key value" file (memory.stat, memory.events, cgroup.stat). */
int cgv_parse_keyed(const char *text, const char *key, uint64_t *ret);

/* A PSI file (memory.pressure): averages in percent; full is absent for cpu on old kernels. */
struct cgv_psi {
        double some_avg10, some_avg60, full_avg10, full_avg60;
        uint64_t some_total, full_total; /* microseconds stalled */
};
int cgv_parse_psi(const char *text, struct cgv_psi *ret);

/* Protection that a cgroup asks for. */
struct cgv_protect_request {
        const char *path; /* below the cgroup2 mount: "/system.slice/db.service" */
        uint64_t min, low;
};

/* What one node of the tree of protected cgroups and their ancestors needs. */
struct cgv_protect_need {
        char *path;
        uint64_t min, low;
        bool requested; /* the node is itself protected (else an ancestor) */
};

/*
 * For every protected cgroup and each of its ancestors below the root:
 * need(node) = max(what node asks for, sum of need(child)), for memory.min
 * and memory.low.  A cgroup's protection only works when every ancestor
 * carries at least as much.  Sorted so that parents come before children.
 */
int cgv_protect_plan(const struct cgv_protect_request *req, size_t n, struct cgv_protect_need **ret, size_t *ret_n);
void cgv_protect_needs_free(struct cgv_protect_need *needs, size_t n);
