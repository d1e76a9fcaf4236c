/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

#include "device.h"
#include "policy-match.h"
#include "policy-parse.h"
#include "policy-programs.h"
#include "policy.h"
#include "unit-front.h"
#include "yamltree.h"

int policy_context_default(struct policy_context *ctx) {
        struct sysinfo si;

        assert(ctx);
        if (sysinfo(&si) < 0)
                return -errno;
        *ctx = (struct policy_context){
                .ram_bytes = (uint64_t) si.totalram * si.mem_unit,
                .sysfs = "/sys",
                .mountinfo = "/proc/self/mountinfo",
                .fstab = "/etc/fstab",
                .check_owner = geteuid() == 0,
                .resolve_users = true,
        };
        return 0;
}

/* ---- values of policy entries ------------------------------------------ */

static void p_cpu_weight(struct pstate *st, const struct ynode *val, void *target) {
        const char *e;

        if (units_parse_uint(val->value, 1, 10000, target, &e) < 0)
                pstate_error(st, val, "'%s': %s (cpu weight is 1 to 10000, default 100)", val->value, e);
}

static void p_swap(struct pstate *st, const struct ynode *val, void *target) {
        if (streq(val->value, "deny"))
                *(bool *) target = true;
        else if (streq(val->value, "allow"))
                *(bool *) target = false;
        else
                pstate_error(st, val, "'%s': expected deny (memory.swap.max 0) or allow", val->value);
}

static void p_protect_size(struct pstate *st, const struct ynode *val, void *target) {
        struct pw_protect_size *ps = target;
        const char *e;

        if (streq(val->value, "auto")) {
                *ps = (struct pw_protect_size){ .mode = PW_PROTECT_AUTO };
                return;
        }
        if (units_parse_size(val->value, st->ctx->ram_bytes, &ps->bytes, &e) < 0) {
                pstate_error(st, val, "'%s': %s (a size, a percentage of RAM, or auto)", val->value, e);
                return;
        }
        if (ps->bytes == UNITS_MAX) {
                pstate_error(st, val, "'max' would protect more memory than the machine has: give a size or auto");
                return;
        }
        if (st->ctx->ram_bytes > 0 && ps->bytes > st->ctx->ram_bytes) {
                char ram[32];

                units_format_human(st->ctx->ram_bytes, ram, sizeof(ram));
                pstate_error(st, val, "'%s' is more than the machine's RAM (%s)", val->value, ram);
                return;
        }
        ps->mode = PW_PROTECT_BYTES;
}

static void add_user(struct pstate *st, struct pw_job_class *c, const struct ynode *u) {
        char *copy;

        for (size_t j = 0; j < c->n_users; j++)
                if (streq(c->users[j], u->value)) {
                        pstate_error(st, u, "user '%s' is listed twice", u->value);
                        return;
                }
        copy = strdup(u->value);
        if (!copy || GROW(c->users, c->allocated_users, c->n_users + 1) < 0) {
                free(copy);
                st->oom = true;
                return;
        }
        c->users[c->n_users++] = copy;
}

/* Target: the job class (these lists need their neighbours for duplicate checks). */
static void p_users(struct pstate *st, const struct ynode *val, void *target) {
        for (size_t i = 0; i < val->n_children && !st->oom; i++) {
                const struct ynode *u = val->children[i];
                const char *why;
                int r;

                if (policy_list_full(st, val, i, PW_MAX_USERS, "users in a job class"))
                        break;
                if (u->type != YNODE_SCALAR) {
                        pstate_error(st, u, "users must be a list of user names, not of %s", ynode_type_name(u->type));
                        continue;
                }
                why = policy_user_name_problem(u->value);
                if (why) {
                        pstate_error(st, u, "'%s': %s", u->value, why);
                        continue;
                }
                r = pstate_account_known(st, u->value, false);
                if (r == 0)
                        pstate_error(st, u, "unknown user '%s'", u->value);
                else if (r == -E2BIG)
                        pstate_error(st, u, "'%s': %s", u->value, pstate_lookups_problem());
                else if (r > 0)
                        add_user(st, target, u);
        }
}

/* ---- job classes -------------------------------------------------------- */

static void io_limit_done(struct pw_io_limit *io) {
        free(io->device);
        free(io->disk);
}

