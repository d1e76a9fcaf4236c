/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stddef.h>

#include "policy-parse.h"
#include "settings.h"
#include "units.h"
#include "yamltree.h"

static const char *const backend_names[] = {
        [PW_BACKEND_AUTO] = "auto",
        [PW_BACKEND_SYSTEMD] = "systemd",
        [PW_BACKEND_CGROUPFS] = "cgroupfs",
};

const char *pw_backend_to_string(enum pw_backend b) {
        return (size_t) b < ELEMENTSOF(backend_names) ? backend_names[b] : "?";
}

static const struct {
        enum pw_log_level level;
        const char *name;
} log_level_names[] = {
        { PW_LOG_ERR, "err" },   { PW_LOG_WARNING, "warning" }, { PW_LOG_NOTICE, "notice" },
        { PW_LOG_INFO, "info" }, { PW_LOG_DEBUG, "debug" },
};

const char *pw_log_level_to_string(enum pw_log_level l) {
        for (size_t i = 0; i < ELEMENTSOF(log_level_names); i++)
                if (log_level_names[i].level == l)
                        return log_level_names[i].name;
        return "?";
}

static void p_backend(struct pstate *st, const struct ynode *val, void *target) {
        for (size_t i = 0; i < ELEMENTSOF(backend_names); i++)
                if (streq(val->value, backend_names[i])) {
                        *(enum pw_backend *) target = (enum pw_backend) i;
                        return;
                }
        pstate_error(st, val, "'%s': expected auto, systemd or cgroupfs", val->value);
}

static void p_log_level(struct pstate *st, const struct ynode *val, void *target) {
        for (size_t i = 0; i < ELEMENTSOF(log_level_names); i++)
                if (streq(val->value, log_level_names[i].name)) {
                        *(enum pw_log_level *) target = log_level_names[i].level;
                        return;
                }
        pstate_error(st, val, "'%s': expected err, warning, notice, info or debug", val->value);
}

static void p_history_jobs(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_uint(val->value, 0, 10000, target, &e) < 0)
                pstate_error(st, val, "'%s': %s (ended jobs kept: 0 to 10000, default 100)", val->value, e);
}

static void p_history_days(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_uint(val->value, 1, 3650, target, &e) < 0)
                pstate_error(st, val, "'%s': %s (days an ended job is kept: 1 to 3650, default 7)", val->value, e);
}

static void p_history_file(struct pstate *st, const struct ynode *val, void *target) {
        if (val->value[0] != '/')
                pstate_error(st, val, "history_file '%s': must be an absolute path", val->value);
        else
                field_string(st, val, target);
}

static void p_reserve(struct pstate *st, const struct ynode *val, void *target) {
        uint64_t *reserve = target, v;
        const char *e;
        char ram[32];

        if (units_parse_size(val->value, st->ctx->ram_bytes, &v, &e) < 0)
                pstate_error(st, val, "reserve '%s': %s", val->value, e);
        else if (v == UNITS_MAX)
                pstate_error(st, val, "reserve cannot be max: it is what auto protection leaves to the rest");
        else if (st->ctx->ram_bytes && v >= st->ctx->ram_bytes) {
                units_format_human(st->ctx->ram_bytes, ram, sizeof(ram));
                pstate_error(st, val, "reserve '%s' is not below the RAM (%s)", val->value, ram);
        } else
                *reserve = v;
}

static void p_socket(struct pstate *st, const struct ynode *val, void *target) {
        if (val->value[0] != '/')
                pstate_error(st, val, "socket '%s': must be an absolute path", val->value);
        else if (strlen(val->value) >= 108) /* sizeof(sun_path) */
                pstate_error(st, val, "socket path is longer than 107 bytes, the limit of a Unix socket address");
        else
                field_string(st, val, target);
}

static void p_group(struct pstate *st, const struct ynode *val, void *target) {
        int r;

        if (policy_user_name_problem(val->value)) {
                pstate_error(st, val, "'%s' is not a valid group name", val->value);
                return;
        }
        r = pstate_account_known(st, val->value, true);
        if (r > 0)
                field_string(st, val, target);
        else if (r == 0)
                pstate_error(st, val, "unknown group '%s'", val->value);
        else if (r == -E2BIG)
                pstate_error(st, val, "'%s': %s", val->value, pstate_lookups_problem());
}

