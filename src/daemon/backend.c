/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What both backends share: freeing one, waiting for its writes, the paths of protected entries.
 * Choosing one is backend-open.c's (above both backends). */
#include <assert.h>

#include "backend.h"

struct backend *backend_free(struct backend *b) {
        if (!b)
                return NULL;
        /* The worker first: its thread uses the engine. */
        b->worker = worker_free(b->worker);
        if (b->ops->free)
                b->ops->free(b);
        b->engine = cgroup_engine_free(b->engine);
        free(b->root);
        free(b);
        return NULL;
}

int backend_when_answered(struct backend *b, void (*fn)(void *userdata), void *userdata) {
        assert(b && fn);
        return b->ops->when_answered ? b->ops->when_answered(b, fn, userdata) : 0;
}

struct backend_protect backend_protect_of(const struct pw_protect *pr) {
        return (struct backend_protect){
                .name = pr->name, .unit = pr->unit, .cgroup = pr->cgroup, .swap_deny = pr->swap_deny
        };
}

int backend_protect_path(struct backend *b, const struct pw_protect *pr, char **ret_path) {
        struct backend_protect bp = backend_protect_of(pr);

        return b->ops->protect_path(b, &bp, ret_path);
}
