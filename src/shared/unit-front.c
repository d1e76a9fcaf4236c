/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "unit-front.h"
#include "util.h"

#define SYSTEMD "org.freedesktop.systemd1"

static void bus_closep(sd_bus **b) {
        sd_bus_flush_close_unref(*b);
}

void unit_front_sentence(const char *unit, char *buf, size_t len) {
        snprintf(buf, len,
                 "%s is a oneshot that stays active with no process of its own (Type=oneshot, "
                 "RemainAfterExit=yes): there is nothing in it to protect; protect the unit that runs the "
                 "application (systemctl list-dependencies %s shows what it starts%s)",
                 unit, unit,
                 startswith(unit, "postgresql.") ? "; on Debian, postgresql@VERSION-CLUSTER.service, which "
                                                   "pg_lsclusters names"
                                                 : "");
}

int unit_front(const char *unit, char *why, size_t len) {
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        _cleanup_free_ char *path = NULL, *load = NULL, *type = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int remain = 0, r;

        if (sd_booted() <= 0)
                return -EOPNOTSUPP;
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path);
        if (r < 0)
                return r;
        /* Reading a property loads the unit if it can be. */
        r = sd_bus_get_property_string(bus, SYSTEMD, path, SYSTEMD ".Unit", "LoadState", &error, &load);
        if (r < 0 || !streq(load, "loaded"))
                goto out;
        r = sd_bus_get_property_string(bus, SYSTEMD, path, SYSTEMD ".Service", "Type", &error, &type);
        if (r < 0)
                goto out; /* not a service */
        r = sd_bus_get_property_trivial(bus, SYSTEMD, path, SYSTEMD ".Service", "RemainAfterExit", &error, 'b',
                                        &remain);
        if (r < 0 || !streq(type, "oneshot") || !remain)
                goto out;
        unit_front_sentence(unit, why, len);
        sd_bus_error_free(&error);
        return 1;
out:
        sd_bus_error_free(&error);
        return 0;
}
