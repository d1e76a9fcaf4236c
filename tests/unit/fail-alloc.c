/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dlfcn.h>
#include <stdlib.h>

#include "common.h"
#include "fail-alloc.h"

/* Under AddressSanitizer, its strdup and the like allocate without calling malloc: they are not counted. */
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define COUNT_LIVE 0
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define COUNT_LIVE 0
#endif
#endif
#ifndef COUNT_LIVE
#define COUNT_LIVE 1
#endif

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static unsigned fail_at; /* 0: off, else the allocation that fails */
static unsigned counted; /* allocations since armed */
static bool armed;
static long live; /* allocated and not freed since armed */

/* dlsym() may call calloc() before calloc is known: that one comes from here, and is never freed. */
static char bootstrap[256];

static void resolve(void) {
        static bool resolving;

        if (real_free || resolving)
                return;
        resolving = true;
        real_malloc = dlsym(RTLD_NEXT, "malloc");
        real_calloc = dlsym(RTLD_NEXT, "calloc");
        real_realloc = dlsym(RTLD_NEXT, "realloc");
        real_free = dlsym(RTLD_NEXT, "free");
        resolving = false;
}

static bool fail_now(void) {
        if (!armed || ++counted != fail_at)
                return false;
        errno = ENOMEM; /* as malloc does: opendir() and others rely on it */
        return true;
}

static void *counted_result(void *p) {
        if (p && armed)
                live++;
        return p;
}

void *malloc(size_t size) {
        resolve();
        return fail_now() ? NULL : counted_result(real_malloc(size));
}

void *calloc(size_t n, size_t size) {
        resolve();
        if (!real_calloc)
                return n * size <= sizeof(bootstrap) ? bootstrap : NULL;
        return fail_now() ? NULL : counted_result(real_calloc(n, size));
}

void *realloc(void *p, size_t size) {
        resolve();
        if (fail_now())
                return NULL;
        return p ? real_realloc(p, size) : counted_result(real_realloc(p, size));
}

void free(void *p) {
        if (!p || p == (void *) bootstrap)
                return;
        if (armed)
                live--;
        resolve();
        real_free(p);
}

unsigned fail_alloc_each(int (*fn)(void *data), void *data, int expected) {
        unsigned enomem = 0;
        int first = fn(data);

        ck_assert_msg(first == expected, "without failures: got %d, want %d", first, expected);
        for (unsigned n = 1;; n++) {
                long left;
                bool injected;
                int r;

                counted = 0;
                live = 0;
                fail_at = n;
                armed = true;
                r = fn(data);
                armed = false;
                injected = counted >= n;
                left = live;
                if (COUNT_LIVE)
                        ck_assert_msg(left == 0, "allocation %u failed: %ld allocations not freed", n, left);
                if (!injected)
                        return enomem;
                ck_assert_msg(r == -ENOMEM || r == expected, "allocation %u failed: got %d, want -ENOMEM", n, r);
                enomem += r == -ENOMEM;
        }
}

uint64_t digest_u64(uint64_t h, uint64_t v) {
        for (unsigned i = 0; i < 8; i++, v >>= 8)
                h = (h ^ (v & 0xff)) * UINT64_C(1099511628211);
        return h;
}

uint64_t digest_str(uint64_t h, const char *s) {
        if (!s)
                return digest_u64(h, UINT64_MAX);
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * UINT64_C(1099511628211);
        return digest_u64(h, 0);
}

static uint64_t digest_class(uint64_t h, const struct pw_job_class *c) {
        const uint64_t v[] = { c->line,
                               c->memory_high,
                               c->memory_max,
                               c->memory_swap_max,
                               c->cpu_weight,
                               c->memory_high_floor,
                               c->io_floor,
                               c->freeze,
                               c->freeze_max_usec,
                               c->n_io,
                               c->n_users };

        h = digest_str(digest_str(h, c->name), c->source);
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                h = digest_u64(h, v[i]);
        for (size_t i = 0; i < c->n_io; i++) {
                const struct pw_io_limit *io = &c->io[i];

                h = digest_str(digest_str(h, io->device), io->disk);
                h = digest_u64(digest_u64(h, io->major), io->minor);
                h = digest_u64(digest_u64(h, io->read_bps), io->write_bps);
                h = digest_u64(digest_u64(h, io->read_iops), io->write_iops);
        }
        for (size_t i = 0; i < c->n_users; i++)
                h = digest_str(h, c->users[i]);
        return h;
}

uint64_t digest_policy(uint64_t h, const struct pw_policy *p) {
        h = digest_u64(digest_u64(h, p->n_classes), p->n_protects);
        for (size_t i = 0; i < p->n_classes; i++)
                h = digest_class(h, &p->classes[i]);
        for (size_t i = 0; i < p->n_protects; i++) {
                const struct pw_protect *pr = &p->protects[i];

                h = digest_str(digest_str(h, pr->name), pr->source);
                h = digest_str(digest_str(digest_u64(h, pr->line), pr->unit), pr->cgroup);
                h = digest_u64(digest_u64(h, pr->min.mode), pr->min.bytes);
                h = digest_u64(digest_u64(h, pr->low.mode), pr->low.bytes);
                h = digest_u64(h, pr->swap_deny);
        }
        return h;
}

uint64_t digest_settings(uint64_t h, const struct pw_settings *s) {
        h = digest_str(digest_str(digest_str(h, s->path), s->policy_dir), s->socket);
        h = digest_str(digest_str(h, s->socket_group), s->cgroup_root);
        h = digest_u64(digest_u64(digest_u64(h, s->backend), s->restore_on_stop), s->log_level);
        h = digest_u64(digest_u64(h, s->pressure.threshold), s->pressure.window_usec);
        return digest_u64(digest_u64(h, s->pressure.release), s->pressure.cooldown_usec);
}

uint64_t digest_diags(uint64_t h, const struct diag_list *l) {
        h = digest_u64(digest_u64(h, l->n), l->oom);
        for (size_t i = 0; i < l->n; i++) {
                const struct diag *d = &l->items[i];

                h = digest_u64(digest_u64(digest_str(h, d->path), d->line), d->column);
                h = digest_str(digest_str(h, d->message), d->text);
        }
        return h;
}

int fail_alloc_same(struct fail_alloc_ref *ref, int r, uint64_t d) {
        if (r == -ENOMEM)
                return r;
        if (!ref->set) {
                *ref = (struct fail_alloc_ref){ .set = true, .r = r, .digest = d };
                return r;
        }
        return r == ref->r && d == ref->digest ? r : -EBADMSG;
}
