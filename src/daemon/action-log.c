/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>
#include <stdarg.h>

#include "action-log.h"
#include "log.h"

static void action_log_va(struct action_log *l, int level, const struct log_fields *fields, const char *fmt,
                          va_list ap) {
        struct action *a = &l->ring[l->n % ACTION_LOG_SIZE];
        char *msg = NULL;

        assert(l && fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        if (!msg)
                return;
        log_fields_internal(level, 0, fields, "%s", msg);
        free(a->message);
        a->message = msg;
        a->usec = now_usec(CLOCK_REALTIME);
        l->n++;
}

void action_log_add(struct action_log *l, int level, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        action_log_va(l, level, NULL, fmt, ap);
        va_end(ap);
}

void action_log_add_fields(struct action_log *l, int level, const struct log_fields *fields, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        action_log_va(l, level, fields, fmt, ap);
        va_end(ap);
}

json_object *action_log_json(const struct action_log *l) {
        json_object *a = json_object_new_array();
        unsigned first = l->n > ACTION_LOG_SIZE ? l->n - ACTION_LOG_SIZE : 0;

        for (unsigned i = first; i < l->n; i++) {
                const struct action *act = &l->ring[i % ACTION_LOG_SIZE];
                json_object *o = json_object_new_object();

                json_object_object_add(o, "time", json_object_new_double((double) act->usec / 1e6));
                json_object_object_add(o, "message", json_object_new_string(act->message));
                json_object_array_add(a, o);
        }
        return a;
}

void action_log_done(struct action_log *l) {
        for (unsigned i = 0; i < ACTION_LOG_SIZE; i++)
                l->ring[i].message = mfree(l->ring[i].message);
        l->n = 0;
}
