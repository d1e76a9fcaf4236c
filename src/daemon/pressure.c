/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <inttypes.h>
#include <poll.h>

#include "cgroup-values.h"
#include "pressure.h"
#include "util.h"
#include "worker.h"

static void trigger_spec(const char *kind, uint64_t stall_usec, uint64_t window_usec, char *buf, size_t len) {
        snprintf(buf, len, "%s %" PRIu64 " %" PRIu64, kind, stall_usec ?: 1, window_usec);
}

int pressure_trigger_watch(sd_event *event, int fd, sd_event_io_handler_t handler, void *userdata,
                           sd_event_source **ret_source) {
        int r = sd_event_add_io(event, ret_source, fd, EPOLLPRI, handler, userdata);

        if (r >= 0)
                (void) sd_event_source_set_description(*ret_source, "psi-trigger");
        return r;
}

int pressure_trigger_open(sd_event *event, struct cgroup_engine *e, const char *path, const char *resource,
                          const char *kind, uint64_t stall_usec, uint64_t window_usec, sd_event_io_handler_t handler,
                          void *userdata, int *ret_fd, sd_event_source **ret_source) {
        _cleanup_close_ int fd = -1;
        char spec[64];
        int r;

        assert(event && e && resource && kind && ret_fd && ret_source);
        trigger_spec(kind, stall_usec, window_usec, spec, sizeof(spec));
        r = cgroup_psi_trigger(e, path, resource, spec, &fd);
        if (r < 0)
                return r;
        r = pressure_trigger_watch(event, fd, handler, userdata, ret_source);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int pressure_trigger_arm(struct worker *w, const char *path, const char *resource, const char *kind,
                         uint64_t stall_usec, uint64_t window_usec, uint64_t token, worker_done_fn done,
                         void *userdata) {
        char spec[64];

        assert(w && path && resource && kind && done);
        trigger_spec(kind, stall_usec, window_usec, spec, sizeof(spec));
        return worker_arm(w, path, resource, spec, token, done, userdata);
}

void pressure_trigger_close(int *fd, sd_event_source **source) {
        *source = sd_event_source_disable_unref(*source);
        closep(fd);
        *fd = -1;
}

void pressure_trigger_release(struct worker *w, int *fd, sd_event_source **source) {
        *source = sd_event_source_disable_unref(*source);
        if (*fd >= 0 && w)
                (void) worker_close(w, *fd, NULL, NULL); /* nobody waits for it */
        else
                closep(fd);
        *fd = -1;
}

bool pressure_trigger_enable(int fd, sd_event_source *source, bool enabled) {
        struct pollfd p = { .fd = fd, .events = POLLPRI };

        if (fd < 0 || !source)
                return false;
        /* A trigger keeps its event until it is polled (psi_trigger_poll): one that fired while its source
         * was off would wake the loop at once with stale news.  One whose cgroup went polls POLLERR. */
        if (enabled && poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLNVAL)))
                return false;
        (void) sd_event_source_set_enabled(source, enabled ? SD_EVENT_ON : SD_EVENT_OFF);
        return true;
}

static uint64_t keyed(const char *text, const char *key) {
        uint64_t v = 0;

        return text && cgv_parse_keyed(text, key, &v) >= 0 ? v : 0;
}

static uint64_t number(const char *text) {
        uint64_t v = 0;

        return text && cgv_parse_limit(text, &v) >= 0 ? v : 0;
}

void pressure_sample_parse(const char *stat, const char *events, const char *psi, const char *swap_current,
                           const char *current, struct governor_sample *ret) {
        struct cgv_psi p;
        bool have_psi = psi && cgv_parse_psi(psi, &p) >= 0;

        *ret = (struct governor_sample){
                .pgsteal = keyed(stat, "pgsteal"),
                .refaults = keyed(stat, "workingset_refault_anon") + keyed(stat, "workingset_refault_file"),
                .majfaults = keyed(stat, "pgmajfault"),
                .swap = number(swap_current),
                .low_events = keyed(events, "low"),
                .high_events = keyed(events, "high"),
                .max_events = keyed(events, "max"),
                .current = number(current),
                .some_avg10 = have_psi ? p.some_avg10 : 0,
                .some_total = have_psi ? p.some_total : 0,
                .anon = keyed(stat, "active_anon") + keyed(stat, "inactive_anon"),
                .active_file = keyed(stat, "active_file"),
                .unevictable = keyed(stat, "unevictable"),
        };
}

int pressure_sample_read(struct cgroup_engine *e, const char *path, struct governor_sample *ret) {
        _cleanup_free_ char *stat = NULL, *events = NULL, *psi = NULL, *swap = NULL, *current = NULL;
        int r;

        r = cgroup_read_file(e, path, "memory.stat", &stat);
        if (r < 0)
                return r;
        /* Optional: swap accounting may be off; the others exist with memory.stat. */
        (void) cgroup_read_file(e, path, "memory.events", &events);
        (void) cgroup_read_file(e, path, "memory.pressure", &psi);
        (void) cgroup_read_file(e, path, "memory.swap.current", &swap);
        (void) cgroup_read_file(e, path, "memory.current", &current);
        pressure_sample_parse(stat, events, psi, swap, current, ret);
        return 0;
}

int pressure_cost_read(struct cgroup_engine *e, const char *path, struct governor_sample *ret) {
        _cleanup_free_ char *stat = NULL, *psi = NULL;
        int r;

        r = cgroup_read_file(e, path, "memory.stat", &stat);
        if (r < 0)
                return r;
        (void) cgroup_read_file(e, path, "memory.pressure", &psi);
        pressure_sample_parse(stat, NULL, psi, NULL, NULL, ret);
        return 0;
}

void pressure_io_use_parse(const char *io_stat, struct governor_io_use *ret) {
        *ret = (struct governor_io_use){};
        for (const char *p = io_stat; p && *p && ret->n < GOVERNOR_IO_DEVICES;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);
                char line[256]; /* "MAJ:MIN rbytes=N wbytes=N ..." (what follows wbytes may be cut) */
                uint64_t rd, wr;
                unsigned major, minor;

                snprintf(line, sizeof(line), "%.*s", (int) (n < sizeof(line) ? n : sizeof(line) - 1), p);
                p = nl ? nl + 1 : NULL;
                if (sscanf(line, "%u:%u ", &major, &minor) != 2 || cgv_parse_io_stat(line, &rd, &wr) < 0)
                        continue;
                ret->dev[ret->n++] = (struct governor_io_dev){ .major = major, .minor = minor, .bytes = rd + wr };
        }
}

int pressure_io_use_read(struct cgroup_engine *e, const char *path, struct governor_io_use *ret) {
        _cleanup_free_ char *text = NULL;
        int r = cgroup_read_file(e, path, "io.stat", &text);

        pressure_io_use_parse(r >= 0 ? text : NULL, ret);
        return r;
}

int pressure_jobs_add(struct cgroup_engine *e, const char *path, struct governor_jobs_sample *sum) {
        _cleanup_free_ char *stat = NULL, *current = NULL;
        struct governor_io_use io;
        int r;

        r = cgroup_read_file(e, path, "memory.current", &current);
        if (r < 0)
                return r;
        (void) cgroup_read_file(e, path, "memory.stat", &stat);
        (void) pressure_io_use_read(e, path, &io);
        sum->current += number(current);
        sum->pgfault += keyed(stat, "pgfault");
        sum->dirty += keyed(stat, "file_dirty") + keyed(stat, "file_writeback");
        governor_io_use_add(&sum->io, &io);
        return 0;
}