static const struct field io_fields[] = {
        { "device", YNODE_SCALAR, field_string, offsetof(struct pw_io_limit, device) },
        { "read_bps", YNODE_SCALAR, field_bandwidth, offsetof(struct pw_io_limit, read_bps) },
        { "write_bps", YNODE_SCALAR, field_bandwidth, offsetof(struct pw_io_limit, write_bps) },
        { "read_iops", YNODE_SCALAR, field_iops, offsetof(struct pw_io_limit, read_iops) },
        { "write_iops", YNODE_SCALAR, field_iops, offsetof(struct pw_io_limit, write_iops) },
        {},
};

static void resolve_io_device(struct pstate *st, const struct ynode *where, struct pw_io_limit *io) {
        struct device_info di;
        int r;

        if (io->device[0] != '/' && !strchr(io->device, ':')) {
                pstate_error(st, where,
                             "device '%s': give an absolute path (a device, a mount point or a path on the disk) or "
                             "MAJ:MIN",
                             io->device);
                return;
        }
        r = pstate_device_resolve(st, io->device, &di);
        if (r == -ENOMEM)
                st->oom = true;
        else if (r == -E2BIG)
                pstate_error(st, where, "device '%s': %s", io->device, pstate_lookups_problem());
        else if (r == -ENODEV && di.fstype[0])
                pstate_error(st, where, "'%s' is on a %s file system, which has no block device: io limits need a disk",
                             io->device, di.fstype);
        else if (r == -ENODEV)
                pstate_error(st, where, "'%s' is not a block device known to the kernel", io->device);
        else if (r == -EINVAL)
                pstate_error(st, where, "device '%s': expected an absolute path or MAJ:MIN", io->device);
        else if (r == -ENOENT) {
                /* A backup disk that is not plugged in must not take every protection down with it. */
                pstate_warning(st, where, "device '%s' does not exist: its limits apply once it does", io->device);
                io->absent = true;
        } else if (r == -ENOMEDIUM) {
                pstate_warning(st, where,
                               "'%s' is on %s, which /etc/fstab names but is not mounted: its limits apply once it "
                               "is",
                               io->device, di.mountpoint);
                io->absent = true;
        } else if (r < 0)
                pstate_error(st, where, "device '%s': %s", io->device, strerror(-r));
        else {
                io->major = di.major;
                io->minor = di.minor;
                io->disk = strdup(di.name);
                if (!io->disk)
                        st->oom = true;
        }
}

/* Adds io to c unless another entry names the same disk; takes io either way. */
static void add_io_limit(struct pstate *st, struct pw_job_class *c, const struct ynode *dev, struct pw_io_limit *io) {
        for (size_t j = 0; j < c->n_io; j++)
                if (io->absent || c->io[j].absent) {
                        if (streq(c->io[j].device, io->device)) {
                                pstate_error(st, dev, "'%s' is named twice", io->device);
                                io_limit_done(io);
                                return;
                        }
                } else if (c->io[j].major == io->major && c->io[j].minor == io->minor) {
                        pstate_error(st, dev, "'%s' is on disk %s (%u:%u), which '%s' already names", io->device,
                                     io->disk, io->major, io->minor, c->io[j].device);
                        io_limit_done(io);
                        return;
                }
        if (GROW(c->io, c->allocated_io, c->n_io + 1) < 0) {
                io_limit_done(io);
                st->oom = true;
                return;
        }
        c->io[c->n_io++] = *io;
}

static void p_io(struct pstate *st, const struct ynode *val, void *target) {
        for (size_t i = 0; i < val->n_children && !st->oom; i++) {
                const struct ynode *item = val->children[i], *dev;
                struct pw_io_limit io = {
                        .read_bps = UNITS_MAX,
                        .write_bps = UNITS_MAX,
                        .read_iops = UNITS_MAX,
                        .write_iops = UNITS_MAX,
                };
                size_t before = st->diags->n_errors;

                if (policy_list_full(st, val, i, PW_MAX_IO, "io entries in a job class"))
                        break;
                if (item->type != YNODE_MAP) {
                        pstate_error(st, item, "each io entry must be a mapping with device: and limits, not %s",
                                     ynode_type_name(item->type));
                        continue;
                }
                fields_parse(st, item, "io entry", io_fields, &io);
                dev = ymap_where(item, "device", item);
                if (st->oom) {
                        io_limit_done(&io);
                        return;
                }
                if (!io.device) {
                        if (st->diags->n_errors == before)
                                pstate_error(st, item, "io entry needs a device:");
                        io_limit_done(&io);
                        continue;
                }
                resolve_io_device(st, dev, &io);
                if (st->diags->n_errors == before && io.read_bps == UNITS_MAX && io.write_bps == UNITS_MAX &&
                    io.read_iops == UNITS_MAX && io.write_iops == UNITS_MAX)
                        pstate_error(st, item,
                                     "io entry for '%s' sets no limit: give read_bps, write_bps, read_iops or "
                                     "write_iops",
                                     io.device);
                if (st->diags->n_errors != before || st->oom)
                        io_limit_done(&io);
                else
                        add_io_limit(st, target, dev, &io);
        }
}