static void p_cgroup_root(struct pstate *st, const struct ynode *val, void *target) {
        _cleanup_free_ char *abs = NULL;
        char **root = target, *copy;
        const char *why;

        if (asprintf(&abs, "/%s", val->value + (val->value[0] == '/')) < 0) {
                abs = NULL;
                st->oom = true;
                return;
        }
        why = policy_cgroup_path_problem(abs);
        if (why) {
                pstate_error(st, val, "cgroup_root '%s': %s", val->value, why);
                return;
        }
        copy = strdup(abs + 1); /* stored without the leading '/' */
        if (!copy) {
                st->oom = true;
                return;
        }
        free(*root);
        *root = copy;
}

/* name taken relative to the directory of file (name itself if absolute). */
static char *sibling_path(const char *file, const char *name) {
        const char *slash = strrchr(file, '/');
        _cleanup_free_ char *dir = NULL;

        if (name[0] == '/' || !slash)
                return strdup(name);
        dir = strndup(file, (size_t) (slash - file) + 1); /* keeps the '/' */
        return dir ? path_join(dir, name) : NULL;
}

static void p_policy_dir(struct pstate *st, const struct ynode *val, void *target) {
        char **dir = target, *path = sibling_path(st->src->path, val->value);

        if (!path) {
                st->oom = true;
                return;
        }
        free(*dir);
        *dir = path;
}

static const struct field pressure_fields[] = {
        { "threshold", YNODE_SCALAR, field_percent, offsetof(struct pw_settings, pressure.threshold) },
        { "window", YNODE_SCALAR, field_duration, offsetof(struct pw_settings, pressure.window_usec) },
        { "release", YNODE_SCALAR, field_percent, offsetof(struct pw_settings, pressure.release) },
        { "cooldown", YNODE_SCALAR, field_duration, offsetof(struct pw_settings, pressure.cooldown_usec) },
        {},
};

static const struct field settings_fields[] = {
        { "policy_dir", YNODE_SCALAR, p_policy_dir, offsetof(struct pw_settings, policy_dir) },
        { "socket", YNODE_SCALAR, p_socket, offsetof(struct pw_settings, socket) },
        { "socket_group", YNODE_SCALAR, p_group, offsetof(struct pw_settings, socket_group) },
        { "cgroup_root", YNODE_SCALAR, p_cgroup_root, offsetof(struct pw_settings, cgroup_root) },
        { "backend", YNODE_SCALAR, p_backend, offsetof(struct pw_settings, backend) },
        { "restore_on_stop", YNODE_SCALAR, field_bool, offsetof(struct pw_settings, restore_on_stop) },
        { "run_fallback", YNODE_SCALAR, field_bool, offsetof(struct pw_settings, run_fallback) },
        { "history_jobs", YNODE_SCALAR, p_history_jobs, offsetof(struct pw_settings, history_jobs) },
        { "history_days", YNODE_SCALAR, p_history_days, offsetof(struct pw_settings, history_days) },
        { "history_file", YNODE_SCALAR, p_history_file, offsetof(struct pw_settings, history_file) },
        { "log_level", YNODE_SCALAR, p_log_level, offsetof(struct pw_settings, log_level) },
        { "reserve", YNODE_SCALAR, p_reserve, offsetof(struct pw_settings, reserve) },
        { "pressure", YNODE_MAP, NULL, 0, pressure_fields },
        {},
};

int settings_init(struct pw_settings *s) {
        assert(s);
        *s = (struct pw_settings){
                .policy_dir = strdup(SYSCONFDIR "/pagewarden/policies.d"),
                .socket = strdup(PW_DEFAULT_SOCKET),
                .cgroup_root = strdup(PW_DEFAULT_CGROUP_ROOT),
                .history_file = strdup(PW_DEFAULT_HISTORY_FILE),
                .backend = PW_BACKEND_AUTO,
                .log_level = PW_LOG_INFO,
                .history_jobs = 100,
                .history_days = 7,
                .reserve = UNITS_MAX,
                .pressure = {
                        .threshold = 10 * UNITS_PERCENT_ONE,
                        .window_usec = UINT64_C(500000),
                        .release = 1 * UNITS_PERCENT_ONE,
                        .cooldown_usec = UINT64_C(30000000),
                },
        };
        return s->policy_dir && s->socket && s->cgroup_root && s->history_file ? 0 : -ENOMEM;
}

