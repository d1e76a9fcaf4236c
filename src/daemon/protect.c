/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>

#include "log.h"
#include "protect.h"
#include "units.h"

void protect_init(struct protect *p, struct backend *backend, struct action_log *log) {
        *p = (struct protect){ .backend = backend, .log = log };
}

void protect_clear_auto(struct protect *p) {
        for (size_t i = 0; i < p->n_autos; i++)
                free(p->autos[i].name);
        p->n_autos = 0;
}

void protect_done(struct protect *p) {
        protect_clear_auto(p);
        free(p->autos);
        *p = (struct protect){};
}

int protect_set_auto(struct protect *p, const char *name, uint64_t bytes) {
        char *n;

        for (size_t i = 0; i < p->n_autos; i++)
                if (streq(p->autos[i].name, name)) {
                        p->autos[i].bytes = bytes;
                        return 0;
                }
        n = strdup(name);
        if (!n || GROW(p->autos, p->allocated_autos, p->n_autos + 1) < 0) {
                free(n);
                return -ENOMEM;
        }
        p->autos[p->n_autos++] = (struct protect_auto){ .name = n, .bytes = bytes };
        return 0;
}

static uint64_t auto_bytes(const struct protect *p, const char *name) {
        for (size_t i = 0; i < p->n_autos; i++)
                if (streq(p->autos[i].name, name))
                        return p->autos[i].bytes;
        return 0;
}

static uint64_t size_now(const struct protect *p, const struct pw_protect *pr, const struct pw_protect_size *ps) {
        switch (ps->mode) {
        case PW_PROTECT_BYTES:
                return ps->bytes;
        case PW_PROTECT_AUTO:
                return auto_bytes(p, pr->name);
        default:
                return 0;
        }
}

static void log_result(struct protect *p, const struct backend_protect *req, const struct cgroup_protect_result *res) {
        const char *what = req->unit ?: req->cgroup;
        char min[32], eff[32];

        if (res->error == -ENOENT)
                action_log_add(p->log, LOG_LEVEL_WARNING, "Protect %s: %s does not exist or does not run (yet)",
                               req->name, what);
        else if (res->error == -EOPNOTSUPP)
                action_log_add(p->log, LOG_LEVEL_WARNING,
                               "Protect %s: unit %s needs the systemd backend (systemd is not PID 1 here, or "
                               "backend: cgroupfs is set); give its cgroup: instead",
                               req->name, what);
        else if (res->error < 0)
                action_log_add(p->log, LOG_LEVEL_WARNING, "Protect %s: %s: %s", req->name, what, strerror(-res->error));
        else {
                units_format_human(res->min, min, sizeof(min));
                units_format_human(res->effective_min, eff, sizeof(eff));
                log_debug("Protect %s: %s has memory.min %s (effective %s)", req->name, what, min, eff);
        }
}

int protect_apply(struct protect *p, const struct pw_policy *policy) {
        size_t n = policy->n_protects;
        _cleanup_free_ struct backend_protect *req = calloc(n + 1, sizeof(*req));
        _cleanup_free_ struct cgroup_protect_result *res = calloc(n + 1, sizeof(*res));
        int r;

        assert(p && policy);
        if (!req || !res)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct pw_protect *pr = &policy->protects[i];

                req[i] = (struct backend_protect){
                        .name = pr->name,
                        .unit = pr->unit,
                        .cgroup = pr->cgroup ? pr->cgroup + 1 : NULL,
                        .min = size_now(p, pr, &pr->min),
                        .low = size_now(p, pr, &pr->low),
                        .swap_deny = pr->swap_deny,
                };
        }
        r = p->backend->ops->protect_set(p->backend, req, n, res);
        if (r < 0)
                action_log_add(p->log, LOG_LEVEL_ERR, "Protection could not be applied completely: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                log_result(p, &req[i], &res[i]);
        return r;
}

int protect_withdraw(struct protect *p) {
        int r = p->backend->ops->protect_set(p->backend, NULL, 0, NULL);

        if (r < 0)
                return log_warning_errno(r, "Restoring the original protection values failed: %m");
        log_info("Protection withdrawn: original memory.min/low/swap.max values restored");
        return 0;
}