static const struct field class_memory_fields[] = {
        { "high", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, memory_high) },
        { "max", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, memory_max) },
        { "swap_max", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, memory_swap_max) },
        {},
};

static const struct field class_job_memory_fields[] = {
        { "high", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, per_job.memory_high) },
        { "max", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, per_job.memory_max) },
        { "swap_max", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, per_job.memory_swap_max) },
        {},
};

static const struct field class_per_job_fields[] = {
        { "memory", YNODE_MAP, NULL, 0, class_job_memory_fields },
        {},
};

static const struct field class_cpu_fields[] = {
        { "weight", YNODE_SCALAR, p_cpu_weight, offsetof(struct pw_job_class, cpu_weight) },
        {},
};

static const struct field class_pressure_fields[] = {
        { "memory_high_floor", YNODE_SCALAR, field_size, offsetof(struct pw_job_class, memory_high_floor) },
        { "io_floor", YNODE_SCALAR, field_bandwidth, offsetof(struct pw_job_class, io_floor) },
        { "freeze", YNODE_SCALAR, field_bool, offsetof(struct pw_job_class, freeze) },
        { "freeze_max", YNODE_SCALAR, field_duration, offsetof(struct pw_job_class, freeze_max_usec) },
        {},
};

static const struct field class_fields[] = {
        { "memory", YNODE_MAP, NULL, 0, class_memory_fields },
        { "per_job", YNODE_MAP, NULL, 0, class_per_job_fields },
        { "io", YNODE_SEQ, p_io, 0 },
        { "cpu", YNODE_MAP, NULL, 0, class_cpu_fields },
        { "under_pressure", YNODE_MAP, NULL, 0, class_pressure_fields },
        { "users", YNODE_SEQ, p_users, 0 },
        { "match", YNODE_MAP, NULL, 0, policy_match_fields },
        {},
};

static void class_done(struct pw_job_class *c) {
        free(c->name);
        free(c->source);
        for (size_t i = 0; i < c->n_io; i++)
                io_limit_done(&c->io[i]);
        free(c->io);
        for (size_t i = 0; i < c->n_users; i++)
                free(c->users[i]);
        free(c->users);
        policy_match_done(&c->match);
        free(c->extended);
}

/* Cross-field checks and defaults that depend on other fields. */
/* memory.high and memory.max at prefix (memory, per_job.memory): at least 1M, high not above max. */
static void check_memory(struct pstate *st, const struct ynode *entry, const char *prefix, uint64_t high,
                         uint64_t max) {
        char a[32], b[32], khigh[32], kmax[32];

        snprintf(khigh, sizeof(khigh), "%s.high", prefix);
        snprintf(kmax, sizeof(kmax), "%s.max", prefix);
        if (high < PW_MIN_MEMORY_LIMIT)
                pstate_error(st, ymap_where(entry, khigh, entry), "%s must be at least 1M", khigh);
        if (max < PW_MIN_MEMORY_LIMIT)
                pstate_error(st, ymap_where(entry, kmax, entry), "%s must be at least 1M", kmax);
        if (high != UNITS_MAX && max != UNITS_MAX && high > max) {
                units_format_human(high, a, sizeof(a));
                units_format_human(max, b, sizeof(b));
                pstate_error(st, ymap_where(entry, khigh, entry), "%s (%s) is above %s (%s): it would never throttle",
                             khigh, a, kmax, b);
        }
}

