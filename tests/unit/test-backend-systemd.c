/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd backend's units placed by rule (backend-systemd-units.c) and
 * its protection of units (backend-systemd-protect.c) against a fake PID 1: a
 * thread that serves the system bus address the
 * backend connects to (DBUS_SYSTEM_BUS_ADDRESS, a socket in a temporary
 * directory), answers what the backend asks, and records what it is sent.
 * It can hold its answer to GetAll, so that what the backend does before
 * PID 1 answers is seen: nothing written, the loop free.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "backend.h"
#include "common.h"
#include "policy.h"
#include "util.h"

#define UNIT_PATH "/org/freedesktop/systemd1/unit/backup_2eservice"
#define SD_UNITS "/org/freedesktop/systemd1/unit/"
#define SLICE_PATH "/org/freedesktop/systemd1/unit/system_2eslice"

struct fake_pid1 {
        char *dir;
        int listen_fd;
        pthread_t thread;
        pthread_mutex_t lock;
        /* Set by the test. */
        bool hold_getall;  /* keep GetAll's answer until released */
        bool getall_error; /* answer GetAll with an error */
        bool getall_no_io; /* leave IOWriteIOPSMax out of GetAll's answer */
        uint64_t own_high; /* the unit's own MemoryHigh */
        uint64_t own_min;  /* and its own MemoryMin (a unit's; a slice's is 0) */
        bool stopped;      /* the unit runs no more: no cgroup */
        bool not_loaded;   /* GetUnit answers NoSuchUnit for it */
        bool announces;    /* asking its object (Get) loads it again first: UnitNew, then the answer */
        /* Seen by the fake: one line per call, "GetAll PATH IFACE" or "SetUnitProperties UNIT MemoryHigh=N". */
        char calls[32][160];
        size_t n_calls;
        sd_bus_message *held;
};

static void record(struct fake_pid1 *f, const char *fmt, ...) _printf_(2, 3);
static void record(struct fake_pid1 *f, const char *fmt, ...) {
        va_list ap;

        pthread_mutex_lock(&f->lock);
        if (f->n_calls < ELEMENTSOF(f->calls)) {
                va_start(ap, fmt);
                vsnprintf(f->calls[f->n_calls++], sizeof(f->calls[0]), fmt, ap);
                va_end(ap);
        }
        pthread_mutex_unlock(&f->lock);
}

static int reply_getall(struct fake_pid1 *f, sd_bus_message *call) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        bool error, no_io, stopped;
        uint64_t own_high, own_min;
        bool slice = streq(sd_bus_message_get_path(call), SLICE_PATH);

        pthread_mutex_lock(&f->lock);
        error = f->getall_error, no_io = f->getall_no_io, own_high = f->own_high, own_min = f->own_min;
        stopped = f->stopped;
        pthread_mutex_unlock(&f->lock);
        if (error)
                return sd_bus_reply_method_errorf(call, "org.freedesktop.DBus.Error.AccessDenied", "not for you");
        r = sd_bus_message_new_method_return(call, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", no_io ? 11 : 12,  /* */
                                          "Slice", "s", "system.slice", /* one the backend skips */
                                          "ControlGroup", "s",
                                          slice     ? "/system.slice"
                                          : stopped ? ""
                                                    : "/system.slice/backup.service",
                                          "MemoryMin", "t", slice ? 0 : own_min, /* */
                                          "MemoryLow", "t", UINT64_C(0),         /* */
                                          "MemoryHigh", "t", own_high,           /* */
                                          "MemoryMax", "t", UINT64_MAX,          /* */
                                          "MemorySwapMax", "t", UINT64_MAX,      /* */
                                          "CPUWeight", "t", UINT64_MAX,          /* */
                                          "IOReadBandwidthMax", "a(st)", 1, "/dev/vda", UINT64_C(1000000),
                                          "IOWriteBandwidthMax", "a(st)", 0, /* */
                                          "IOReadIOPSMax", "a(st)", 0,       /* */
                                          "IOWriteIOPSMax", "a(st)", 0);
        return r < 0 ? r : sd_bus_send(NULL, m, NULL);
}

