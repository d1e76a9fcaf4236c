#!/bin/bash
# What pagewardenctl does with the daemon's answers, against a fake daemon
# that answers with a recorded response (tests/golden/ctl): status's exit
# status and --quiet, --no-legend, tables cut to $COLUMNS or the terminal
# (--full not), colour and the pager on a terminal (script(1) gives one).
. "$top_srcdir/tests/cli/lib.sh"

GOLDEN="$top_srcdir/tests/golden/ctl"
export PAGEWARDEN_SOCKET="$TMP/control.sock" TZ=UTC
unset COLUMNS NO_COLOR PAGER PAGEWARDEN_PAGER LESS
answer() { fake_answer "$PAGEWARDEN_SOCKET" "$GOLDEN/$1.json"; } # answer NAME: tests/golden/ctl/NAME.json
# The display width of the widest table line (indented, not the governor's summary), colours left out.
table_width() {
        sed -n '/^  /{/reaction latency/!p}' <<<"$1" | sed 's/\x1b\[[0-9;]*m//g' | LC_ALL=C.UTF-8 wc -L
}
# on_tty ROWS COLS CMD: CMD on a terminal of that size (script(1)'s pty), its output with \r removed
on_tty() {
        local rows=$1 cols=$2
        shift 2
        script -qec "stty rows $rows cols $cols; $*" /dev/null </dev/null | tr -d '\r'
}

# ---- status as a health check ---------------------------------------------

answer status-jobs # a protected cgroup is missing
run "$CTL" status
expect_status 4 "status exits 4 when a protected application is not protected"
expect_in "$OUT" "PROTECTED" "and prints the status"
expect_in "$ERR" "protected application cache is not protected: cgroup not found" "and says on stderr what is not in force"
run "$CTL" status --quiet
expect_status 4 "status --quiet exits 4 as well"
expect_eq "status --quiet prints nothing on stdout" "$OUT" ""
expect_eq "nor on stderr" "$ERR" ""
run "$CTL" status -q --json
expect_status 4 "status -q --json: the same status"
run "$CTL" list -q
expect_status 2 "only status takes -q"

answer status-idle
run "$CTL" status
expect_status 0 "status exits 0 when everything is in force"
expect_eq "and says nothing on stderr" "$ERR" ""
run "$CTL" -q status
expect_status 2 "-q before the command is refused (check and status have their own)"

# ---- --no-legend, systemctl's options anywhere ----------------------------

answer list
run "$CTL" list
expect_status 0 "list"
expect_in "$(head -n 1 <<<"$OUT")" "ID  NAME" "list has a header"
n_rows=$(wc -l <<<"$OUT")
run "$CTL" list --no-legend
expect_status 0 "list --no-legend is accepted (it was refused: scripts written for systemctl broke)"
expect_eq "list --no-legend prints the rows without the header" "$(wc -l <<<"$OUT")" $((n_rows - 1))
expect_eq "and the first row is a job" "$(head -n 1 <<<"$OUT" | awk '{ print $1 }')" \
        "$(sed -n 2p <<<"$(TZ=UTC "$CTL" list)" | awk '{ print $1 }')"
run "$CTL" --no-pager --no-legend list
expect_eq "global options before the command work the same" "$(wc -l <<<"$OUT")" $((n_rows - 1))
run "$CTL" list --no-pager
expect_status 0 "--no-pager is accepted"

# ---- width: $COLUMNS or the terminal; --full ------------------------------

answer status-jobs
wide=$(TZ=UTC "$CTL" status 2>/dev/null | awk '{ if (length($0) > m) m = length($0) } END { print m }')
expect_eq "to a pipe, without COLUMNS, nothing is cut (the widest line is $wide columns)" \
        "$([ "$wide" -gt 100 ] && echo yes)" yes
COLUMNS=80 run "$CTL" status
expect_eq "COLUMNS=80: no table line is wider than 80 columns" "$(table_width "$OUT")" \
        "$([ "$(table_width "$OUT")" -le 80 ] && table_width "$OUT")"
expect_in "$OUT" "…" "cells that did not fit end with an ellipsis"
expect_in "$OUT" "  backup   2 GiB (cfg 4 GiB)" "narrow columns are not cut"
COLUMNS=80 run "$CTL" status --full
expect_eq "--full: nothing is cut" "$(grep -c '…' <<<"$OUT")" 0
COLUMNS=80 run "$CTL" -l status
expect_eq "-l before the command: the same" "$(grep -c '…' <<<"$OUT")" 0

out=$(on_tty 50 80 "$CTL" --no-pager status)
expect_eq "on an 80-column terminal no table line is wider" "$(table_width "$out")" \
        "$([ "$(table_width "$out")" -le 80 ] && table_width "$out")"

# ---- colour on a terminal, not in a pipe, not with NO_COLOR ---------------

