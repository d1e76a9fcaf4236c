/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <assert.h>

#include "log.h"
#include "loop.h"
#include "util.h"

bool loop_stats_add(struct loop_stats *s, uint64_t took_usec, uint64_t now_usec) {
        bool longest;

        assert(s);
        s->dispatches++;
        if (took_usec > LOOP_SLOW_USEC)
                s->slow++;
        longest = took_usec > s->longest_usec || !s->longest_at_usec;
        if (longest) {
                s->longest_usec = took_usec;
                s->longest_at_usec = now_usec;
        }
        return longest && took_usec > LOOP_LOG_USEC;
}

/* sd_event_run() in its three steps, with the dispatch timed (the wait is idle time, not a delay). */
int loop_run(sd_event *e, struct loop_stats *s) {
        int r, code;

        assert(e && s);
        while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
                uint64_t t0;

                r = sd_event_prepare(e);
                if (r == 0)
                        r = sd_event_wait(e, UINT64_MAX);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                t0 = now_usec(CLOCK_MONOTONIC);
                r = sd_event_dispatch(e);
                if (r < 0)
                        return r;
                if (loop_stats_add(s, now_usec(CLOCK_MONOTONIC) - t0, now_usec(CLOCK_REALTIME)))
                        log_notice(
                                "Event loop: one dispatch took %.0f ms, the longest yet (requests, triggers and "
                                "timers waited meanwhile)",
                                (double) s->longest_usec / 1000);
        }
        r = sd_event_get_exit_code(e, &code);
        return r < 0 ? r : code;
}
