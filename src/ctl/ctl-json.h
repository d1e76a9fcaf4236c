/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Reading the daemon's answers, whose fields may be missing, null or of
 * another type (an older or newer daemon): each accessor gives NULL, false
 * or 0 then, never a crash.  For the printer and the metrics.
 *
 * Errors: none; a field that is not there, or not of the type asked, reads
 * as absent.
 */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

static inline json_object *field(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

/* A string that is not empty, else NULL. */
static inline const char *str_field(json_object *o, const char *key) {
        json_object *v = field(o, key);

        return json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0 ? json_object_get_string(v)
                                                                                             : NULL;
}

static inline bool uint_value(json_object *v, uint64_t *ret) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return false;
        *ret = json_object_get_uint64(v);
        return true;
}

/* Only a JSON true is true (json-c would take "false", a string, for true). */
static inline bool is_true(json_object *v) {
        return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static inline bool is_false(json_object *v) {
        return json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v);
}

static inline size_t array_length(json_object *v) {
        return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}