static void class_finish(struct pstate *st, const struct ynode *entry, struct pw_job_class *c,
                         const struct pw_policy *p) {
        char a[32], b[32];
        uint64_t min_bps = UNITS_MAX;

        check_memory(st, entry, "memory", c->memory_high, c->memory_max);
        policy_match_finish(st, entry, c, p);
        check_memory(st, entry, "per_job.memory", c->per_job.memory_high, c->per_job.memory_max);

        /* Given here, or by the file that defined the class (when extend: adds to it). */
        c->memory_high_floor_set |= ymap_where(entry, "under_pressure.memory_high_floor", NULL) != NULL;
        c->io_floor_set |= ymap_where(entry, "under_pressure.io_floor", NULL) != NULL;
        if (!c->memory_high_floor_set) {
                c->memory_high_floor = PW_DEFAULT_MEMORY_HIGH_FLOOR;
                if (c->memory_high < c->memory_high_floor)
                        c->memory_high_floor = c->memory_high;
        } else if (c->memory_high_floor == UNITS_MAX)
                pstate_error(st, ymap_where(entry, "under_pressure.memory_high_floor", entry),
                             "memory_high_floor cannot be max: it is how far memory.high may be lowered");
        else if (c->memory_high_floor < PW_MIN_MEMORY_LIMIT)
                pstate_error(st, ymap_where(entry, "under_pressure.memory_high_floor", entry),
                             "memory_high_floor must be at least 1M");
        else if (c->memory_high_floor > c->memory_high) {
                units_format_human(c->memory_high_floor, a, sizeof(a));
                units_format_human(c->memory_high, b, sizeof(b));
                pstate_error(st, ymap_where(entry, "under_pressure.memory_high_floor", entry),
                             "memory_high_floor (%s) is above memory.high (%s)", a, b);
        }

        for (size_t i = 0; i < c->n_io; i++) {
                if (c->io[i].read_bps < min_bps)
                        min_bps = c->io[i].read_bps;
                if (c->io[i].write_bps < min_bps)
                        min_bps = c->io[i].write_bps;
        }
        if (!c->io_floor_set)
                c->io_floor = PW_DEFAULT_IO_FLOOR < min_bps ? PW_DEFAULT_IO_FLOOR : min_bps;
        else if (c->io_floor == UNITS_MAX)
                pstate_error(st, ymap_where(entry, "under_pressure.io_floor", entry),
                             "io_floor cannot be max: it is how far io limits may be lowered");
        else if (c->io_floor > min_bps) {
                units_format_human(c->io_floor, a, sizeof(a));
                units_format_human(min_bps, b, sizeof(b));
                pstate_error(st, ymap_where(entry, "under_pressure.io_floor", entry),
                             "io_floor (%s/s) is above the class's lowest io limit (%s/s)", a, b);
        }

        if (c->freeze_max_usec < UINT64_C(100000) || c->freeze_max_usec > UINT64_C(3600000000))
                pstate_error(st, ymap_where(entry, "under_pressure.freeze_max", entry),
                             "freeze_max must be between 100ms and 60m");
}

/* The file name for "# name.yaml:LINE" comments and messages, control characters made harmless; NULL
 * when out of memory. */
