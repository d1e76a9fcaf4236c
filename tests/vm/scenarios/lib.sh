# shellcheck shell=sh
# TAP helpers for the guest scenarios (busybox sh).  Source with ". /lib.sh".
CG=/sys/fs/cgroup
# The scenario has started: vm-run boots a guest once more when it dies
# before this line (a kernel or shell that never got this far), never after.
echo "# pw-vm: scenario started at guest uptime $(cut -d' ' -f1 /proc/uptime) s"
T_N=0
T_FAILED=0
# Where a scenario's time goes (CI has a time budget): the guest uptime in
# centiseconds at each test, and the gaps before each, for done_testing's
# summary (t_mark end: the gap after the last test).  Builtins only: no fork
# per test.
t_mark() {
	read -r _up _ </proc/uptime
	_c=${_up%.*}${_up#*.}
	[ -z "${T_LAST:-}" ] || T_GAPS="${T_GAPS:-}$((_c - T_LAST)) ${1:-$T_N}
"
	T_LAST=$_c
}
t_mark

ok() { T_N=$((T_N + 1)); t_mark; echo "ok $T_N - $*"; }
not_ok() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); t_mark; echo "not ok $T_N - $*"; }
diag() { echo "# $*"; }
# check DESCRIPTION COMMAND...
check() {
	_d=$1
	shift
	if "$@"; then ok "$_d"; else not_ok "$_d"; fi
}
# expect_eq DESCRIPTION GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got '$2', want '$3'"; fi
}
# expect_between DESCRIPTION VALUE LOW HIGH (integers or decimals, via awk)
expect_between() {
	if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
		ok "$1 ($2 in [$3, $4])"
	else
		not_ok "$1: $2 not in [$3, $4]"
	fi
}
# expect_ge DESCRIPTION VALUE MIN
expect_ge() {
	if awk -v v="$2" -v m="$3" 'BEGIN { exit !(v >= m) }'; then ok "$1 ($2 >= $3)"; else not_ok "$1: $2 < $3"; fi
}
expect_le() {
	if awk -v v="$2" -v m="$3" 'BEGIN { exit !(v <= m) }'; then ok "$1 ($2 <= $3)"; else not_ok "$1: $2 > $3"; fi
}
# keyed FILE KEY: the value of KEY in a "key value" file
keyed() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
# kv TEXT KEY: the value of key=value in a line of text
kv() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2; exit }'; }
done_testing() {
	t_mark end
	printf '%s' "${T_GAPS:-}" | sort -rn | head -n 5 | awk -v all="${T_GAPS:-}" '
		BEGIN { n = split(all, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, " "); s += f[1] } }
		{ w = w sprintf("%s%.1f s before %s", NR > 1 ? ", " : "", $1 / 100, $2 == "end" ? "the end" : "test " $2) }
		END { printf "# time: %.1f s from the scenario'"'"'s start to its end; the longest: %s\n", s / 100, w }'
	echo "1..$T_N"
	[ "$T_FAILED" -eq 0 ]
}
# wakeups PID / oncpu_us PID: context switches and CPU time (ns -> us) of
# every thread of a process, from /proc/PID/task/*/schedstat.
wakeups() { cat /proc/$1/task/*/schedstat | awk '{ n += $3 } END { printf "%d", n }'; }
oncpu_us() { cat /proc/$1/task/*/schedstat | awk '{ n += $1 } END { printf "%d", n / 1000 }'; }
# pw_answers [TIMEOUT-CMD...]: the daemon answers status, whether all is in
# force (exit 0) or not (exit 4: say, a protected application not there yet).
pw_answers() {
	"$@" pagewardenctl status >/dev/null 2>&1
	_s=$?
	[ $_s -eq 0 ] || [ $_s -eq 4 ]
}
# wait_daemon: until the daemon answers on its socket (at most 30 s: a
# sanitizer build on a loaded machine starts slowly; an idle one in 0.5 s).
wait_daemon() {
	_i=0
	while [ $_i -lt 300 ] && ! pw_answers; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
# uptime_ms: the guest's uptime in milliseconds (10 ms resolution)
uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds, polled every 0.1 s for
# at most SECONDS of guest uptime; fails if it never did.
wait_for() {
	_wf_end=$(($(uptime_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(uptime_ms)" -lt "$_wf_end" ] || return 1
		sleep 0.1
	done
}
# unit_is UNIT STATE / unit_is_not UNIT STATE: systemctl is-active says STATE / something else
unit_is() { [ "$(systemctl is-active "$1")" = "$2" ]; }
unit_is_not() { [ "$(systemctl is-active "$1")" != "$2" ]; }

