/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The protection ledger: one copy, for both backends, of how pagewarden
 * changes the protection of applications and gives it back.
 *
 *   plan     each requested cgroup gets its memory.min/low, and each of its
 *            ancestors enough to cover the protected children below it
 *            (cgv_protect_plan): protection works only as far as every
 *            ancestor carries it;
 *   save     before a node is first changed its own values are read and
 *            kept, and persisted (ledger_save) so that a daemon restarted
 *            after a crash still knows them;
 *   raise    a node gets max(plan, its original): pagewarden never lowers
 *            what someone else set; swap: deny sets memory.swap.max to 0;
 *   restore  a node no request needs any more gets its originals back and
 *            is forgotten; a node still protected whose swap: deny was
 *            withdrawn gets its memory.swap.max back.
 *
 * The ledger does no I/O on cgroups: the backend passes a struct ledger_io
 * that reads and writes one node (cgroupfs files, or a systemd unit's
 * properties) and says under which key a node is saved (its path, or its
 * unit's name).
 *
 * Errors: negative errno.  -ENOENT and -ENODEV from the io mean the node is
 * gone, which is normal (an application stopped): the descendants of a gone
 * node are skipped, and a gone node's saved values are dropped.  -ESTALE
 * means another node is under the key now (the application restarted): a
 * raise saves the new one's values and writes again, a restore leaves the
 * new one alone.  One node's failure never stops the others; the first
 * error is returned.
 *
 * Waiting: the io's read may answer -EINPROGRESS (the values are asked for
 * and the backend applies again once they are at hand, never waiting), and
 * a request may be pending (its node cannot be named yet).  A node waiting
 * for its values is neither raised nor given back, nor is anything below
 * it, and its entry stays; while a request is pending nothing is given back
 * at all (what it needs is not known yet).  Their requests' result is
 * -EINPROGRESS, which is no error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ledger_values {
        uint64_t min, low;
        bool has_swap; /* swap_max is meaningful (read, or to be written) */
        uint64_t swap_max;
};

struct ledger_entry {
        char *key;
        struct ledger_values orig; /* what the node had before pagewarden changed it */
        uint64_t id;               /* the node's identity when it was read (not persisted): 0 unknown */
        bool seen;                 /* read from the node by this daemon (not only loaded from the state file) */
};

struct ledger {
        struct ledger_entry *entries;
        size_t n, allocated;
        char *state_file; /* where the entries are persisted, or NULL */
        char *persisted;  /* what the state file holds, as last written or read (NULL: not known) */
        const char *header;
        bool (*valid_key)(const char *key);
};

struct ledger_io {
        /* The key a node (a path below the mount, "/a/b") is saved under: a pointer into path. */
        const char *(*key)(const char *path);
        /*
         * Reads the node's min and low, and its swap_max too when swap is set
         * (has_swap tells), from the node with identity id (0: whichever is
         * there), and says which node it read: *ret_id, a cgroup's inode
         * number, or 0 when the io cannot tell nodes apart.  -EINPROGRESS:
         * asked, not at hand yet (see "Waiting" above).
         */
        int (*read)(void *userdata, const char *key, uint64_t id, bool swap, struct ledger_values *ret,
                    uint64_t *ret_id);
        /*
         * Writes min and low, and swap_max when v->has_swap, into the node with
         * identity id (0: whichever is there); -ESTALE, writing nothing, when
         * another node is under the key.  Checked and written through one
         * handle: a node removed and created again between the ledger's read
         * and its write never gets what was meant for the old one.
         */
        int (*write)(void *userdata, const char *key, uint64_t id, const struct ledger_values *v);
        void *userdata;
};

/* One protected node as the policy asks for it; the one request type from the backend down. */
struct ledger_request {
        const char *path; /* below the cgroup2 mount, with a leading '/'; NULL: not this ledger's (-EOPNOTSUPP) */
        uint64_t min, low;
        bool swap_deny;
        bool pending; /* this ledger's, its node not known yet (path NULL): -EINPROGRESS, nothing given back */
};

/*
 * An empty ledger persisted in state_file (NULL: only in memory), with the
 * entries a previous daemon left there.  header is the file's first line (a
 * comment); valid_key refuses keys of damaged lines.
 */
int ledger_init(struct ledger *l, const char *state_file, const char *header, bool (*valid_key)(const char *key));
void ledger_done(struct ledger *l);

/*
 * Makes the protection in force exactly what req asks (n may be 0: every
 * saved node is restored), then persists the entries.  ret_errors (n entries, may be NULL): for each
 * request 0, -ENOENT when its node or an ancestor is gone, -EOPNOTSUPP for a
 * request without a path (another ledger's: a caller with two ledgers passes
 * each the whole list), -EINPROGRESS while it or a node above it waits, or
 * the error of the write that failed on its node.
 */
int ledger_apply(struct ledger *l, const struct ledger_request *req, size_t n, const struct ledger_io *io,
                 int *ret_errors);

const struct ledger_entry *ledger_find(const struct ledger *l, const char *key);

/*
 * The entries as the state file has them, one line per node: "MIN LOW SWAP
 * KEY", SWAP "-" when not saved, after the header.  Parsing adds the lines
 * to l and skips damaged lines and refused keys rather than restore garbage.
 */
char *ledger_format(const struct ledger *l);
int ledger_parse(struct ledger *l, const char *text);