static char *source_basename(const struct source *src) {
        const char *slash = strrchr(src->path, '/');
        char *name = strdup(slash ? slash + 1 : src->path);

        if (!name)
                return NULL;
        for (char *p = name; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        return name;
}

/* What a policy file is parsed into: the policy, and the index of its classes' match lists. */
struct policy_parse {
        struct pw_policy *p;
        struct match_index index;
};

/* Names c after key and adds it to the policy (and its match entries to the indexes); takes c either way. */
static void add_class(struct pstate *st, struct policy_parse *pp, const struct ynode *key, struct pw_job_class *c) {
        struct pw_policy *p = pp->p;

        c->name = strdup(key->value);
        c->source = source_basename(st->src);
        c->line = key->line;
        if (!c->name || !c->source || GROW(p->classes, p->allocated_classes, p->n_classes + 1) < 0) {
                class_done(c);
                st->oom = true;
                return;
        }
        p->classes[p->n_classes++] = *c;
        if (match_index_add(&pp->index, p, p->n_classes - 1, 0, 0) < 0)
                st->oom = true;
}

static void parse_class(struct pstate *st, const struct ynode *key, const struct ynode *val, struct policy_parse *pp) {
        _cleanup_free_ char *where = NULL;
        const struct pw_job_class *other;
        struct pw_job_class c = {
                .memory_high = UNITS_MAX,
                .memory_max = UNITS_MAX,
                .memory_swap_max = UNITS_MAX,
                .per_job = { UNITS_MAX, UNITS_MAX, UNITS_MAX },
                .cpu_weight = PW_DEFAULT_CPU_WEIGHT,
                .freeze_max_usec = PW_DEFAULT_FREEZE_MAX_USEC,
        };
        const char *why = policy_name_problem(key->value);
        size_t before = st->diags->n_errors;

        if (why)
                pstate_error(st, key, "job class '%s': %s", key->value, why);
        other = policy_find_class(pp->p, key->value);
        if (other)
                pstate_error(st, key, "job class '%s' is already defined at %s:%u", key->value, other->source,
                             other->line);
        if (!ynode_is_null(val) && val->type != YNODE_MAP) {
                pstate_error(st, val, "job class '%s' must be a mapping, not %s", key->value,
                             ynode_type_name(val->type));
                return;
        }
        if (asprintf(&where, "job class '%s'", key->value) < 0) {
                where = NULL;
                st->oom = true;
                return;
        }
        if (val->type == YNODE_MAP)
                fields_parse(st, val, where, class_fields, &c);
        if (!st->oom)
                class_finish(st, val->type == YNODE_MAP ? val : key, &c, pp->p);
        if (!st->oom && val->type == YNODE_MAP)
                match_index_check(st, val, &c, pp->p, &pp->index);

        if (st->diags->n_errors != before || st->oom)
                class_done(&c);
        else
                add_class(st, pp, key, &c);
}

/* Whether the policy, with n entries before this file's, has read its fill of max entries: then an error at key says
 * so, and the rest of the section is not read. */
static bool section_full(struct pstate *st, const struct ynode *key, size_t before, size_t i, size_t max,
                         const char *what, const char *section) {
        if (before + i / 2 < max)
                return false;
        pstate_error(st, key, "more than %zu %s in the policy (the rest of %s: is not read)", max, what, section);
        return true;
}

/* Target: the struct policy_parse. */
static void p_jobs(struct pstate *st, const struct ynode *val, void *target) {
        struct policy_parse *pp = target;
        size_t before = pp->p->n_classes;
        const struct ynode *k, *v;

        YMAP_FOREACH(k, v, val, i) {
                if (st->oom || section_full(st, k, before, i, PW_MAX_CLASSES, "job classes", "jobs"))
                        break;
                parse_class(st, k, v, pp);
        }
}

/* ---- extend: a later file adds to a class an earlier one defined ------------ */

/* The keys whose value, when extend: gives them, replaces the class's; lists of match: and users: are added
 * to instead, and io: replaces the class's whole list. */
static const struct {
        const char *key;
        size_t offset, size;
} extend_values[] = {
        { "memory.high", offsetof(struct pw_job_class, memory_high), sizeof(uint64_t) },
        { "memory.max", offsetof(struct pw_job_class, memory_max), sizeof(uint64_t) },
        { "memory.swap_max", offsetof(struct pw_job_class, memory_swap_max), sizeof(uint64_t) },
        { "per_job.memory.high", offsetof(struct pw_job_class, per_job.memory_high), sizeof(uint64_t) },
        { "per_job.memory.max", offsetof(struct pw_job_class, per_job.memory_max), sizeof(uint64_t) },
        { "per_job.memory.swap_max", offsetof(struct pw_job_class, per_job.memory_swap_max), sizeof(uint64_t) },
        { "cpu.weight", offsetof(struct pw_job_class, cpu_weight), sizeof(uint64_t) },
        { "under_pressure.memory_high_floor", offsetof(struct pw_job_class, memory_high_floor), sizeof(uint64_t) },
        { "under_pressure.io_floor", offsetof(struct pw_job_class, io_floor), sizeof(uint64_t) },
        { "under_pressure.freeze", offsetof(struct pw_job_class, freeze), sizeof(bool) },
        { "under_pressure.freeze_max", offsetof(struct pw_job_class, freeze_max_usec), sizeof(uint64_t) },
};

/* An entry of add's lists that c has already (exe and units are checked against every class elsewhere). */
static void check_repeats(struct pstate *st, const struct ynode *val, const struct pw_job_class *c,
                          const struct pw_job_class *add) {
        static const struct {
                const char *key;
                size_t offset;
        } lists[] = {
                { "match.cmdline", offsetof(struct pw_job_class, match.cmdline) },
                { "match.user", offsetof(struct pw_job_class, match.user) },
                { "match.under", offsetof(struct pw_job_class, match.under) },
        };

        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                const struct pw_patterns *a = (const void *) ((const char *) add + lists[k].offset);
                const struct pw_patterns *b = (const void *) ((const char *) c + lists[k].offset);

                for (size_t i = 0; i < a->n; i++)
                        for (size_t j = 0; j < b->n; j++)
                                if (streq(a->v[i].text, b->v[j].text))
                                        pstate_error(st, policy_pattern_node(val, lists[k].key, a->v[i].text),
                                                     "'%s' is in class '%s' already (%s:%u)", a->v[i].text, c->name,
                                                     b->v[j].source ?: c->source, b->v[j].line);
        }
        for (size_t i = 0; i < add->n_users; i++)
                for (size_t j = 0; j < c->n_users; j++)
                        if (streq(add->users[i], c->users[j]))
                                pstate_error(st, ymap_where(val, "users", val), "user '%s' is in class '%s' already",
                                             add->users[i], c->name);
}

