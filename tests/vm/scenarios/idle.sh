#!/bin/sh
# Benchmark, not a test: the idle daemon's cost.  A class, a protect entry
# (min: auto, so the governor's triggers are armed), one short job placed and
# gone; then nothing runs for PW_IDLE_SECONDS (default 600) and the daemon's
# wake-ups (every thread's /proc/PID/task/TID/schedstat) and CPU time (utime + stime) are printed.
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
s0=$(wakeups $DAEMON)
r0=$(oncpu_us $DAEMON)
c0=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
sleep "$SECONDS_IDLE"
s1=$(wakeups $DAEMON)
r1=$(oncpu_us $DAEMON)
c1=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
diag "idle daemon ($(ls /proc/$DAEMON/task | wc -l) threads) over $SECONDS_IDLE s: $((s1 - s0)) wake-ups," \
	"$((c1 - c0)) clock ticks of CPU (1 tick = $((1000 / tck)) ms), $((r1 - r0)) us on CPU (schedstat)"
check "the daemon is still running" kill -0 $DAEMON
kill -TERM $DAEMON
wait $DAEMON
done_testing