void settings_done(struct pw_settings *s) {
        assert(s);
        free(s->path);
        free(s->policy_dir);
        free(s->socket);
        free(s->socket_group);
        free(s->cgroup_root);
        free(s->history_file);
        *s = (struct pw_settings){};
}

/* The default policy_dir: policies.d beside the settings file. */
static int set_default_policy_dir(struct pw_settings *s, const char *settings_path) {
        char *dir = sibling_path(settings_path, "policies.d");

        if (!dir)
                return -ENOMEM;
        free(s->policy_dir);
        s->policy_dir = dir;
        return 0;
}

/* The pressure levels, together. */
static void check_pressure(struct pstate *st, const struct ynode *root, const struct pw_settings *s) {
        if (s->pressure.window_usec < UINT64_C(500000) || s->pressure.window_usec > UINT64_C(10000000))
                pstate_error(st, ymap_where(root, "pressure.window", root),
                             "pressure window must be between 500ms and 10s (the kernel's limits for PSI triggers)");
        if (s->pressure.threshold == 0)
                pstate_error(st, ymap_where(root, "pressure.threshold", root), "pressure threshold must be above 0%%");
        if (s->pressure.cooldown_usec < UINT64_C(1000000) || s->pressure.cooldown_usec > UINT64_C(3600000000))
                pstate_error(st, ymap_where(root, "pressure.cooldown", root),
                             "pressure cooldown must be between 1s and 60m");
        if (s->pressure.release >= s->pressure.threshold)
                pstate_error(st, ymap_where(root, "pressure.release", root),
                             "pressure release level must be below the threshold");
}

int settings_parse_source(const struct policy_context *ctx, const struct source *src, struct pw_settings *s,
                          struct diag_list *diags) {
        _cleanup_(ynode_freep) struct ynode *root = NULL;
        _cleanup_(pstate_done) struct pstate st = {};
        int r;

        assert(s);
        pstate_init(&st, ctx, src, diags);
        r = set_default_policy_dir(s, src->path);
        if (r < 0)
                return r;
        r = ytree_parse(src, diags, &root);
        if (r == -ENOMEM)
                return r;
        if (root && root->type != YNODE_MAP)
                pstate_error(&st, root, "the settings file must be a mapping, not %s", ynode_type_name(root->type));
        else if (root)
                fields_parse(&st, root, "the settings file", settings_fields, s);
        if (!st.oom)
                check_pressure(&st, root, s);
        return pstate_result(&st);
}

int settings_load(const struct policy_context *ctx, const char *path, bool optional, struct pw_settings *s,
                  struct diag_list *diags) {
        struct source *src;
        int r;

        assert(ctx);
        assert(diags);
        r = settings_init(s);
        if (r < 0 || !path)
                return r;
        if (optional && access(path, F_OK) < 0 && errno == ENOENT)
                /* No settings file: every default, policies next to where it would be. */
                return set_default_policy_dir(s, path);
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        r = policy_read_source(ctx, path, &src, diags);
        if (r < 0)
                return r;
        r = settings_parse_source(ctx, src, s, diags);
        source_free(src);
        return r;
}

int config_load(const struct policy_context *ctx, const char *settings_path, bool optional, struct pw_settings *s,
                struct pw_policy *p, struct diag_list *diags) {
        int r, k;

        assert(p);
        r = settings_load(ctx, settings_path, optional, s, diags);
        if (r == -ENOMEM)
                return r;
        /* Read the policies even when the settings have errors, to report theirs too. */
        k = policy_load_path(ctx, s->policy_dir, p, diags);
        return k == -ENOMEM || r == 0 ? k : r;
}
