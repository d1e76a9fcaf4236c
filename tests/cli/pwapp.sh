#!/bin/bash
# tests/vm/pwapp, the benchmark's application: its per-second lines as
# tests/bench parses them, and on "stop" each phase's operation times and
# page-cache misses, the misses counted exactly (RWF_NOWAIT) once its file is
# evicted from the page cache.
. "$top_srcdir/tests/cli/lib.sh"
APP="$top_builddir/tests/vm/pwapp"
# The file on a disk file system, not under $TMP: /tmp is often a tmpfs,
# whose pages are the file itself (nothing to evict) and which may not
# support RWF_NOWAIT.
DATA=$(mktemp -d /var/tmp/pagewarden-pwapp.XXXXXX)
APP_PID=
LOCKER=
trap '[ -z "$APP_PID" ] || kill "$APP_PID" 2>/dev/null; [ -z "$LOCKER" ] || kill "$LOCKER" 2>/dev/null; fake_stop; rm -rf "$TMP" "$DATA"' EXIT
F=$DATA/app.dat
M=$DATA/mode

# skip_or_fail DESCRIPTION REASON: as need_root, for a host that lacks what the assertion needs.
skip_or_fail() {
        if [ "${CI:-}" = true ]; then
                ok 1 "$1: $2"
        else
                TAP_N=$((TAP_N + 1))
                echo "ok $TAP_N - $1 # SKIP $2"
        fi
}
start_app() { # start_app: pwapp 4 MiB of anonymous memory, $F, $M; waits for its "ready"
        "$APP" 4 "$F" "$M" >"$TMP/out" 2>"$TMP/err" &
        APP_PID=$!
        for _ in $(seq 50); do grep -q ready "$TMP/out" && return; sleep 0.1; done
        echo "Bail out! pwapp did not start: $(cat "$TMP/err")"
        exit 1
}
wait_app() { # wait_app: waits for pwapp's end, keeping its status, stdout and stderr as run does
        wait "$APP_PID"
        STATUS=$?
        APP_PID=
        OUT=$(cat "$TMP/out")
        ERR=$(cat "$TMP/err")
}
field() { # field PHASE KEY: the value of KEY on PHASE's line
        echo "$OUT" | awk -v p="phase=$1" -v k="$2" '$1 == p {
                for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }'
}

# 16 MiB, written back to the disk: the eviction below cannot drop dirty pages.
dd if=/dev/urandom of="$F" bs=1M count=16 iflag=fullblock conv=fsync status=none
# Locked in memory until the eviction: some of the machines that run this (CI's among them) page out page
# cache their proactive reclaim finds cold (DAMON's pageout, /sys/kernel/mm/damon), whatever is free, and
# "before" then saw real misses (34 and 72, twice here).
"$top_builddir/tests/vm/pwload" lock "$F" >"$TMP/lock" 2>&1 &
LOCKER=$!
for _ in $(seq 50); do grep -q locked "$TMP/lock" && break; sleep 0.1; done
grep -q locked "$TMP/lock" || echo "# the file is not locked in memory ($(cat "$TMP/lock")): misses before may be real"
echo "busy before" >"$M"
start_app
sleep 1.5
# The phase first, then the eviction: a miss counted in "before" would be
# the test's doing.  pwapp reads its mode file every 100 ms of its loop,
# which a loaded machine may not run for a while: "settle" is a phase
# between the two, and two of pwapp's per-second lines after it say that
# pwapp has left "before".
seconds() { grep -c '^t=' "$TMP/out"; }
echo "busy settle" >"$M"
n=$(seconds)
# Up to a minute: a starved pwapp (a nice-19 run beside a VM took over 10 s) must not have the eviction
# below land in its "before".
for _ in $(seq 600); do [ "$(seconds)" -ge $((n + 2)) ] && break; sleep 0.1; done
if [ "$(seconds)" -lt $((n + 2)) ]; then
        echo "Bail out! pwapp wrote no two per-second lines in 60 s: this machine starves it"
        exit 1
fi
echo "busy during" >"$M"
sleep 0.3
kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null
LOCKER=
dd if="$F" iflag=nocache count=0 status=none # POSIX_FADV_DONTNEED on the whole file (GNU dd)
sleep 1.2
echo stop >"$M"
wait_app
echo "$OUT" | grep '^phase=' | sed 's/^/# /'

expect_status 0 "pwapp exits 0 on stop"
expect_eq "one line per phase, in the order they came" "$(echo "$OUT" | grep '^phase=' | cut -d' ' -f1 | tr '\n' ' ')" \
        "phase=before phase=settle phase=during "
bad=$(echo "$OUT" | grep '^phase=' |
        grep -Ev '^phase=[a-z]+ ops=[0-9]+ p50_us=[0-9]+ p99_us=[0-9]+ p999_us=[0-9]+ max_us=[0-9]+ misses=-?[0-9]+ majflt=[0-9]+ windows=[0-9]+ rate_p1=[0-9]+\.[0-9] rate_mean=[0-9]+\.[0-9]$')
