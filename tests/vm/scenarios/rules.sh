#!/bin/sh
# Placement by rule on cgroupfs: the daemon places bulk work its policy names
# (exe:, cmdline: with under:), started before it or after it, never a
# protected application's process nor one the rules do not name; a job says
# which rule placed it, and a restarted daemon adopts it.  Figures: how much a
# matched writer writes before it is inside its job, and how long placement
# takes from the exec.  Waits poll for what they wait for (a process's exec,
# the daemon's log line), with limits far above an idle run's time.
. /lib.sh
# execed PID...: every PID runs pwload or the backup tool (its exec is done,
# not the shell that starts it)
execed() {
	for _p; do
		case $(readlink /proc/$_p/exe) in */pwload | */backup-tool) ;; *) return 1 ;; esac
	done
}
S=$CG/pagewarden.slice
CONF=/etc/pw/pagewarden.yaml
TOOL=/usr/local/bin/backup-tool
mkdir -p /etc/pw/policies.d /usr/local/bin $PW_DATA_MNT/out
cp "$(command -v pwload)" $TOOL
printf 'log_level: debug\n' >$CONF
cat >/etc/pw/policies.d/10-rules.yaml <<YAML
jobs:
  backup:
    memory: {high: 64M}
    match:
      exe: [$TOOL]
  copy:
    match:
      cmdline: ["pwload sleep 424*"]
      under: [/srv/jobs]
protect:
  app:
    cgroup: /app
