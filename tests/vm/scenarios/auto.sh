#!/bin/sh
# "auto" protection on a big cgroup with a small hot set: the application's
# cgroup is charged with ~75% of the RAM, most of it a file it read once (as
# a database's is after days of uptime), and its hot set is ~20% of the RAM.
# pagewarden's min: auto must protect the hot set and not the file read
# once, keep it through a backup, and never take the reserve; with a reserve
# that leaves too little, status must say what the application needs, what
# it gets and why.  On the classic LRU (6.1): the estimate is the kernel's
# active lists, which the multi-generational LRU does not keep for read pages.
. /lib.sh
MIB=1048576
APPCG=$CG/apps/app
CONF=/etc/pw/pagewarden.yaml
RAM_MIB=$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo)
HOT_ANON=$((RAM_MIB / 10))
HOT_FILE=$((RAM_MIB / 10))
COLD=$((RAM_MIB * 55 / 100))
BIG=$((RAM_MIB * 2))
diag "RAM $RAM_MIB MiB: hot set $HOT_ANON MiB anonymous + $HOT_FILE MiB file, $COLD MiB read once; backup $BIG MiB"

mkdir -p $CG/apps $APPCG /etc/pw/policies.d
echo "+memory +io" >$CG/cgroup.subtree_control
echo +memory >$CG/apps/cgroup.subtree_control
printf 'restore_on_stop: true\nlog_level: info\n' >$CONF
cat >/etc/pw/policies.d/policy.yaml <<YAML
jobs:
  backup:
    memory: {high: 25%}
protect:
  app:
    cgroup: /apps/app
    memory: {min: auto}
YAML
chmod 0644 $CONF /etc/pw/policies.d/policy.yaml

pwload write "$PW_DATA_MNT/app.dat" $HOT_FILE >/dev/null
pwload write "$PW_DATA_MNT/cold.dat" $COLD >/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
oom0=$(keyed /proc/vmstat oom_kill)
# The file read once, charged to the application's cgroup; then the application and its hot set.
sh -c "echo \$\$ >$APPCG/cgroup.procs; exec pwload read $PW_DATA_MNT/cold.dat" >/dev/null
echo "busy before" >/tmp/mode
# Its hot set is what it has been using: its file read twice, on the kernel's active list.
export PWAPP_PASSES=2
sh -c "echo \$\$ >$APPCG/cgroup.procs; exec pwapp $HOT_ANON $PW_DATA_MNT/app.dat /tmp/mode" >/tmp/app.log &
APP=$!
wait_for 60 grep -q ready /tmp/app.log
resident_kib() { pwload resident "$PW_DATA_MNT/$1" | sed 's/^resident_kib=\([0-9]*\) .*/\1/'; }
charged=$(($(cat $APPCG/memory.current) / MIB))
hot=$((HOT_ANON + HOT_FILE))
diag "the application's cgroup: $charged MiB charged, memory.stat: $(grep -E '^(anon|file|active_file|inactive_file) ' $APPCG/memory.stat | tr '\n' ' ')"
expect_ge "its cgroup holds the file read once besides its hot set (MiB)" "$charged" $((hot + COLD * 9 / 10))

pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
hot_kib0=$(resident_kib app.dat)
echo "light during" >/tmp/mode
pagewardenctl run --job backup --name nightly -- sh -c "pwload write $PW_DATA_MNT/big.dat $BIG && sleep 3" >/dev/null &
JOB=$!
# The first sample sizes "auto" as the job starts.
wait_for 30 sh -c "[ \$(cat $APPCG/memory.min) -gt 0 ]"
min=$(($(cat $APPCG/memory.min) / MIB))
json=$(pagewardenctl status --json)
diag "memory.min $min MiB; status: $(echo "$json" | jq -c '.protected[0].auto')"
expect_ge "auto protects the hot set (memory.min, MiB)" "$min" $((hot * 9 / 10))
expect_le "and not the file read once (memory.min, MiB)" "$min" $((hot + COLD / 4))
expect_eq "status: estimated from its working set" "$(echo "$json" | jq -r '.protected[0].auto.source')" \
	"working set: anonymous + active file"
expect_eq "status: it gets what it needs" "$(echo "$json" | jq '.protected[0].auto | .gets == .needs')" true
expect_eq "status: the reserve, a tenth of RAM, at least 64 MiB" "$(echo "$json" | jq '.protected[0].auto.reserve')" \
	"$(awk -v r="$RAM_MIB" 'BEGIN { v = int(r * 1048576 / 10); m = 64 * 1048576; printf "%d", (v > m ? v : m) }')"
out=$(pagewardenctl status)
case "$out" in
*"auto app: needs "*"estimated from: working set"*) ok "status says what auto estimates and from what" ;;
*) not_ok "status says what auto estimates and from what: $out" ;;
esac
wait $JOB
expect_eq "the job ran" $? 0
hot_kib1=$(resident_kib app.dat)
expect_ge "the hot file stayed in the page cache (% of before)" $((hot_kib1 * 100 / hot_kib0)) 95
expect_eq "no process was OOM-killed" $(($(keyed /proc/vmstat oom_kill) - oom0)) 0
wait_for 30 sh -c "[ \$(cat $APPCG/memory.min) -eq 0 ]"
expect_eq "auto is withdrawn when the job has ended" "$(cat $APPCG/memory.min)" 0

# A reserve that leaves less than the hot set: the application gets a share, and status says so.
printf 'restore_on_stop: true\nlog_level: info\nreserve: %dM\n' $((RAM_MIB - hot / 2 - 64)) >$CONF
kill -TERM $DAEMON
wait $DAEMON
pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
pagewardenctl run --job backup --name short -- sleep 6 >/dev/null &
JOB=$!
wait_for 30 sh -c "[ \$(cat $APPCG/memory.min) -gt 0 ]"
json=$(pagewardenctl status --json)
diag "status: $(echo "$json" | jq -c '.protected[0].auto')"
expect_eq "gets less than it needs" "$(echo "$json" | jq '.protected[0].auto | .gets < .needs')" true
expect_le "what it gets leaves the reserve and the job's floor (MiB)" \
	"$(($(cat $APPCG/memory.min) / MIB))" $((hot / 2 + 1))
expect_eq "the log says why" \
	"$(echo "$json" | jq '[.actions[].message | select(test("of the .* it needs while jobs run .*the reserve"))] | length')" 1
out=$(pagewardenctl status)
case "$out" in
*"auto app: needs "*", gets "*"(reserve "*) ok "status says it gets less, and why" ;;
*) not_ok "status says it gets less, and why: $out" ;;
esac
wait $JOB
kill -TERM $DAEMON
wait $DAEMON
echo stop >/tmp/mode
wait $APP
grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" /tmp/daemon.log | head -5 | sed 's/^/# daemon: /'
expect_eq "no sanitizer report in the daemon's log" "$(grep -cE "ERROR: (Address|Leak)Sanitizer|runtime error:" /tmp/daemon.log)" 0
done_testing
