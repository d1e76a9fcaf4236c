/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "appcost.h"
#include "util.h"

static uint64_t now_mono(void) {
        return now_usec(CLOCK_MONOTONIC);
}

/* The counters of name in s; hint is where they usually are (two snapshots list the applications in the
 * policy's order, so a job's end finds each of 180 in one comparison rather than 90). */
static const struct app_counters *find_sample(const struct app_snapshot *s, const char *name, size_t hint) {
        if (s && hint < s->n && streq(app_snapshot_name(s, hint), name))
                return &s->c[hint];
        for (size_t i = 0; s && i < s->n; i++)
                if (streq(app_snapshot_name(s, i), name))
                        return &s->c[i];
        return NULL;
}

static struct app_roster *roster_ref(struct app_roster *r) {
        if (r)
                r->refs++;
        return r;
}

static struct app_roster *roster_unref(struct app_roster *r) {
        if (r && --r->refs == 0) {
                free(r->names);
                free(r);
        }
        return NULL;
}

/* The roster of the n samples: the last one when the names are the same (a reference), else a new one. */
static struct app_roster *roster_of(struct appcost *a, const struct app_sample *samples, size_t n) {
        struct app_roster *r = a->roster;
        bool same = r && r->n == n;

        for (size_t i = 0; same && i < n; i++)
                same = streq(r->names[i], samples[i].name);
        if (same)
                return roster_ref(r);
        r = calloc(1, sizeof(*r));
        if (!r || !(r->names = calloc(n, sizeof(*r->names)))) {
                free(r);
                return NULL;
        }
        r->refs = 1;
        r->n = n;
        for (size_t i = 0; i < n; i++)
                memcpy(r->names[i], samples[i].name, sizeof(r->names[i]));
        roster_unref(a->roster);
        a->roster = roster_ref(r);
        return r;
}

/* The idle totals of name; hint as for find_sample(). */
static struct app_idle *find_total(const struct appcost *a, const char *name, size_t hint) {
        if (hint < a->n_totals && streq(a->totals[hint].name, name))
                return &a->totals[hint];
        for (size_t k = 0; k < a->n_totals; k++)
                if (streq(a->totals[k].name, name))
                        return &a->totals[k];
        return NULL;
}

struct app_snapshot *app_snapshot_ref(struct app_snapshot *s) {
        if (s)
                s->refs++;
        return s;
}

struct app_snapshot *app_snapshot_unref(struct app_snapshot *s) {
        if (s && --s->refs == 0) {
                roster_unref(s->roster);
                free(s);
        }
        return NULL;
}

void appcost_init(struct appcost *a, appcost_sample_fn sample, void *userdata, uint64_t share_usec) {
        *a = (struct appcost){ .sample = sample, .userdata = userdata, .share_usec = share_usec };
        appcost_set_running(a, false);
}

void appcost_done(struct appcost *a) {
        app_snapshot_unref(a->idle_start);
        app_snapshot_unref(a->recent);
        roster_unref(a->roster);
        free(a->totals);
        *a = (struct appcost){};
}

void appcost_set_share(struct appcost *a, uint64_t share_usec) {
        a->share_usec = share_usec;
}

struct app_snapshot *appcost_snapshot(struct appcost *a) {
        _cleanup_free_ struct app_sample *samples = NULL;
        uint64_t now = now_mono();
        struct app_snapshot *s;
        size_t n;

