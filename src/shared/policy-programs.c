/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>

#include "policy-programs.h"
#include "program.h"

int policy_check_program(const struct source *src, const struct pw_pattern *e, struct diag_list *diags) {
        struct program_info info;
        char text[2 * DIAG_MAX_MESSAGE]; /* longer than a message: diag_warn() cuts it, and says so */
        const char *why;
        int r;

        assert(e);
        assert(diags);
        r = program_inspect(e->text, &info);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        why = program_problem(e->text, &info, text, sizeof(text));
        if (why)
                diag_warn(diags, src, e->line, e->column, "%s", why);
        program_info_done(&info);
        return diags->oom ? -ENOMEM : 0;
}
