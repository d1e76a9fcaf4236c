#!/bin/sh
# Placement by rule, figures (make bench): how soon a matched program is in
# its job after its exec, how much it writes before, and what following every
# exec of the machine costs the daemon.
. /lib.sh
CONF=/etc/pw/pagewarden.yaml
TOOL=/usr/local/bin/backup-tool
N=${PW_EXECS:-200}
RATE=${PW_EXEC_RATE:-1000}
SECONDS_=${PW_EXEC_SECONDS:-30}
mkdir -p /etc/pw/policies.d /usr/local/bin
cp "$(command -v pwload)" $TOOL
printf 'log_level: info\n' >$CONF
cat >/etc/pw/policies.d/10-rules.yaml <<YAML
jobs:
  backup:
    match:
      exe: [$TOOL, /usr/bin/borg, /usr/bin/restic, /usr/bin/pg_dump]
      cmdline: ["rsync --server *", "pg_dumpall *"]
      user: [root]
  copy:
    match:
      cmdline: ["pwload escape *"]
      user: [root]
YAML
pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
check "the daemon runs" pw_answers

# 1. N matched execs, one after the other: named by exe: (held at the exec by
# fanotify), then by cmdline: (seen by the proc connector after the exec).
stats() { sort -n | awk '{ a[NR] = $1 } END { printf "median %d, p90 %d, max %d (n=%d)", a[int((NR + 1) / 2)], a[int(NR * 0.9)], a[NR], NR }'; }
matched() { # matched WHAT PROGRAM
	: >/tmp/escape
	i=0
	while [ $i -lt "$N" ]; do
		$2 escape /tmp/escape.out >>/tmp/escape
		i=$((i + 1))
	done
	rm -f /tmp/escape.out
	expect_eq "$1: every matched program was placed" "$(grep -c 'usec=[0-9]' /tmp/escape)" "$N"
	diag "$1: from its start to its first look that finds it in its job (us): $(sed 's/.*usec=//' /tmp/escape | stats)"
	diag "$1: written before it was in its job (bytes): $(sed 's/escaped=\([0-9]*\).*/\1/' /tmp/escape | stats)"
}
matched "exe: rule" $TOOL
matched "cmdline: rule" pwload

# 2. What following the execs costs: RATE non-matching execs a second, with
# cmdline: rules (the proc connector is read) and with exe: rules alone
# (the programs are held at their exec by fanotify; the connector is closed).
ticks() { awk '{ print $14 + $15 }' /proc/$1/stat; }
hz=100
cost() { # cost WHAT
	t0=$(ticks $DAEMON)
	out=$(pwload execloop "$RATE" "$SECONDS_" /bin/true)
	t1=$(ticks $DAEMON)
	execs=$(kv "$out" execs)
	loop_us=$(kv "$out" cpu_us)
	daemon_us=$(((t1 - t0) * 1000000 / hz))
	diag "$1: $execs execs in ${SECONDS_} s ($(awk -v n=$execs -v s=$SECONDS_ 'BEGIN { printf "%d", n / s }')/s); daemon CPU ${daemon_us} us, $(awk -v d=$daemon_us -v l=$loop_us 'BEGIN { printf "%.2f", 100 * d / l }')% of the exec loop's own CPU"
}
cost "exe: and cmdline: rules"
sed -i '/cmdline:/d; /copy:/,$d' /etc/pw/policies.d/10-rules.yaml
pagewardenctl reload >/dev/null
cost "exe: rules only"
check "the daemon is still there" kill -0 $DAEMON
sleep 1
expect_eq "no exec was placed by mistake" "$(pagewardenctl status --json | jq '[.jobs[] | select(.pids > 0)] | length')" 0

kill -TERM $DAEMON
wait $DAEMON
grep -E 'lost|<[0-3]>' /tmp/daemon.log | head -5 | sed 's/^/# daemon: /'
done_testing