/* Adds what val says to class c (in place): the policy is invalid anyway if that makes an error. */
static void extend_merge(struct pstate *st, const struct ynode *val, struct pw_job_class *c, struct pw_job_class *add,
                         const char *source) {
        for (size_t i = 0; i < ELEMENTSOF(extend_values); i++)
                if (ymap_where(val, extend_values[i].key, NULL))
                        memcpy((char *) c + extend_values[i].offset, (char *) add + extend_values[i].offset,
                               extend_values[i].size);
        if (ymap_where(val, "io", NULL)) {
                for (size_t i = 0; i < c->n_io; i++)
                        io_limit_done(&c->io[i]);
                free(c->io);
                c->io = TAKE_PTR(add->io);
                c->n_io = add->n_io;
                c->allocated_io = add->allocated_io;
                add->n_io = add->allocated_io = 0;
        }
        if (add->n_users > 0) {
                if (GROW(c->users, c->allocated_users, c->n_users + add->n_users) < 0) {
                        st->oom = true;
                        return;
                }
                for (size_t i = 0; i < add->n_users; i++)
                        c->users[c->n_users++] = TAKE_PTR(add->users[i]);
                add->n_users = 0;
        }
        policy_match_move(st, &c->match, &add->match, source);
}

static void extend_class(struct pstate *st, const struct ynode *key, const struct ynode *val, struct policy_parse *pp) {
        _cleanup_free_ char *where = NULL, *source = NULL;
        struct pw_job_class add = { .memory_high = UNITS_MAX };
        const struct pw_job_class *found = policy_find_class(pp->p, key->value);
        size_t before = st->diags->n_errors, k, exe0, units0;
        struct pw_job_class *c;

        if (!found) {
                pstate_error(st, key,
                             "extend: no job class '%s' before this point (a class is extended by a file read after "
                             "the one that defines it: policy files are read in name order)",
                             key->value);
                return;
        }
        if (val->type != YNODE_MAP) {
                pstate_error(st, ynode_is_null(val) ? key : val, "extend: '%s' must be a mapping, not %s", key->value,
                             ynode_type_name(val->type));
                return;
        }
        k = (size_t) (found - pp->p->classes);
        c = &pp->p->classes[k];
        source = source_basename(st->src);
        if (!source || asprintf(&where, "extend: '%s'", key->value) < 0) {
                where = NULL;
                st->oom = true;
                return;
        }
        fields_parse(st, val, where, class_fields, &add);
        if (!st->oom) {
                match_index_check(st, val, &add, pp->p, &pp->index); /* exe and units: no class names one twice */
                check_repeats(st, val, c, &add);
        }
        if (st->diags->n_errors != before || st->oom) {
                class_done(&add);
                return;
        }
        exe0 = c->match.exe.n;
        units0 = c->match.units.n;
        extend_merge(st, val, c, &add, source);
        class_done(&add);
        free(c->extended);
        if (asprintf(&c->extended, "%s:%u", source, key->line) < 0) {
                c->extended = NULL;
                st->oom = true;
        }
        if (!st->oom)
                class_finish(st, val, c, pp->p);
        if (match_index_add(&pp->index, pp->p, k, exe0, units0) < 0)
                st->oom = true;
}

/* Target: the struct policy_parse. */
static void p_extend(struct pstate *st, const struct ynode *val, void *target) {
        const struct ynode *k, *v;

        YMAP_FOREACH(k, v, val, i) {
                if (st->oom)
                        break;
                extend_class(st, k, v, target);
        }
}

/* ---- protected applications -------------------------------------------- */

static const struct field protect_memory_fields[] = {
        { "min", YNODE_SCALAR, p_protect_size, offsetof(struct pw_protect, min) },
        { "low", YNODE_SCALAR, p_protect_size, offsetof(struct pw_protect, low) },
        { "swap", YNODE_SCALAR, p_swap, offsetof(struct pw_protect, swap_deny) },
        {},
};

static const struct field protect_fields[] = {
        { "unit", YNODE_SCALAR, field_string, offsetof(struct pw_protect, unit) },
        { "cgroup", YNODE_SCALAR, field_string, offsetof(struct pw_protect, cgroup) },
        { "memory", YNODE_MAP, NULL, 0, protect_memory_fields },
        {},
};

static void protect_entry_done(struct pw_protect *pr) {
        free(pr->name);
        free(pr->source);
        free(pr->unit);
        free(pr->cgroup);
}