expect_empty "$bad" "each phase line: operations, integer percentiles and maximum, misses, major faults, 100 ms windows"
# "before" lasted 1.5 s or more: 15 windows of 100 ms at most, give or take the one the phase began in;
# their rates are operations per second (one every 2 ms plus the operation: at most 500/s).
s=0
w=$(field before windows)
{ [ "$w" -ge 8 ] && [ "$w" -le $((10 * $(echo "$OUT" | grep -c '^t=') + 10)) ]; } 2>/dev/null || s=1
ok $s "before: its 100 ms windows are counted ($w)"
s=0
awk -v p1="$(field before rate_p1)" -v m="$(field before rate_mean)" 'BEGIN { exit !(p1 <= m && m > 0 && m <= 500) }' || s=1
ok $s "before: the worst 1% window's rate <= the mean rate <= 500 ops/s ($(field before rate_p1) <= $(field before rate_mean))"
# The mean window rate is the phase's own: its operations over its windows' time (the windows cover the phase but for
# a part of one window at each end).
s=0
awk -v m="$(field before rate_mean)" -v n="$(field before ops)" -v w="$w" 'BEGIN { r = n / (w / 10); exit !(m > 0.7 * r && m < 1.3 * r) }' || s=1
ok $s "before: the mean window rate agrees with its operations over its windows ($(field before rate_mean) ~ $(field before ops) / $w windows of 0.1 s)"
for p in before during; do
        s=0
        [ "$(field $p ops)" -gt 0 ] 2>/dev/null || s=1
        ok $s "$p: operations counted ($(field $p ops))"
        s=0
        { [ "$(field $p p50_us)" -le "$(field $p p99_us)" ] && [ "$(field $p p99_us)" -le "$(field $p p999_us)" ] &&
                [ "$(field $p p999_us)" -le "$(field $p max_us)" ]; } 2>/dev/null || s=1
        ok $s "$p: p50 <= p99 <= p999 <= max ($(field $p p50_us) $(field $p p99_us) $(field $p p999_us) $(field $p max_us))"
done

case "$ERR" in
*RWF_NOWAIT*)
        skip_or_fail "misses counted" "no RWF_NOWAIT for $(stat -f -c %T "$DATA") here: $ERR"
        expect_eq "without RWF_NOWAIT the misses are unknown" "$(field during misses)" -1
        ;;
*)
        expect_empty "$ERR" "nothing on stderr"
        expect_eq "before: no miss, the file was read at start" "$(field before misses)" 0
        s=0
        [ "$(field during misses)" -gt 0 ] 2>/dev/null || s=1
        ok $s "during: the evicted pages' misses are counted ($(field during misses) of $(field during ops))"
        # The blocking read is part of the operation: most of "during" are
        # misses, which go to the disk, and "before" are page-cache hits.
        s=0
        [ "$(field during p50_us)" -gt "$(field before p50_us)" ] 2>/dev/null || s=1
        ok $s "during: the misses' reads are in the operation times (p50 $(field before p50_us) -> $(field during p50_us) us)"
        ;;
esac

# The per-second lines as tests/bench/compare and report parse them, the
# new figures after.
sec=$(echo "$OUT" | grep '^t=')
expect_eq "the first line says it is ready" "$(echo "$OUT" | head -1)" "ready anon_mib=4 file_mib=16"
s=0
[ "$(echo "$sec" | wc -l)" -ge 2 ] || s=1
ok $s "a line each second ($(echo "$sec" | wc -l))"
bad=$(echo "$sec" | grep -Ev '^t=[0-9]+ mode=busy ops=[1-9][0-9]* misses=-?[0-9]+ majflt=[0-9]+ p99_us=[0-9]+$')
expect_empty "$bad" "each second: t=N mode=busy ops=N, then misses=, majflt=, p99_us="
expect_eq "seconds counted from 1" "$(echo "$sec" | cut -d' ' -f1 | head -2 | tr '\n' ' ')" "t=1 t=2 "
per_second=$(echo "$sec" | awk -F'ops=' '{ s += $2 } END { print s + 0 }')
per_phase=$(echo "$OUT" | awk -F'ops=' '/^phase=/ { s += $2 } END { print s + 0 }')
s=0
[ "$per_second" -le "$per_phase" ] || s=1
ok $s "the phases count every operation of the seconds reported ($per_second <= $per_phase)"

# SIGTERM ends a run as stop does; a phase without operations, or without a
# label in the mode file, is "-".
echo idle >"$M"
start_app
sleep 0.3
kill -TERM "$APP_PID"
wait_app
expect_status 0 "pwapp exits 0 on SIGTERM"
expect_eq "and prints its phase: no label is \"-\", no operation \"-\" figures" "$(echo "$OUT" | grep '^phase=')" \
        "phase=- ops=0 p50_us=- p99_us=- p999_us=- max_us=- misses=0 majflt=0 windows=0 rate_p1=- rate_mean=-"

# PWAPP_LOG: each operation also appends 4 KiB to the log and fdatasync()s it: the log holds exactly as many
# pages as operations were counted.
echo "busy before" >"$M"
PWAPP_LOG=$DATA/app.log start_app
sleep 1
echo stop >"$M"
wait_app
expect_status 0 "pwapp with PWAPP_LOG exits 0 on stop"
n=$(field before ops)
expect_eq "PWAPP_LOG: 4 KiB written for each of its $n operations" "$(stat -c %s "$DATA/app.log")" $((n * 4096))
run env PWAPP_LOG=/nonexistent/dir/app.log "$APP" 4 "$F" "$M"
expect_status 1 "a PWAPP_LOG that cannot be opened is refused"
expect_in "$ERR" "pwapp: PWAPP_LOG /nonexistent/dir/app.log: No such file or directory" "and says why"

run env PWAPP_PASSES=9 "$APP" 4 "$F" "$M"
expect_status 2 "PWAPP_PASSES out of 1 to 4 is refused"
expect_in "$ERR" "PWAPP_PASSES must be 1 to 4" "and says why"
done_testing