/* "SetUnitProperties UNIT MemoryHigh=N", or, for protection, "SetUnitProperties UNIT MemoryMin=N". */
static void record_set_properties(struct fake_pid1 *f, sd_bus_message *m) {
        const char *unit, *name;
        uint64_t high = 0, min = 0;
        bool has_min = false;
        int runtime, r;

        r = sd_bus_message_read(m, "sb", &unit, &runtime);
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', "(sv)");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0 && streq(name, "MemoryHigh"))
                        r = sd_bus_message_read(m, "v", "t", &high);
                else if (r >= 0 && streq(name, "MemoryMin")) {
                        r = sd_bus_message_read(m, "v", "t", &min);
                        has_min = true;
                } else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (has_min)
                record(f, "SetUnitProperties %s MemoryMin=%" PRIu64 "%s", r < 0 ? "?" : unit, min,
                       runtime ? "" : " (not runtime)");
        else
                record(f, "SetUnitProperties %s MemoryHigh=%" PRIu64 "%s", r < 0 ? "?" : unit, high,
                       runtime ? "" : " (not runtime)");
}

/* The answer to one call (the filter's: 1, handled, or an error). */
/* UnitNew for backup.service, as PID 1 sends it (from its bus name: the backend's matches name the sender). */
static void announce(sd_bus_message *call) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *s = NULL;
        sd_bus *bus = sd_bus_message_get_bus(call);

        ck_assert_int_ge(sd_bus_message_new_signal(bus, &s, "/org/freedesktop/systemd1",
                                                   "org.freedesktop.systemd1.Manager", "UnitNew"),
                         0);
        ck_assert_int_ge(sd_bus_message_set_sender(s, "org.freedesktop.systemd1"), 0);
        ck_assert_int_ge(sd_bus_message_append(s, "so", "backup.service", UNIT_PATH), 0);
        ck_assert_int_ge(sd_bus_send(bus, s, NULL), 0);
}

static int answer(struct fake_pid1 *f, sd_bus_message *m) {
        const char *iface;

        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "Hello"))
                return sd_bus_reply_method_return(m, "s", ":1.1");
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get")) {
                const char *prop;

                (void) sd_bus_message_read(m, "ss", &iface, &prop);
                if (!streq(prop, "Version"))
                        record(f, "Get %s %s", sd_bus_message_get_path(m), prop);
                if (streq(prop, "Version"))
                        return sd_bus_reply_method_return(m, "v", "s", "252 (fake)");
                if (streq(prop, "ControlGroup")) {
                        bool stopped, announces;

                        pthread_mutex_lock(&f->lock);
                        stopped = f->stopped;
                        announces = f->announces;
                        pthread_mutex_unlock(&f->lock);
                        if (announces)
                                announce(m);
                        return sd_bus_reply_method_return(m, "v", "s",
                                                          stopped || !streq(sd_bus_message_get_path(m), UNIT_PATH)
                                                                  ? ""
                                                                  : "/system.slice/backup.service");
                }
                return sd_bus_reply_method_return(m, "v", "t", UINT64_C(4915));
        }
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "GetAll")) {
                (void) sd_bus_message_read(m, "s", &iface);
                record(f, "GetAll %s %s", sd_bus_message_get_path(m), iface);
                pthread_mutex_lock(&f->lock);
                if (f->hold_getall && !f->held) { /* answered by serve() once released */
                        f->held = sd_bus_message_ref(m);
                        pthread_mutex_unlock(&f->lock);
                        return 1;
                }
                pthread_mutex_unlock(&f->lock);
                return reply_getall(f, m);
        }
        if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "GetUnit")) {
                const char *unit = NULL;
                bool not_loaded;
                _cleanup_free_ char *path = NULL;

                (void) sd_bus_message_read(m, "s", &unit);
                record(f, "GetUnit %s", unit ?: "?");
                pthread_mutex_lock(&f->lock);
                not_loaded = f->not_loaded;
                pthread_mutex_unlock(&f->lock);
                if (!unit || (not_loaded && streq(unit, "backup.service")) ||
                    sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path) < 0)
                        return sd_bus_reply_method_errorf(m, "org.freedesktop.systemd1.NoSuchUnit",
                                                          "Unit %s not loaded.", unit ?: "?");
                return sd_bus_reply_method_return(m, "o", path);
        }
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "AddMatch") ||
            sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "Subscribe"))
                return sd_bus_reply_method_return(m, NULL);
        if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager", "SetUnitProperties")) {
                record_set_properties(f, m);
                return sd_bus_reply_method_return(m, NULL);
        }
        record(f, "unexpected %s", sd_bus_message_get_member(m));
        return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.UnknownMethod", "fake PID 1");
}