/* A unit is also looked at on this host, when the context asks: a warning for a oneshot front (unit-front.h). */
static void check_unit(struct pstate *st, const struct ynode *at, const char *unit) {
        char why[DIAG_MAX_MESSAGE];

        if (unit_front(unit, why, sizeof(why)) > 0)
                diag_warn(st->diags, st->src, at->line, at->column, "%s", why);
}

static void protect_finish(struct pstate *st, const struct ynode *key, const struct ynode *entry, struct pw_protect *pr,
                           const struct pw_policy *p) {
        const char *why;

        if (!pr->unit && !pr->cgroup) {
                pstate_error(st, key, "protect entry '%s' needs unit: (a systemd unit) or cgroup: (a cgroup path)",
                             key->value);
                return;
        }
        if (pr->unit && pr->cgroup) {
                const struct ynode *u = ymap_where(entry, "unit", entry), *c = ymap_where(entry, "cgroup", entry);
                const struct ynode *later = c->line > u->line || (c->line == u->line && c->column > u->column) ? c : u;

                pstate_error(st, later, "protect entry '%s' gives both unit: and cgroup:; give exactly one",
                             key->value);
                return;
        }
        if (pr->unit) {
                why = policy_unit_name_problem(pr->unit);
                if (why)
                        pstate_error(st, ymap_where(entry, "unit", entry), "unit '%s': %s", pr->unit, why);
                else if (st->ctx->check_programs)
                        check_unit(st, ymap_where(entry, "unit", entry), pr->unit);
        } else {
                why = policy_cgroup_path_problem(pr->cgroup);
                if (why)
                        pstate_error(st, ymap_where(entry, "cgroup", entry), "cgroup '%s': %s", pr->cgroup, why);
        }
        if (pr->min.mode == PW_PROTECT_BYTES && pr->low.mode == PW_PROTECT_BYTES && pr->low.bytes < pr->min.bytes)
                pstate_error(st, ymap_where(entry, "memory.low", entry),
                             "memory.low is below memory.min: it would have no effect");
        for (size_t i = 0; i < p->n_protects; i++) {
                const struct pw_protect *o = &p->protects[i];

                if ((pr->unit && streq_ptr(o->unit, pr->unit)) || (pr->cgroup && streq_ptr(o->cgroup, pr->cgroup)))
                        pstate_error(st, key, "'%s' is already protected by entry '%s' (%s:%u)", pr->unit ?: pr->cgroup,
                                     o->name, o->source, o->line);
        }
}

/* Names pr after key and adds it to p; takes pr either way. */
static void add_protect(struct pstate *st, struct pw_policy *p, const struct ynode *key, struct pw_protect *pr) {
        pr->name = strdup(key->value);
        pr->source = source_basename(st->src);
        pr->line = key->line;
        if (!pr->name || !pr->source || GROW(p->protects, p->allocated_protects, p->n_protects + 1) < 0) {
                protect_entry_done(pr);
                st->oom = true;
                return;
        }
        p->protects[p->n_protects++] = *pr;
}

static void parse_protect(struct pstate *st, const struct ynode *key, const struct ynode *val, struct pw_policy *p) {
        _cleanup_free_ char *where = NULL;
        const struct pw_protect *other;
        struct pw_protect pr = {};
        const char *why = policy_name_problem(key->value);
        size_t before = st->diags->n_errors;

        if (why)
                pstate_error(st, key, "protect entry '%s': %s", key->value, why);
        other = policy_find_protect(p, key->value);
        if (other)
                pstate_error(st, key, "protect entry '%s' is already defined at %s:%u", key->value, other->source,
                             other->line);
        if (val->type != YNODE_MAP) {
                pstate_error(st, ynode_is_null(val) ? key : val,
                             "protect entry '%s' must be a mapping with unit: or cgroup:", key->value);
                return;
        }
        if (asprintf(&where, "protect entry '%s'", key->value) < 0) {
                where = NULL;
                st->oom = true;
                return;
        }
        fields_parse(st, val, where, protect_fields, &pr);
        if (!st->oom)
                protect_finish(st, key, val, &pr, p);

        if (st->diags->n_errors != before || st->oom)
                protect_entry_done(&pr);
        else
                add_protect(st, p, key, &pr);
}

/* Target: the struct policy_parse. */
static void p_protect(struct pstate *st, const struct ynode *val, void *target) {
        struct pw_policy *p = ((struct policy_parse *) target)->p;
        size_t before = p->n_protects;
        const struct ynode *k, *v;

        YMAP_FOREACH(k, v, val, i) {
                if (st->oom || section_full(st, k, before, i, PW_MAX_PROTECTS, "protected applications", "protect"))
                        break;
                parse_protect(st, k, v, p);
        }
}

