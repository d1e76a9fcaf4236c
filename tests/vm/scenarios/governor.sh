#!/bin/sh
# The pressure governor against the original measurement: an application
# keeps ~60% of the RAM in anonymous memory and cached file data, touched at
# random now and then; a backup writes three times the RAM and reads it back.
# Twice: the application busy during the backup, and idle during it and busy
# afterwards (the "slow next morning" case).  Each without any protection,
# then with pagewarden, whose policy names the application (min: auto) but
# gives no size, and gives the backup class half of the RAM.
. /lib.sh
MIB=1048576
APPCG=$CG/apps/app
CONF=/etc/pw/pagewarden.yaml
BACKUP="pwload write $PW_DATA_MNT/big.dat 3072 && pwload read $PW_DATA_MNT/big.dat"

mkdir -p /etc/pw/policies.d $CG/apps $CG/plain
printf 'restore_on_stop: true\nlog_level: info\n' >$CONF
cat >/etc/pw/policies.d/policy.yaml <<YAML
jobs:
  backup:
    memory: {high: 50%}
protect:
  app:
    cgroup: /apps/app
    memory: {min: auto}
YAML
echo "+memory +io +cpu" >$CG/cgroup.subtree_control
echo +memory >$CG/apps/cgroup.subtree_control
pwload write "$PW_DATA_MNT/app.dat" 250 >/dev/null
sync

avg_ops() { # avg_ops FROM_LINE TO_LINE: mean ops/s over those report lines of the application
	sed -n "$1,$2p" /tmp/app.log | awk -F'ops=' '/ops=/ { s += $2; n++ } END { printf "%d", n ? s / n : 0 }'
}
lines() { wc -l </tmp/app.log; }

run_case() { # run_case busy|idle off|on
	mode=$1 prot=$2
	rmdir $APPCG 2>/dev/null
	mkdir $APPCG
	if [ "$prot" = on ]; then
		pagewardend --config $CONF 2>>/tmp/daemon.log &
		DAEMON=$!
		i=0
		while [ $i -lt 50 ] && ! pagewardenctl status >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo busy >/tmp/mode
	rm -f /tmp/app.log # or the wait below could see the last run's "ready"
	sh -c "echo \$\$ >$APPCG/cgroup.procs; exec pwapp 350 $PW_DATA_MNT/app.dat /tmp/mode" >/tmp/app.log &
	APP=$!
	while ! grep -q ready /tmp/app.log; do sleep 0.2; done
	sleep 7
	l0=$(lines)
	before=$(avg_ops $((l0 - 4)) "$l0")
	file0=$(keyed $APPCG/memory.stat file)
	anon0=$(keyed $APPCG/memory.stat anon)
	swap0=$(cat $APPCG/memory.swap.current)
	[ "$mode" = idle ] && echo idle >/tmp/mode
	t0=$(date +%s)
	if [ "$prot" = on ]; then
		pagewardenctl run --job backup --name nightly -- sh -c "$BACKUP" >/dev/null
	else
		sh -c "echo \$\$ >$CG/plain/cgroup.procs; $BACKUP" >/dev/null
	fi
	elapsed=$(($(date +%s) - t0))
	l1=$(lines)
	during=$(avg_ops $((l0 + 1)) "$l1")
	file1=$(keyed $APPCG/memory.stat file)
	swap1=$(cat $APPCG/memory.swap.current)
	echo busy >/tmp/mode
	sleep 6
	l2=$(lines)
	after=$(avg_ops $((l1 + 1)) $((l1 + 5)))
	rm -f "$PW_DATA_MNT/big.dat"
	[ -n "${DEBUG:-}" ] && sed -n "1,$((l0 + 2))p" /tmp/app.log | sed "s/^/# app: /"
	KEPT=$((file1 * 100 / file0))
	SWAPPED=$(((swap1 - swap0) * 100 / anon0))
	if [ "$mode" = busy ]; then dpct=$((during * 100 / (before ? before : 1)))%; else dpct="idle"; fi
	diag "$mode, pagewarden $prot: cached file data kept $KEPT% ($((file0 / MIB)) -> $((file1 / MIB)) MiB), anon swapped out $SWAPPED% of $((anon0 / MIB)) MiB; ops/s before $before, during $dpct, first 5 s after $((after * 100 / (before ? before : 1)))%; backup $elapsed s"
	if [ "$prot" = on ]; then
		json=$(pagewardenctl status --json)
		ACTED=$(echo "$json" | jq '.governor.actions')
		LAT=$(echo "$json" | jq -c '.governor.reaction_latency')
		diag "governor: $ACTED actions; reaction latency $LAT"
		echo "$json" | jq -r '.actions[].message' | grep Governor | head -8 | sed 's/^/#   /'
		kill -TERM $DAEMON
		wait $DAEMON
	fi
	echo stop >/tmp/mode
	wait $APP
}

for mode in ${MODES:-idle busy}; do
	run_case $mode off
	expect_eq "$mode without protection: the application loses pages (the scenario is evidence)" \
		"$([ $KEPT -lt 50 ] || [ $SWAPPED -ge 5 ] && echo yes)" yes
	run_case $mode on
	expect_ge "$mode with pagewarden: at least 90% of the cached file data kept (%)" "$KEPT" 90
	expect_le "$mode with pagewarden: under 5% of the anonymous memory swapped out (%)" "$SWAPPED" 4
	expect_ge "$mode with pagewarden: the governor acted" "$ACTED" 1
done
expect_eq "the original protection is restored after the daemon stopped" "$(cat $APPCG/memory.min)" 0

# Idle cost: no job runs; over 60 s the daemon should not wake up more than once a minute.
pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
sleep 2
pagewardenctl run --job backup -- true
sleep 1
s0=$(awk '{ print $3 }' /proc/$DAEMON/schedstat)
c0=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
sleep 60
s1=$(awk '{ print $3 }' /proc/$DAEMON/schedstat)
c1=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)
diag "idle daemon over 60 s: $((s1 - s0)) wake-ups, $((c1 - c0)) clock ticks of CPU"
expect_le "the idle daemon wakes up at most once in 60 s" $((s1 - s0)) 1
kill -TERM $DAEMON
wait $DAEMON
grep -E '<[0-3]>' /tmp/daemon.log | head -10 | sed 's/^/# daemon: /'
done_testing