static int on_call(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        int r;

        if (!sd_bus_message_is_method_call(m, NULL, NULL))
                return 0;
        r = answer(userdata, m);
        return r < 0 ? r : 1;
}

static void *serve(void *userdata) {
        struct fake_pid1 *f = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        sd_id128_t id;
        int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);

        if (fd < 0 || sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, fd, fd) < 0 || sd_id128_randomize(&id) < 0 ||
            sd_bus_set_server(bus, 1, id) < 0 || sd_bus_set_anonymous(bus, 1) < 0 ||
            sd_bus_add_filter(bus, NULL, on_call, f) < 0 || sd_bus_start(bus) < 0)
                return NULL;
        for (;;) {
                sd_bus_message *held = NULL;
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        break; /* the backend closed the connection */
                pthread_mutex_lock(&f->lock);
                if (f->held && !f->hold_getall)
                        held = TAKE_PTR(f->held);
                pthread_mutex_unlock(&f->lock);
                if (held) {
                        (void) reply_getall(f, held);
                        sd_bus_message_unref(held);
                }
                if (r == 0 && sd_bus_wait(bus, 10 * 1000) < 0)
                        break;
        }
        return NULL;
}

static void fake_start(struct fake_pid1 *f) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *address = NULL;

        *f = (struct fake_pid1){ .dir = tmpdir_new(), .own_high = UINT64_MAX };
        pthread_mutex_init(&f->lock, NULL);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/bus", f->dir);
        f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(f->listen_fd, 0);
        ck_assert_int_eq(bind(f->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(f->listen_fd, 1), 0);
        ck_assert_int_ge(asprintf(&address, "unix:path=%s", sa.sun_path), 0);
        ck_assert_int_eq(setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1), 0);
        ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

static void fake_stop(struct fake_pid1 *f) {
        ck_assert_int_eq(pthread_join(f->thread, NULL), 0);
        sd_bus_message_unref(f->held);
        close(f->listen_fd);
        tmpdir_cleanup(f->dir);
}

/* How the fake answers from now on (its thread reads these under the lock). */
static void fake_set(struct fake_pid1 *f, bool *flag, bool value) {
        pthread_mutex_lock(&f->lock);
        *flag = value;
        pthread_mutex_unlock(&f->lock);
}

static size_t calls_of(struct fake_pid1 *f, const char *prefix, char *last, size_t len) {
        size_t n = 0;

        pthread_mutex_lock(&f->lock);
        for (size_t i = 0; i < f->n_calls; i++)
                if (startswith(f->calls[i], prefix)) {
                        n++;
                        if (last)
                                snprintf(last, len, "%s", f->calls[i]);
                }
        pthread_mutex_unlock(&f->lock);
        return n;
}

/* Runs the loop until the fake has seen n calls that start with prefix (at most 5 s). */
static void run_until(sd_event *e, struct fake_pid1 *f, const char *prefix, size_t n) {
        for (int i = 0; i < 500 && calls_of(f, prefix, NULL, 0) < n; i++)
                ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
        ck_assert_uint_eq(calls_of(f, prefix, NULL, 0), n);
}

/* Runs the loop for a while: what the backend would send meanwhile, it sends. */
static void run_for(sd_event *e, int ms) {
        for (int i = 0; i < ms / 10; i++)
                ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
}

struct fixture {
        struct fake_pid1 pid1;
        char *state;
        sd_event *event;
        struct backend *b;
        struct pw_job_class class;
};