esc=$(printf '\033')
expect_in "$out" "${esc}[31merror" "on a terminal an error is red"
expect_in "$out" "${esc}[32mok${esc}[0m" "and ok is green"
expect_eq "to a pipe there is no colour" "$(TZ=UTC "$CTL" status 2>/dev/null | grep -c "$esc")" 0
out=$(NO_COLOR=1 on_tty 50 200 "$CTL" --no-pager status)
expect_eq "NO_COLOR: no colour on a terminal" "$(grep -c "$esc\[3" <<<"$out")" 0
out=$(TERM=dumb on_tty 50 200 "$CTL" --no-pager status)
expect_eq "TERM=dumb: no colour" "$(grep -c "$esc\[3" <<<"$out")" 0

# ---- the pager: on a terminal, for output taller than it ------------------

export PAGEWARDEN_PAGER="sed s/^/paged:/"
out=$(on_tty 10 200 "$CTL" status)
expect_in "$out" "paged:PROTECTED" "output taller than the terminal goes through the pager"
out=$(on_tty 10 200 "$CTL" --no-pager status)
expect_eq "--no-pager: not through the pager" "$(grep -c '^paged:' <<<"$out")" 0
out=$(on_tty 200 200 "$CTL" status)
expect_eq "output that fits the terminal is not paged" "$(grep -c '^paged:' <<<"$out")" 0
expect_in "$out" "PROTECTED" "and is printed"
expect_eq "a pipe is never paged" "$("$CTL" status 2>/dev/null | grep -c '^paged:')" 0
out=$(PAGEWARDEN_PAGER=/nonexistent/pager on_tty 10 200 "$CTL" status)
expect_in "$out" "PROTECTED" "a pager that cannot run: printed without one"
out=$(PAGEWARDEN_PAGER= PAGER="sed s/^/viapager:/" on_tty 10 200 "$CTL" status)
expect_eq "an empty \$PAGEWARDEN_PAGER means no pager, whatever \$PAGER says" "$(grep -c '^viapager:' <<<"$out")" 0
out=$(PAGER="sed s/^/viapager:/" PAGEWARDEN_PAGER= on_tty 10 200 env -u PAGEWARDEN_PAGER "$CTL" status)
expect_in "$out" "viapager:PROTECTED" "without \$PAGEWARDEN_PAGER, \$PAGER is the pager"

# ---- top, in a terminal (tmux): refreshes, fits, colours, quits on q -------

answer status-jobs
unset PAGEWARDEN_PAGER PAGER
TM="tmux -L pagewarden-test-$$"
trap 'fake_stop; $TM kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
pane() { $TM capture-pane -p "$@" -t top; }
wait_pane() { # wait_pane TEXT: until the pane shows TEXT (at most 5 s)
        for _ in $(seq 50); do pane | grep -qF -- "$1" && return 0; sleep 0.1; done
        return 1
}
$TM new-session -d -s top -x 100 -y 40 \
        "env PAGEWARDEN_SOCKET=$PAGEWARDEN_SOCKET TZ=UTC $CTL top -d 0.5; echo top exited \$?; sleep 30"
wait_pane "JOBS"
ok $? "top shows the jobs in a terminal"
wait_pane "20 MiB/s" || wait_pane "0 B/s"
ok $? "from its second refresh, the jobs' rates"
expect_in "$(pane)" "cache  " "and the protected applications"
expect_eq "no line is wider than the terminal" "$(pane | LC_ALL=C.UTF-8 wc -L)" \
        "$([ "$(pane | LC_ALL=C.UTF-8 wc -L)" -le 100 ] && pane | LC_ALL=C.UTF-8 wc -L)"
expect_in "$(pane -e)" "$(printf '\033[32mok')" "states in colour"
$TM resize-window -t top -x 70 -y 40
sleep 1
expect_eq "resized to 70 columns, it redraws to fit" "$(pane | LC_ALL=C.UTF-8 wc -L)" \
        "$([ "$(pane | LC_ALL=C.UTF-8 wc -L)" -le 70 ] && pane | LC_ALL=C.UTF-8 wc -L)"
$TM send-keys -t top q
wait_pane "top exited 0"
ok $? "q quits, with exit status 0"
expect_not_in "$(pane)" "JOBS" "and the terminal's own screen is back"
$TM kill-session -t top
$TM new-session -d -s top -x 100 -y 40 "env NO_COLOR=1 PAGEWARDEN_SOCKET=$PAGEWARDEN_SOCKET $CTL top; sleep 30"
wait_pane "JOBS"
expect_not_in "$(pane -e)" "$(printf '\033[32m')" "NO_COLOR: top has no colour"
$TM kill-session -t top
run "$CTL" top
expect_status 2 "top to a pipe without -n is refused"
expect_in "$ERR" "standard output is not a terminal: give -n N" "and says why"
run "$CTL" top -n 2 -d 0.1
expect_status 0 "top -n 2 prints two screens"
expect_eq "two screens" "$(grep -c '^JOBS' <<<"$OUT")" 2
expect_eq "to a pipe, without escapes" "$(grep -c "$(printf '\033')" <<<"$OUT")" 0

done_testing
