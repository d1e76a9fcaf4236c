/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>

#include "auth.h"
#include "util.h"

bool auth_class_allows(const struct pw_job_class *c, uid_t uid, const char *user_name) {
        char id[16];

        if (uid == 0)
                return true;
        snprintf(id, sizeof(id), "%u", (unsigned) uid);
        for (size_t i = 0; i < c->n_users; i++)
                if (streq(c->users[i], id) || (user_name && streq(c->users[i], user_name)))
                        return true;
        return false;
}

bool auth_owns_process(const struct proc_ids *ids, uid_t uid) {
        if (uid == 0)
                return true;
        for (int i = 0; i < 4; i++)
                if (ids->uid[i] != uid)
                        return false;
        return true;
}