static void fixture_start(struct fixture *x) {
        *x = (struct fixture){ .state = tmpdir_new(), .class = { .name = (char *) "backup" } };
        fake_start(&x->pid1);
        ck_assert_int_eq(sd_event_new(&x->event), 0);
        ck_assert_int_eq(backend_systemd_new(NULL, NULL, x->event, "/pagewarden.slice", x->state, &x->b), 0);
        x->class.memory_high = UINT64_C(256) << 20;
        x->class.memory_max = x->class.memory_swap_max = x->class.cpu_weight = UINT64_MAX;
}

static char *state_text(struct fixture *x) {
        _cleanup_free_ char *path = NULL;
        char *text = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/units.state", x->state), 0);
        if (read_full_file(path, 1 << 20, &text, NULL) < 0)
                return strdup("");
        return text;
}

static void fixture_stop(struct fixture *x) {
        x->b = backend_free(x->b); /* closes the bus: the fake's thread ends */
        fake_stop(&x->pid1);
        sd_event_unref(x->event);
        tmpdir_cleanup(x->state);
}

/*
 * A unit a rule places: its own values are asked for without waiting (apply returns while PID 1 has not
 * answered, and nothing is written meanwhile); placed again meanwhile, the latest class goes, once; the own
 * values are kept (in the state file too) before the class's limits are sent, and given back at restore.
 */
START_TEST(test_systemd_unit_apply_does_not_wait) {
        struct fixture x;
        char last[160];
        _cleanup_free_ char *state = NULL;

        fixture_start(&x);
        fake_set(&x.pid1, &x.pid1.hold_getall, true);
        x.pid1.own_high = UINT64_C(1) << 30; /* before any call */
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_until(x.event, &x.pid1, "GetAll", 1);
        ck_assert_int_eq(calls_of(&x.pid1, "GetAll " UNIT_PATH " org.freedesktop.systemd1.Service", NULL, 0), 1);
        x.class.memory_high = UINT64_C(512) << 20; /* a reload changed the class */
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_for(x.event, 100);
        ck_assert_uint_eq(calls_of(&x.pid1, "SetUnitProperties", NULL, 0), 0);
        ck_assert_uint_eq(calls_of(&x.pid1, "GetAll", NULL, 0), 1); /* asked once */
        state = state_text(&x);
        ck_assert_str_eq(state, ""); /* nothing to give back yet */

        fake_set(&x.pid1, &x.pid1.hold_getall, false);
        run_until(x.event, &x.pid1, "SetUnitProperties", 1);
        calls_of(&x.pid1, "SetUnitProperties", last, sizeof(last));
        ck_assert_str_eq(last, "SetUnitProperties backup.service MemoryHigh=536870912");
        free(state);
        state = state_text(&x);
        ck_assert_msg(strstr(state, "backup.service\t1073741824\t18446744073709551615\t"), "%s", state);
        ck_assert_msg(strstr(state, "\t/dev/vda=1000000\t\t\t\n"), "%s", state);

        ck_assert_int_eq(backend_unit_restore(x.b, "backup.service"), 0);
        run_until(x.event, &x.pid1, "SetUnitProperties", 2);
        calls_of(&x.pid1, "SetUnitProperties", last, sizeof(last));
        ck_assert_str_eq(last, "SetUnitProperties backup.service MemoryHigh=1073741824");
        run_for(x.event, 50);
        free(state);
        state = state_text(&x);
        ck_assert_msg(!strstr(state, "backup.service"), "%s", state); /* forgotten once systemd has them back */
        fixture_stop(&x);
}
END_TEST

/* Its rule went before PID 1 answered: nothing was written, so nothing is given back, and the late answer
 * writes nothing either. */
START_TEST(test_systemd_unit_restore_while_reading) {
        struct fixture x;
        _cleanup_free_ char *state = NULL;

        fixture_start(&x);
        fake_set(&x.pid1, &x.pid1.hold_getall, true);
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_until(x.event, &x.pid1, "GetAll", 1);
        ck_assert_int_eq(backend_unit_restore(x.b, "backup.service"), 0);
        fake_set(&x.pid1, &x.pid1.hold_getall, false);
        run_for(x.event, 200);
        ck_assert_uint_eq(calls_of(&x.pid1, "SetUnitProperties", NULL, 0), 0);
        state = state_text(&x);
        ck_assert_str_eq(state, "");
        fixture_stop(&x);
}
END_TEST