        if (!a->sample)
                return NULL;
        if (a->recent && now - a->recent->usec < a->share_usec)
                return app_snapshot_ref(a->recent);
        samples = calloc(PW_MAX_PROTECTS, sizeof(*samples));
        if (!samples)
                return NULL;
        n = a->sample(a->userdata, samples, PW_MAX_PROTECTS);
        if (n == 0)
                return NULL;
        /* Kept while a job refers to it: counters for the applications there are, the names shared. */
        s = calloc(1, sizeof(*s) + n * sizeof(s->c[0]));
        if (!s)
                return NULL;
        *s = (struct app_snapshot){ .refs = 1, .usec = now, .n = n, .roster = roster_of(a, samples, n) };
        if (!s->roster) {
                free(s);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                s->c[i] = (struct app_counters){ .refaults = samples[i].refaults,
                                                 .majfaults = samples[i].majfaults,
                                                 .stall_usec = samples[i].stall_usec };
        app_snapshot_unref(a->recent);
        a->recent = app_snapshot_ref(s);
        return s;
}

/* Adds what each application did since the idle time began to its idle totals. */
static void account_idle(struct appcost *a) {
        struct app_snapshot *now = appcost_snapshot(a);
        uint64_t usec = counter_since(now_mono(), a->idle_since_usec);

        for (size_t i = 0; now && i < now->n; i++) {
                const struct app_counters *s = find_sample(a->idle_start, app_snapshot_name(now, i), i);
                struct app_idle *t = NULL;

                if (!s)
                        continue; /* it appeared meanwhile: from the next idle time */
                t = find_total(a, app_snapshot_name(now, i), i);
                if (!t) {
                        if (a->n_totals >= PW_MAX_PROTECTS)
                                continue;
                        if (!a->totals && !(a->totals = calloc(PW_MAX_PROTECTS, sizeof(*a->totals))))
                                break;
                        t = &a->totals[a->n_totals++];
                        snprintf(t->name, sizeof(t->name), "%s", app_snapshot_name(now, i));
                }
                t->refaults += counter_since(now->c[i].refaults, s->refaults);
                t->majfaults += counter_since(now->c[i].majfaults, s->majfaults);
                t->stall_usec += counter_since(now->c[i].stall_usec, s->stall_usec);
                t->usec += usec;
        }
        app_snapshot_unref(now);
}

void appcost_set_running(struct appcost *a, bool running) {
        if (running == !a->idle)
                return;
        if (running) {
                account_idle(a);
                a->idle_start = app_snapshot_unref(a->idle_start);
        } else {
                app_snapshot_unref(a->idle_start);
                a->idle_start = appcost_snapshot(a);
                a->idle_since_usec = now_mono();
        }
        a->idle = !running;
}

static json_object *per_min(uint64_t count, uint64_t usec) {
        return usec >= 1000000 ? json_object_new_double((double) count * 60e6 / (double) usec) : NULL;
}

struct app_cost {
        size_t i; /* in the snapshot at the end */
        uint64_t ref, maj, stall;
};

/* The more costly first: stall time, then refaults, then major faults; the policy's order on a tie. */
static int cost_cmp(const void *x, const void *y) {
        const struct app_cost *a = x, *b = y;

        if (a->stall != b->stall)
                return a->stall > b->stall ? -1 : 1;
        if (a->ref != b->ref)
                return a->ref > b->ref ? -1 : 1;
        if (a->maj != b->maj)
                return a->maj > b->maj ? -1 : 1;
        return a->i < b->i ? -1 : a->i > b->i;
}

static int index_cmp(const void *x, const void *y) {
        const struct app_cost *a = x, *b = y;

        return a->i < b->i ? -1 : a->i > b->i;
}

json_object *appcost_report(struct appcost *a, const struct app_snapshot *start, uint64_t runtime_usec,
                            size_t *ret_omitted) {
        _cleanup_free_ struct app_cost *cost = NULL;
        json_object *list = json_object_new_array();
        struct app_snapshot *now;
        size_t n_cost = 0;

        *ret_omitted = 0;
        if (!list)
                return NULL;
        now = appcost_snapshot(a);
        if (!now || !(cost = calloc(now->n, sizeof(*cost)))) {
                app_snapshot_unref(now);
                return list;
        }
        for (size_t i = 0; i < now->n; i++) {
                const struct app_counters *s = find_sample(start, app_snapshot_name(now, i), i);

                if (!s)
                        continue; /* not there when the job started */
                cost[n_cost++] = (struct app_cost){ .i = i,
                                                    .ref = counter_since(now->c[i].refaults, s->refaults),
                                                    .maj = counter_since(now->c[i].majfaults, s->majfaults),
                                                    .stall = counter_since(now->c[i].stall_usec, s->stall_usec) };
        }
        if (n_cost > APPCOST_REPORT_MAX) {
                qsort(cost, n_cost, sizeof(*cost), cost_cmp);
                *ret_omitted = n_cost - APPCOST_REPORT_MAX;
                n_cost = APPCOST_REPORT_MAX;
                qsort(cost, n_cost, sizeof(*cost), index_cmp);
        }
        for (size_t c = 0; c < n_cost; c++) {
                size_t i = cost[c].i;
                const struct app_idle *t = NULL;
                uint64_t ref = cost[c].ref, maj = cost[c].maj, stall = cost[c].stall;
                json_object *o;

                t = find_total(a, app_snapshot_name(now, i), i);
                o = json_object_new_object();
                if (!o)
                        break;
                json_object_object_add(o, "name", json_object_new_string(app_snapshot_name(now, i)));
                json_object_object_add(o, "refaults", json_object_new_uint64(ref));
                json_object_object_add(o, "majfaults", json_object_new_uint64(maj));
                json_object_object_add(o, "stall_us", json_object_new_uint64(stall));
                json_object_object_add(o, "refaults_per_min", per_min(ref, runtime_usec));
                json_object_object_add(o, "majfaults_per_min", per_min(maj, runtime_usec));
                json_object_object_add(o, "stall_us_per_min", per_min(stall, runtime_usec));
                json_object_object_add(o, "idle_refaults_per_min", t ? per_min(t->refaults, t->usec) : NULL);
                json_object_object_add(o, "idle_majfaults_per_min", t ? per_min(t->majfaults, t->usec) : NULL);
                json_object_object_add(o, "idle_stall_us_per_min", t ? per_min(t->stall_usec, t->usec) : NULL);
                json_object_array_add(list, o);
        }
        app_snapshot_unref(now);
        return list;
}