YAML
mkdir -p $CG/srv/jobs $CG/app
in_cgroup() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }
start_daemon() {
	pagewardend --config $CONF 2>>/tmp/daemon.log &
	DAEMON=$!
	wait_daemon
}
# wait_placed PID: until PID is in a job (at most 30 s)
placed() { case $(in_cgroup "$1") in /pagewarden.slice/*) return 0 ;; esac; return 1; }
wait_placed() { wait_for 30 placed "$1"; }

# Before the daemon: a matching program already running is placed at start.
$TOOL sleep 300 &
EARLY=$!
sh -c "echo \$\$ >$CG/srv/jobs/cgroup.procs; exec pwload sleep 4242" &
UNDER=$!
pwload sleep 4242 &
OUTSIDE=$!
sh -c "echo \$\$ >$CG/app/cgroup.procs; exec $TOOL sleep 300" &
APP=$!
wait_for 30 execed $EARLY $UNDER $OUTSIDE $APP
start_daemon
check "the daemon starts with match: rules" pw_answers
check "a matching program that ran before the daemon is placed at start" wait_placed $EARLY
expect_eq "in a job of its class" "$(in_cgroup $EARLY | cut -d/ -f3)" backup
check "a cmdline rule with under: places the process below /srv/jobs" wait_placed $UNDER
expect_eq "in a job of class copy" "$(in_cgroup $UNDER | cut -d/ -f3)" copy
expect_eq "the same command line elsewhere is left alone" "$(in_cgroup $OUTSIDE)" /
expect_eq "a protected application's matching process is never moved" "$(in_cgroup $APP)" /app
json=$(pagewardenctl status --json)
by=$(echo "$json" | jq -r ".jobs[] | select(.cgroup == \"$(in_cgroup $EARLY)\") | .placed_by")
expect_eq "status says which rule of which file placed it" "$by" "rule exe $TOOL (10-rules.yaml:5)"
expect_eq "the job is named after the program" "$(echo "$json" | jq -r ".jobs[] | select(.cgroup == \"$(in_cgroup $EARLY)\") | .name")" backup-tool

# After the daemon: an unwrapped program started from a shell.
$TOOL write $PW_DATA_MNT/out/big 192 >/tmp/w.out &
W=$!
check "a matching program started from a shell is placed" wait_placed $W
peak=0
while kill -0 $W 2>/dev/null; do
	c=$(cat $S/backup/memory.current)
	[ "$c" -gt "$peak" ] && peak=$c
	sleep 0.1
done
diag "the class's memory.current peaked at $((peak >> 20)) MiB while the job wrote 192 MiB"
expect_le "and the class's memory.high binds it (MiB)" "$((peak >> 20))" 72
pwload sleep 4242 &
LATE=$!
sleep 0.5
expect_eq "a non-matching process is left alone" "$(in_cgroup $LATE)" /
kill $LATE $OUTSIDE

# How much a matched writer gets out before it is inside its job, and how soon.
check "exec permission events are used for exe: rules" grep -q "held at their exec until placed" /tmp/daemon.log
n=0
: >/tmp/escape
while [ $n -lt 20 ]; do
	$TOOL escape /tmp/escape.out >>/tmp/escape
	n=$((n + 1))
done
rm -f /tmp/escape.out
placed=$(grep -c 'usec=[0-9]' /tmp/escape)
expect_eq "all 20 matched writers were placed" "$placed" 20
# exe: rules are held by exec permission events: placed before the first instruction.
expect_eq "none wrote a byte outside its job" "$(grep -vc '^escaped=0 ' /tmp/escape)" 0
sort -t= -k2 -n /tmp/escape >/dev/null
diag "escape before placement (bytes): $(sed 's/escaped=\([0-9]*\).*/\1/' /tmp/escape | sort -n | awk '{ a[NR] = $1 } END { printf "median %d, max %d", a[int((NR + 1) / 2)], a[NR] }')"
diag "exec to inside the job (us): $(sed 's/.*usec=//' /tmp/escape | sort -n | awk '{ a[NR] = $1 } END { printf "median %d, max %d", a[int((NR + 1) / 2)], a[NR] }')"

# An upgrade replaces the program (written beside it, renamed over it): still held at its exec.
cp "$(command -v pwload)" /usr/local/bin/.backup-tool.new
mv /usr/local/bin/.backup-tool.new $TOOL
wait_for 30 grep -q "was installed or replaced" /tmp/daemon.log
$TOOL escape /tmp/escape.out >/tmp/escape2
expect_eq "after an upgrade the program is still placed before its first write" "$(sed 's/ .*//' /tmp/escape2)" escaped=0
check "the daemon said it marked the new file" grep -q "was installed or replaced" /tmp/daemon.log
rm -f /tmp/escape.out

# Lost events: the daemon stopped while its socket overflows; a matching
# process started then is found by the rescan that follows.  The daemon's
# socket filter keeps only exec events (a rename or fork flood never reaches
# it), so the flood is of execs: two chains of busybox's static shell, each
# exec'ing the next with no fork (the cheapest exec there is), 3,000 links a
# round until the kernel drops messages for the connector's socket (the Drops
# column of /proc/net/netlink; protocol 11 is NETLINK_CONNECTOR).
connector_drops() { awk '$2 == 11 { n += $9 } END { print n + 0 }' /proc/net/netlink; }
EXEC_CHAIN='[ "$1" -le 0 ] || exec sh -c "$0" "$0" $(($1 - 1))'
kill -STOP $DAEMON
drops0=$(connector_drops)
t0=$(uptime_ms)
t_end=$((t0 + 200000))
execs=0
while [ "$(uptime_ms)" -lt $t_end ] && [ "$(connector_drops)" -le "$drops0" ]; do
	sh -c "$EXEC_CHAIN" "$EXEC_CHAIN" 3000 &
	sh -c "$EXEC_CHAIN" "$EXEC_CHAIN" 3000
	wait $!
	execs=$((execs + 6000))
done
drops=$(($(connector_drops) - drops0))
diag "while the daemon was stopped: $execs execs in $((($(uptime_ms) - t0) / 1000)) s, $drops connector messages dropped"
expect_eq "the flood overflowed the daemon's connector socket" "$([ $drops -gt 0 ] && echo yes)" yes
sh -c "echo \$\$ >$CG/srv/jobs/cgroup.procs; exec pwload sleep 4243" &
LOST=$!
wait_for 30 execed $LOST # its exec event comes while the daemon is stopped
kill -CONT $DAEMON
check "a process whose exec event was lost is placed by the rescan" wait_placed $LOST
check "and the daemon said events were lost" grep -q "exec events were lost" /tmp/daemon.log
kill $LOST

# kill -9 and a restart: the rule-placed job is adopted, its origin kept
# (a job placed just now: nothing above may have ended the early ones).
$TOOL sleep 300 &
ADOPT=$!
wait_placed $ADOPT
adopt_cg=$(in_cgroup $ADOPT)
kill -9 $DAEMON
wait $DAEMON 2>/dev/null
start_daemon
json=$(pagewardenctl status --json)
expect_eq "a rule-placed job is adopted after kill -9" "$(echo "$json" | jq -r ".jobs[] | select(.cgroup == \"$(in_cgroup $ADOPT)\") | .placed_by")" "rule exe $TOOL (10-rules.yaml:5)"
expect_eq "and not placed twice: it stayed in its slot" "$(in_cgroup $ADOPT)" "$adopt_cg"
expect_eq "which one job holds" "$(echo "$json" | jq "[.jobs[] | select(.cgroup == \"$adopt_cg\")] | length")" 1

# A reload that drops the rule: running jobs stay, new programs are not placed.
sed -i '4,5d' /etc/pw/policies.d/10-rules.yaml
pagewardenctl reload >/dev/null
expect_eq "a reload without the exe rule succeeds" "$?" 0
$TOOL sleep 300 &
NEW=$!
wait_for 30 execed $NEW
sleep 0.5 # time to place it, were it placed
expect_eq "then a new run of the program is left alone" "$(in_cgroup $NEW)" /
kill $NEW $EARLY $ADOPT $UNDER $APP 2>/dev/null

kill -TERM $DAEMON
wait $DAEMON
expect_eq "the daemon stops cleanly" "$?" 0
grep -E '<[0-3]>' /tmp/daemon.log | head -20 | sed 's/^/# daemon: /'
[ "$T_FAILED" -eq 0 ] || tail -40 /tmp/daemon.log | sed 's/^/# daemon: /'
done_testing