/* PID 1 refuses the read, or its answer lacks a property: the unit does not get its class's limits (its own
 * values would be lost), and the next placement asks again. */
START_TEST(test_systemd_unit_own_values_unreadable) {
        struct fixture x;
        char last[160];

        fixture_start(&x);
        fake_set(&x.pid1, &x.pid1.getall_error, true);
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_until(x.event, &x.pid1, "GetAll", 1);
        run_for(x.event, 100);
        ck_assert_uint_eq(calls_of(&x.pid1, "SetUnitProperties", NULL, 0), 0);

        fake_set(&x.pid1, &x.pid1.getall_error, false);
        fake_set(&x.pid1, &x.pid1.getall_no_io, true);
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_until(x.event, &x.pid1, "GetAll", 2);
        run_for(x.event, 100);
        ck_assert_uint_eq(calls_of(&x.pid1, "SetUnitProperties", NULL, 0), 0);

        fake_set(&x.pid1, &x.pid1.getall_no_io, false);
        ck_assert_int_eq(backend_unit_apply(x.b, "backup.service", &x.class), 0);
        run_until(x.event, &x.pid1, "SetUnitProperties", 1);
        calls_of(&x.pid1, "SetUnitProperties", last, sizeof(last));
        ck_assert_str_eq(last, "SetUnitProperties backup.service MemoryHigh=268435456");
        ck_assert_uint_eq(calls_of(&x.pid1, "unexpected", NULL, 0), 0);
        fixture_stop(&x);
}
END_TEST

/* ---- protection of units ---- */

struct pfixture {
        struct fixture x;
        char *tree;                   /* the cgroup2 mount the engine reads back what is in force from */
        struct cgroup_engine *engine; /* the backend's */
        struct backend_protect req;
        struct cgroup_protect_result res;
};

static void pfixture_start(struct pfixture *p) {
        *p = (struct pfixture){ .tree = tmpdir_new(),
                                .req = { .name = "db", .unit = "backup.service", .min = UINT64_C(64) << 20 } };
        free(write_file(p->tree, "system.slice/backup.service/memory.min", "0\n"));
        free(write_file(p->tree, "system.slice/backup.service/memory.low", "0\n"));
        free(write_file(p->tree, "system.slice/memory.min", "0\n"));
        ck_assert_int_eq(cgroup_engine_new(p->tree, "pagewarden.slice", false, &p->engine), 0);
        p->x = (struct fixture){ .state = tmpdir_new(), .class = { .name = (char *) "backup" } };
        fake_start(&p->x.pid1);
        ck_assert_int_eq(sd_event_new(&p->x.event), 0);
        ck_assert_int_eq(backend_systemd_new(p->engine, NULL, p->x.event, "/pagewarden.slice", p->x.state, &p->x.b), 0);
}

/* The daemon stops and another starts on the same state directory (its PID 1 the same fake, reconnected). */
static void pfixture_restart(struct pfixture *p) {
        p->x.b = backend_free(p->x.b);                             /* and its engine */
        ck_assert_int_eq(pthread_join(p->x.pid1.thread, NULL), 0); /* it served the first connection */
        ck_assert_int_eq(pthread_create(&p->x.pid1.thread, NULL, serve, &p->x.pid1), 0);
        ck_assert_int_eq(cgroup_engine_new(p->tree, "pagewarden.slice", false, &p->engine), 0);
        ck_assert_int_eq(backend_systemd_new(p->engine, NULL, p->x.event, "/pagewarden.slice", p->x.state, &p->x.b), 0);
}

static void pfixture_stop(struct pfixture *p) {
        fixture_stop(&p->x); /* the backend frees its engine */
        tmpdir_cleanup(p->tree);
}

