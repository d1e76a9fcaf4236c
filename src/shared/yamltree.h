/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A YAML document read with libyaml's event parser into a small tree that
 * keeps every node's position.  Only the safe subset of YAML that policy
 * files need is accepted: one document of mappings, sequences and scalars.
 * Anchors, aliases, tags, several documents, tabs, control characters and
 * invalid UTF-8 are reported as errors, as are duplicate mapping keys and
 * files past the bounds below.
 *
 * Errors in the input go to a diag_list (-EINVAL); running out of memory,
 * here or while recording a diagnostic (diags->oom), gives -ENOMEM and no
 * tree.  Nothing aborts.
 */

#include <stdbool.h>

#include "diag.h"

enum ynode_type {
        YNODE_SCALAR,
        YNODE_MAP,
        YNODE_SEQ,
};

struct ynode {
        enum ynode_type type;
        unsigned line, column; /* 1-based */
        char *value;           /* scalars */
        bool plain;            /* scalar written without quotes */
        bool duplicate;        /* a mapping key seen before: ignored */
        /* Maps hold key, value, key, value...; sequences their items. */
        struct ynode **children;
        size_t n_children, allocated;
};

/*
 * Bounds on any input, so that reading a file takes little time and memory
 * whatever it holds (pagewarden.yaml(5), LIMITS).  A policy needs five
 * levels and a few thousand nodes; the file size is checked before
 * anything else, and parsing stops at the first node past the others.
 * Stopping matters for depth: libyaml's cost grows with the square of
 * the depth of flow collections ("[[[[..." of 100,000 levels took 40 s).
 */
#define YTREE_MAX_FILE_SIZE (1024 * 1024)
#define YTREE_MAX_DEPTH 32
#define YTREE_MAX_NODES 65536 /* values, lists and mappings (keys are values) */
_Static_assert(YTREE_MAX_FILE_SIZE == 1024 * 1024, "messages say 1 MiB");

/*
 * Parses src.  Errors go to diags.  *ret is the document's root node, or NULL
 * for a document without content (empty, or only comments).  Returns 0 when
 * the document was read without error, -EINVAL otherwise (then *ret may still
 * hold the part that could be read, so that more errors can be found in it),
 * or -ENOMEM (then *ret is NULL).
 */
int ytree_parse(const struct source *src, struct diag_list *diags, struct ynode **ret);

void ynode_free(struct ynode *n);
static inline void ynode_freep(struct ynode **n) {
        ynode_free(*n);
}

const char *ynode_type_name(enum ynode_type t);

/* A plain empty scalar, "~" or "null": no value ("jobs:" with nothing under it). */
bool ynode_is_null(const struct ynode *n);
/* The node at a dotted path ("memory.high") below map, or fallback if there is none:
 * where to point an error. */
const struct ynode *ymap_where(const struct ynode *map, const char *path, const struct ynode *fallback);

/* Iterate the key/value pairs of a map, skipping duplicate keys. */
#define YMAP_FOREACH(key, val, map, i)                         \
        for (size_t i = 0; i + 1 < (map)->n_children; i += 2)  \
                if (((key) = (map)->children[i])->duplicate) { \
                } else if (((val) = (map)->children[i + 1]), true)
