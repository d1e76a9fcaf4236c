#!/bin/sh
# Benchmark, not a test: the idle daemon's cost.  A class, a protect entry
# (min: auto, so the governor's triggers are armed), one short job placed and
# gone; then nothing runs for PW_IDLE_SECONDS (default 600) and the daemon's
# wake-ups (every thread's /proc/PID/task/TID/schedstat) and CPU time (utime + stime) are printed.
# Observation runs while something is protected: a second phase as long
# without the protect entry (observation off) says what it costs idle.
. /lib.sh
SECONDS_IDLE=${PW_IDLE_SECONDS:-600}
CONF=/etc/pw/pagewarden.yaml
mkdir -p /etc/pw/policies.d $CG/apps/app
echo "+memory +io +cpu" >$CG/cgroup.subtree_control
echo +memory >$CG/apps/cgroup.subtree_control
printf 'log_level: info\n' >$CONF
cat >/etc/pw/policies.d/policy.yaml <<YAML
jobs:
  backup:
    memory: {high: 50%}
protect:
  app:
    cgroup: /apps/app
    memory: {min: auto}
YAML
sh -c "echo \$\$ >$CG/apps/app/cgroup.procs; exec sleep 100000" &
pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
check "a job runs and ends" pagewardenctl run --job backup -- true
sleep 2
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
# measure WHAT: the daemon's wake-ups and CPU over SECONDS_IDLE of idleness
measure() {
	s0=$(wakeups $DAEMON)
	r0=$(oncpu_us $DAEMON)
	c0=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
	o0=$(pagewardenctl status --json | jq '.observation.cpu_us // 0')
	sleep "$SECONDS_IDLE"
	s1=$(wakeups $DAEMON)
	r1=$(oncpu_us $DAEMON)
	c1=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
	o1=$(pagewardenctl status --json | jq '.observation.cpu_us // 0')
	diag "idle daemon, $1 ($(ls /proc/$DAEMON/task | wc -l) threads) over $SECONDS_IDLE s: $((s1 - s0)) wake-ups," \
		"$((c1 - c0)) clock ticks of CPU (1 tick = $((1000 / tck)) ms), $((r1 - r0)) us on CPU (schedstat)," \
		"of which observation $((o1 - o0)) us"
}
measure "something protected (observation on)"
printf 'jobs:\n  backup:\n    memory: {high: 50%%}\n' >/etc/pw/policies.d/policy.yaml
check "a reload without the protect entry" pagewardenctl reload
expect_eq "observation is off" "$(pagewardenctl status --json | jq .observation.on)" false
measure "nothing protected (observation off)"
check "the daemon is still running" kill -0 $DAEMON
kill -TERM $DAEMON
wait $DAEMON
done_testing