static char *protect_state(struct pfixture *p) {
        _cleanup_free_ char *path = NULL;
        char *text = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/protect-units.state", p->x.state), 0);
        if (read_full_file(path, 1 << 20, &text, NULL) < 0)
                return strdup("");
        return text;
}

/* Applies and runs the loop until the backend tells a listener of the unit (it applies again then). */
static int told;
static void on_told(void *userdata, const char *unit) {
        (void) userdata;
        if (streq(unit, "backup.service"))
                told++;
}

static void run_until_told(struct pfixture *p, int n) {
        for (int i = 0; i < 500 && told < n; i++)
                ck_assert_int_ge(sd_event_run(p->x.event, 10 * 1000), 0);
        ck_assert_int_eq(told, n);
}

/*
 * A unit protected the first time: nothing waits on PID 1 — its own values and cgroup are asked with GetUnit and
 * one GetAll (-EINPROGRESS meanwhile, nothing written), then the slice's; once answered, both are raised, their
 * own values saved, and no property is read one by one (Get).
 */
START_TEST(test_systemd_protect_does_not_wait) {
        struct pfixture p;
        char last[160];
        _cleanup_free_ char *state = NULL;

        pfixture_start(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        p.x.pid1.own_min = UINT64_C(1) << 20;
        fake_set(&p.x.pid1, &p.x.pid1.hold_getall, true);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        ck_assert_int_eq(p.res.error, -EINPROGRESS);
        run_until(p.x.event, &p.x.pid1, "GetAll " UNIT_PATH, 1);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0); /* asked once */
        ck_assert_int_eq(p.res.error, -EINPROGRESS);
        run_for(p.x.event, 50);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetAll", NULL, 0), 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "SetUnitProperties", NULL, 0), 0);
        fake_set(&p.x.pid1, &p.x.pid1.hold_getall, false);
        run_until_told(&p, 1);

        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0); /* the slice's turn */
        ck_assert_int_eq(p.res.error, -EINPROGRESS);
        run_until_told(&p, 2);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetAll " SLICE_PATH, NULL, 0), 1);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        ck_assert_int_eq(p.res.error, 0);
        run_until(p.x.event, &p.x.pid1, "SetUnitProperties", 2);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "SetUnitProperties system.slice MemoryMin=67108864", NULL, 0), 1);
        calls_of(&p.x.pid1, "SetUnitProperties", last, sizeof(last));
        ck_assert_str_eq(last, "SetUnitProperties backup.service MemoryMin=67108864");
        state = protect_state(&p);
        ck_assert_msg(strstr(state, "\n1048576 0 - backup.service\n"), "%s", state);
        ck_assert_msg(strstr(state, "\n0 0 - system.slice\n"), "%s", state);
        /* Applied again: nothing asked, nothing new written but the same values. */
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        run_for(p.x.event, 50);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetAll", NULL, 0), 2);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "Get " SD_UNITS, NULL, 0), 0);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetUnit", NULL, 0), 2); /* the unit's, the slice's */
        ck_assert_uint_eq(calls_of(&p.x.pid1, "unexpected", NULL, 0), 0);
        pfixture_stop(&p);
}
END_TEST

/*
 * package@6.12's case: the daemon restarts while a unit is protected (its entry loaded from the state file,
 * our 64M in force), then the protection is withdrawn while the unit no longer runs.  While PID 1 is asked,
 * nothing is given back and the original stays the one saved, not our value read back; withdrawn, the unit
 * gets its own 1M back, not 64M.
 */