static const struct field policy_fields[] = {
        { "jobs", YNODE_MAP, p_jobs, 0 },
        { "extend", YNODE_MAP, p_extend, 0 },
        { "protect", YNODE_MAP, p_protect, 0 },
        {},
};

int policy_parse_source(const struct policy_context *ctx, const struct source *src, struct pw_policy *p,
                        struct diag_list *diags) {
        _cleanup_(ynode_freep) struct ynode *root = NULL;
        _cleanup_(pstate_done) struct pstate st = {};
        struct policy_parse pp = { .p = p };
        int r;

        assert(p);
        pstate_init(&st, ctx, src, diags);
        r = ytree_parse(src, diags, &root);
        if (r == -ENOMEM)
                return r;
        if (root && root->type != YNODE_MAP)
                pstate_error(&st, root, "a policy file must be a mapping with jobs: and protect:, not %s",
                             ynode_type_name(root->type));
        else if (root) {
                if (match_index_init(&pp.index, p) < 0)
                        st.oom = true;
                else
                        fields_parse(&st, root, "a policy file", policy_fields, &pp);
                match_index_done(&pp.index);
        }
        return pstate_result(&st);
}

void policy_done(struct pw_policy *p) {
        assert(p);
        for (size_t i = 0; i < p->n_classes; i++)
                class_done(&p->classes[i]);
        free(p->classes);
        for (size_t i = 0; i < p->n_protects; i++)
                protect_entry_done(&p->protects[i]);
        free(p->protects);
        *p = (struct pw_policy){};
}

const struct pw_job_class *policy_find_class(const struct pw_policy *p, const char *name) {
        assert(p);
        assert(name);
        for (size_t i = 0; i < p->n_classes; i++)
                if (streq(p->classes[i].name, name))
                        return &p->classes[i];
        return NULL;
}

const struct pw_protect *policy_find_protect(const struct pw_policy *p, const char *name) {
        assert(p);
        assert(name);
        for (size_t i = 0; i < p->n_protects; i++)
                if (streq(p->protects[i].name, name))
                        return &p->protects[i];
        return NULL;
}

/* ---- comparison ------------------------------------------------------------ */

static bool class_equal(const struct pw_job_class *a, const struct pw_job_class *b) {
        if (!streq(a->name, b->name) || a->memory_high != b->memory_high || a->memory_max != b->memory_max ||
            a->memory_swap_max != b->memory_swap_max || a->cpu_weight != b->cpu_weight || a->n_io != b->n_io ||
            a->memory_high_floor != b->memory_high_floor || a->io_floor != b->io_floor || a->freeze != b->freeze ||
            a->freeze_max_usec != b->freeze_max_usec || a->n_users != b->n_users ||
            memcmp(&a->per_job, &b->per_job, sizeof(a->per_job)) != 0 || !policy_match_equal(&a->match, &b->match))
                return false;
        for (size_t i = 0; i < a->n_io; i++) {
                const struct pw_io_limit *x = &a->io[i], *y = &b->io[i];

                if (x->absent != y->absent || (x->absent && !streq(x->device, y->device)))
                        return false;
                if (x->major != y->major || x->minor != y->minor || x->read_bps != y->read_bps ||
                    x->write_bps != y->write_bps || x->read_iops != y->read_iops || x->write_iops != y->write_iops)
                        return false;
        }
        for (size_t i = 0; i < a->n_users; i++)
                if (!streq(a->users[i], b->users[i]))
                        return false;
        return true;
}

static bool protect_size_equal(const struct pw_protect_size *a, const struct pw_protect_size *b) {
        return a->mode == b->mode && (a->mode != PW_PROTECT_BYTES || a->bytes == b->bytes);
}

bool policy_equal(const struct pw_policy *a, const struct pw_policy *b) {
        assert(a);
        assert(b);
        if (a->n_classes != b->n_classes || a->n_protects != b->n_protects)
                return false;
        for (size_t i = 0; i < a->n_classes; i++)
                if (!class_equal(&a->classes[i], &b->classes[i]))
                        return false;
        for (size_t i = 0; i < a->n_protects; i++) {
                const struct pw_protect *x = &a->protects[i], *y = &b->protects[i];

                if (!streq(x->name, y->name) || !streq_ptr(x->unit, y->unit) || !streq_ptr(x->cgroup, y->cgroup) ||
                    !protect_size_equal(&x->min, &y->min) || !protect_size_equal(&x->low, &y->low) ||
                    x->swap_deny != y->swap_deny)
                        return false;
        }
        return true;
}
