#!/bin/sh
# Scale, figures (make bench): PW_SCALE_JOBS (2000) concurrent jobs across 20
# classes whose policy is spread over 200 files (20 with a class each, 180
# with a protected application each).  How long placing them takes, how long
# status and a reload take with them all running, the daemon's RSS, and
# nr_dying_descendants once every job has ended.
. /lib.sh
CONF=/etc/pw/pagewarden.yaml
JOBS=${PW_SCALE_JOBS:-2000}
D=/etc/pw/policies.d
S=$CG/pagewarden.slice
mkdir -p $D $CG/apps
echo "+memory +io +cpu" >$CG/cgroup.subtree_control
echo +memory >$CG/apps/cgroup.subtree_control
printf 'log_level: notice\n' >$CONF
for c in $(seq 20); do
	printf 'jobs:\n  class%d:\n    memory: {high: %dM}\n    under_pressure: {memory_high_floor: 16M}\n' \
		"$c" $((64 + c)) >$D/$(printf %03d "$c")-class.yaml
done
for a in $(seq 21 200); do
	mkdir -p $CG/apps/app$a
	printf 'protect:\n  app%d:\n    cgroup: /apps/app%d\n    memory: {min: 1M}\n' "$a" "$a" >$D/$a-app.yaml
done
chmod 0644 $CONF $D/*.yaml
pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
check "the daemon runs with 200 policy files" pw_answers
# RSS: the guest's binaries are on its initramfs (tmpfs), so their pages count as shared memory, not as
# file pages as on a disk: the anonymous part is the daemon's own.
rss() { echo "$(keyed /proc/$DAEMON/status VmRSS:) KiB (anonymous $(keyed /proc/$DAEMON/status RssAnon:) KiB)"; }
RSS0=$(rss)
expect_eq "it has 20 classes" "$(pagewardenctl status --json | jq '.classes | length')" 20

# The jobs: sleepers, each moved into a job of its own, in order of class.
i=0
c0=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
t0=$(uptime_ms)
step=$((JOBS / 10))
while [ $i -lt "$JOBS" ]; do
	i=$((i + 1))
	sleep 100000 &
	echo $! >>/tmp/sleepers
	pagewardenctl move --job class$((i % 20 + 1)) --name "s$i" $! >/dev/null || diag "move $i failed"
	# Each tenth of the moves apart, with the daemon's CPU: what grows with the jobs already there.
	if [ "$step" -gt 0 ] && [ $((i % step)) -eq 0 ]; then
		tn=$(uptime_ms) cn=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
		diag "moves $((i - step + 1))-$i: $(((tn - ${tp:-$t0}) / step)) ms each, the daemon's CPU $(((cn - ${cp:-$c0}) * 10 / step)) ms each"
		tp=$tn cp=$cn
	fi
done
t1=$(uptime_ms)
json=$(pagewardenctl status --json)
n=$(echo "$json" | jq '.jobs | length')
expect_eq "$JOBS jobs run" "$n" "$JOBS"
# The event loop's longest dispatch (status has those before the one that
# answers it): after the moves, after the status requests, after the reloads.
loop_said() { diag "event loop $1: $(echo "$2" | jq -r '.daemon.loop | "longest dispatch \(.longest_us / 1000 | floor) ms, \(.slow) of \(.dispatches) longer than 20 ms"')"; }
loop_said "after $JOBS moves" "$json"
# What the daemon spends with no request at all (the governor's ticks, observation's windows): the part
# of "the daemon's CPU" per move that is not the move's.
o0=$(echo "$json" | jq '.observation.cpu_us // 0') q0=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
sleep 20
q1=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
o1=$(pagewardenctl status --json | jq '.observation.cpu_us // 0') # after q1: a status costs its own
diag "with $JOBS jobs and no request: the daemon's CPU $(((q1 - q0) * 10 / 20)) ms a second, observation's part $(((o1 - o0) / 20000)) ms a second"
c1=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
diag "placing $JOBS jobs one pagewardenctl move at a time: $((t1 - t0)) ms ($(((t1 - t0) / JOBS)) ms each), the daemon's CPU $(((c1 - c0) * 10)) ms"
for _ in 1 2 3; do
	a=$(uptime_ms)
	pagewardenctl status >/dev/null
	b=$(uptime_ms)
	pagewardenctl status --json >/dev/null
	c=$(uptime_ms)
	diag "status with $JOBS jobs: $((b - a)) ms (table), $((c - b)) ms (--json)"
done
loop_said "after the status requests" "$(pagewardenctl status --json)"
for _ in 1 2 3; do
	a=$(uptime_ms)
	pagewardenctl reload >/dev/null
	diag "reload of 200 files with $JOBS jobs: $(($(uptime_ms) - a)) ms"
done
json=$(pagewardenctl status --json)
loop_said "after the reloads" "$json"
# The daemon's own account of each reload: where its time went.
echo "$json" | jq -r '.actions[].message | select(startswith("Reloaded"))' | while read -r line; do diag "daemon: $line"; done
diag "daemon RSS at start: $RSS0"
diag "daemon RSS with $JOBS jobs: $(rss); CPU so far $(awk '{ print $14 + $15 }' /proc/$DAEMON/stat) ticks of $(getconf CLK_TCK 2>/dev/null || echo 100)/s"
check "the daemon still answers" pw_answers

# All jobs end at once.
t0=$(uptime_ms)
kill $(cat /tmp/sleepers)
for _ in $(seq 600); do
	n=$(pagewardenctl status --json | jq '.jobs | length')
	[ "$n" = 0 ] && break
	sleep 0.2
done
expect_eq "every job has ended" "$n" 0
diag "all $JOBS jobs ended and gone from status within $(($(uptime_ms) - t0)) ms"
sleep 10
dying=$(keyed $S/cgroup.stat nr_dying_descendants)
diag "nr_dying_descendants below pagewarden.slice 10 s after the last job: $dying; live descendants: $(keyed $S/cgroup.stat nr_descendants)"
diag "daemon RSS after: $(rss)"
# Each new longest dispatch the daemon logged, with the line it logged before: what held the loop.
grep -B1 "Event loop: one dispatch took" /tmp/daemon.log | grep -v "^--" | while read -r line; do diag "daemon: $line"; done
kill -TERM $DAEMON
wait $DAEMON
done_testing