START_TEST(test_systemd_protect_restart_keeps_the_originals) {
        struct pfixture p;
        _cleanup_free_ char *state = NULL;
        char last[160];
        size_t sets;

        pfixture_start(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        p.x.pid1.own_min = UINT64_C(1) << 20;
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        run_until_told(&p, 1);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        run_until_told(&p, 2);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        ck_assert_int_eq(p.res.error, 0);
        run_until(p.x.event, &p.x.pid1, "SetUnitProperties", 2);

        fake_set(&p.x.pid1, &p.x.pid1.hold_getall, true);
        p.x.pid1.own_min = UINT64_C(64) << 20; /* ours, in force */
        pfixture_restart(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        ck_assert_int_eq(p.res.error, -EINPROGRESS);
        run_for(p.x.event, 50);
        sets = calls_of(&p.x.pid1, "SetUnitProperties", NULL, 0);
        ck_assert_uint_eq(sets, 2); /* nothing given back while asked */
        fake_set(&p.x.pid1, &p.x.pid1.hold_getall, false);
        run_until_told(&p, 1);
        /* The unit's answer, then the slice's: applied again after each. */
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        for (int round = 0; round < 3 && p.res.error == -EINPROGRESS; round++) {
                run_until_told(&p, told + 1);
                ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        }
        ck_assert_int_eq(p.res.error, 0);
        state = protect_state(&p);
        ck_assert_msg(strstr(state, "\n1048576 0 - backup.service\n"), "%s", state); /* not 64M */

        /* apt-get remove: the unit stops, its entry goes. */
        fake_set(&p.x.pid1, &p.x.pid1.stopped, true);
        ck_assert_int_eq(backend_protect_set(p.x.b, NULL, 0, NULL), 0);
        run_until(p.x.event, &p.x.pid1, "SetUnitProperties", sets + 4);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "SetUnitProperties backup.service MemoryMin=1048576", NULL, 0), 1);
        calls_of(&p.x.pid1, "SetUnitProperties", last, sizeof(last));
        ck_assert_msg(strstr(last, "MemoryMin=1048576") || strstr(last, "system.slice MemoryMin=0"), "%s", last);
        free(state);
        state = protect_state(&p);
        ck_assert_msg(!strstr(state, "backup.service"), "%s", state);
        pfixture_stop(&p);
}
END_TEST

/* A protected unit that does not run (loaded without a cgroup; or, not_loaded, unknown to systemd):
 * asked once, then "does not run" (-ENOENT) at each apply without asking PID 1 again (no loop of questions while
 * no unit's event says it started); GetAll is asked of a loaded unit only (asking a missing unit's object would
 * load it, and systemd would announce it: an event that asks again). */
static void protect_absent_unit(bool not_loaded) {
        struct pfixture p;

        pfixture_start(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        fake_set(&p.x.pid1, not_loaded ? &p.x.pid1.not_loaded : &p.x.pid1.stopped, true);
        ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
        ck_assert_int_eq(p.res.error, -EINPROGRESS);
        run_until_told(&p, 1);
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(backend_protect_set(p.x.b, &p.req, 1, &p.res), 0);
                ck_assert_int_eq(p.res.error, -ENOENT);
        }
        run_for(p.x.event, 50);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetUnit backup.service", NULL, 0), 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetAll", NULL, 0), not_loaded ? 0 : 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "SetUnitProperties", NULL, 0), 0);
        pfixture_stop(&p);
}

START_TEST(test_systemd_protect_unit_not_running) {
        protect_absent_unit(false);
}
END_TEST

START_TEST(test_systemd_protect_unit_not_loaded) {
        protect_absent_unit(true);
}
END_TEST

/*
 * A unit's cgroup for placement by rule (backend_unit_path): asked without waiting — GetUnit, then its
 * ControlGroup — -EINPROGRESS meanwhile (asked once however often it is wanted), the units' listeners told of the
 * unit when it is known; then kept, not asked again.  Not loaded: "it does not run", without asking its object
 * (which would load it).
 */
static void unit_path_later(bool not_loaded) {
        struct pfixture p;
        _cleanup_free_ char *path = NULL;

        pfixture_start(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        fake_set(&p.x.pid1, &p.x.pid1.not_loaded, not_loaded);
        ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), -EINPROGRESS);
        ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), -EINPROGRESS);
        ck_assert_ptr_null(path);
        run_until_told(&p, 1);
        if (not_loaded)
                ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), -ENOENT);
        else {
                ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), 0);
                ck_assert_str_eq(path, "system.slice/backup.service");
        }
        run_for(p.x.event, 50);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetUnit backup.service", NULL, 0), 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "Get " UNIT_PATH " ControlGroup", NULL, 0), not_loaded ? 0 : 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetAll", NULL, 0), 0);
        ck_assert_int_eq(told, 1);
        pfixture_stop(&p);
}

/* As place-rules does: each time it is told of the unit, it wants the unit's cgroup. */
static struct backend *wanting;
static void on_told_wants_path(void *userdata, const char *unit) {
        _cleanup_free_ char *path = NULL;

        on_told(userdata, unit);
        (void) backend_unit_path(wanting, unit, &path);
}

/*
 * A unit systemd unloads while idle is loaded again by the question of its object, and systemd announces it
 * (UnitNew) before the answer: that event, the ask's own doing, must not drop the ask, or whoever wants the cgroup
 * at each event asks again, and again.
 */
START_TEST(test_systemd_unit_path_own_event_no_loop) {
        struct pfixture p;
        _cleanup_free_ char *path = NULL;

        pfixture_start(&p);
        told = 0;
        wanting = p.x.b;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told_wants_path, NULL), 0);
        fake_set(&p.x.pid1, &p.x.pid1.stopped, true);
        fake_set(&p.x.pid1, &p.x.pid1.announces, true);
        ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), -EINPROGRESS);
        run_for(p.x.event, 300);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetUnit backup.service", NULL, 0), 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "Get " UNIT_PATH " ControlGroup", NULL, 0), 1);
        ck_assert_int_eq(backend_unit_path(p.x.b, "backup.service", &path), -ENOENT);
        ck_assert_int_eq(told, 2); /* the event, then the answer */
        pfixture_stop(&p);
}
END_TEST

START_TEST(test_systemd_unit_path_does_not_wait) {
        unit_path_later(false);
}
END_TEST

/* A protected unit's cgroup (status, the governor, observation) is asked in the same way: nothing waits for PID 1
 * (the fake answers on this loop: a call that waited would time out), the listeners are told, then it is kept. */
START_TEST(test_systemd_protect_path_does_not_wait) {
        const struct pw_protect entry = { .name = (char *) "backup", .unit = (char *) "backup.service" };
        struct pfixture p;
        _cleanup_free_ char *path = NULL;

        pfixture_start(&p);
        told = 0;
        ck_assert_int_eq(backend_units_watch(p.x.b, on_told, NULL), 0);
        ck_assert_int_eq(backend_protect_path(p.x.b, &entry, &path), -EINPROGRESS);
        ck_assert_int_eq(backend_protect_path(p.x.b, &entry, &path), -EINPROGRESS);
        run_until_told(&p, 1);
        ck_assert_int_eq(backend_protect_path(p.x.b, &entry, &path), 0);
        ck_assert_str_eq(path, "system.slice/backup.service");
        run_for(p.x.event, 50);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "GetUnit backup.service", NULL, 0), 1);
        ck_assert_uint_eq(calls_of(&p.x.pid1, "Get " UNIT_PATH " ControlGroup", NULL, 0), 1);
        pfixture_stop(&p);
}
END_TEST

START_TEST(test_systemd_unit_path_not_loaded) {
        unit_path_later(true);
}
END_TEST

Suite *backend_systemd_suite(void) {
        Suite *s = suite_create("backend-systemd");
        TCase *tc = tcase_create("units");

        tcase_add_test(tc, test_systemd_unit_apply_does_not_wait);
        tcase_add_test(tc, test_systemd_unit_restore_while_reading);
        tcase_add_test(tc, test_systemd_unit_own_values_unreadable);
        tcase_add_test(tc, test_systemd_unit_path_does_not_wait);
        tcase_add_test(tc, test_systemd_unit_path_not_loaded);
        tcase_add_test(tc, test_systemd_unit_path_own_event_no_loop);
        suite_add_tcase(s, tc);
        tc = tcase_create("protection");
        tcase_add_test(tc, test_systemd_protect_does_not_wait);
        tcase_add_test(tc, test_systemd_protect_restart_keeps_the_originals);
        tcase_add_test(tc, test_systemd_protect_unit_not_running);
        tcase_add_test(tc, test_systemd_protect_unit_not_loaded);
        tcase_add_test(tc, test_systemd_protect_path_does_not_wait);
        suite_add_tcase(s, tc);
        return s;
}
