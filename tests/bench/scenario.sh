#!/bin/sh
# make bench's comparison, one run in the guest (tests/bench/compare boots a
# fresh VM for each): a protected application and a backup, under one of the
# variants an operator could pick.  Figures, not pass/fail: the last line is
# "result key=value ...", and every second of the application's rate is a
# "series SECOND PHASE OPS" line (SECOND counted from the backup's start).
# The application's own view comes from pwapp's phases: its operation times
# (p50/p99/p99.9, us) and exact cache misses before (busy), during the backup
# and after it (whole seconds 2-11 after its end, busy); with its PSI "some"
# stall (memory, io, cpu: cpu is the two vCPUs' contention), its refaults and
# the lowest of its resident file and anonymous memory, each second, during
# the backup.
#
# Environment (vm-run --env):
#   BENCH_VARIANT   none none-aa swappiness0 nocache min high high-io min-high low pagewarden pagewarden-nohigh rule
#                   min: memory.min = the application's size; high: the backup's memory.high sized as an
#                   operator would for this RAM (RAM - the application - 64 MiB); high-256: the shipped
#                   class's 256M; min-high: both (pagewarden's static equivalent); low: memory.low = the
#                   application's size
#   BENCH_MODE      busy light idle (what the application does during the backup)
#   BENCH_WORKLOAD  plain (write 3x RAM, read it back), verify (read it twice),
#                   dedup (plus a 30%-of-RAM anonymous index the tool keeps busy),
#                   stall (plain, and a second protected application stalls in
#                   the backup's first 5 s under a memory.high of its own: a
#                   stall the backup does not cause, which pagewarden's governor
#                   must leave alone),
#                   smallfiles (plain's volume as a tree of 256 KiB files: where
#                   nocache can work), bighot (the application's cgroup holds
#                   ~80% of RAM, most of it a cold file read once, as a
#                   database's does after days of uptime; its hot set is 20% of
#                   RAM; a third, unprotected service with a small working set
#                   is measured beside it: svc_* figures),
#                   grow (plain, with a working set that grows during the
#                   job: the application holds 40% of RAM at the start, and 5 s
#                   into the backup a second process of it starts using 20%
#                   more, a file it reads twice: grow_* figures; the static
#                   memory.min is sized, as an operator would, to what the
#                   application used before),
#                   readonly (the backup only reads: 3x RAM of data already on
#                   the disk, read and sent elsewhere, as tar or restic to a
#                   remote repository: clean pages only),
#                   noswap (plain in a guest without swap: compare boots it
#                   with vm-run --no-swap; only file pages can be reclaimed),
#                   twoapps (two protected applications of 30% of RAM each,
#                   /apps/app and /apps/app2, both measured: app2_* figures),
#                   exceed (dedup with an index of 50% of RAM: the application
#                   and the backup's own needs exceed RAM; who pays, and no OOM),
#                   fsync (plain, and each of the application's operations also
#                   appends 4 KiB to its log and fdatasync()s it, as a database
#                   writes its log, while the backup's dirty pages flood)
#   BENCH_MGLRU     on, off, or empty (the kernel's default)
#   BENCH_LABEL     the kernel's name in the table (6.1, 6.12, 6.12-nomglru)
#   BENCH_IO_BPS    the high-io variant's io.max rbps and wbps, bytes/s (default 40 MiB/s)
#   BENCH_DISK      the storage profile vm-run throttles the disks to (ram, ssd, disk): recorded
. /lib.sh
VARIANT=${BENCH_VARIANT:-none}
MODE=${BENCH_MODE:-light}
WORKLOAD=${BENCH_WORKLOAD:-plain}
MIB=1048576
APPCG=$CG/apps/app
JOBCG=$CG/plain # where every variant but pagewarden's starts the backup
BURSTCG=$CG/apps/burst # the stall workload's second application
TOOL=/usr/local/bin/backup-tool # a copy of pwload: the rule variant names it

# The sizes follow the guest's RAM: the application's anonymous memory 36%,
# its cached file 25% (61% together), the backup three times the RAM, the
# dedup workload's index 30%.
RAM_MIB=$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo)
APP_ANON=$((RAM_MIB * 36 / 100))
APP_FILE=$((RAM_MIB / 4))
# bighot: the application's hot set (what it keeps using) is 10% + 10% of RAM, beside 60% of RAM of a file it
# read once; the third service uses 3% + 3%.
COLD=0
SVCCG=$CG/svc
if [ "$WORKLOAD" = bighot ]; then
	APP_ANON=$((RAM_MIB / 10))
	APP_FILE=$((RAM_MIB / 10))
	COLD=$((RAM_MIB * 60 / 100))
fi
# grow: 20% + 20% at the start, a file of 20% more from 5 s into the backup.
GROW=0
if [ "$WORKLOAD" = grow ]; then
	APP_ANON=$((RAM_MIB / 5))
	APP_FILE=$((RAM_MIB / 5))
	GROW=$((RAM_MIB / 5))
fi
# twoapps: each application 18% + 12%.
APP2=0
APP2CG=$CG/apps/app2
if [ "$WORKLOAD" = twoapps ]; then
	APP_ANON=$((RAM_MIB * 18 / 100))
	APP_FILE=$((RAM_MIB * 12 / 100))
	APP2=1
fi
BIG=$((RAM_MIB * 3))
INDEX=$((RAM_MIB * 30 / 100))
[ "$WORKLOAD" = exceed ] && INDEX=$((RAM_MIB / 2))

# The kernel's own choice, before the run forces one (Debian's 6.12 boots with MGLRU on).
MGLRU_BOOT=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none)
case "$BENCH_MGLRU" in
on) [ -w /sys/kernel/mm/lru_gen/enabled ] && echo y >/sys/kernel/mm/lru_gen/enabled ;;
off) [ -w /sys/kernel/mm/lru_gen/enabled ] && echo n >/sys/kernel/mm/lru_gen/enabled ;;
esac
MGLRU=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none)

mkdir -p /usr/local/bin $CG/apps $JOBCG $APPCG
[ $APP2 = 0 ] || mkdir -p $APP2CG
cp "$(command -v pwload)" $TOOL
echo "+memory +io +cpu" >$CG/cgroup.subtree_control
echo +memory >$CG/apps/cgroup.subtree_control

S="$TOOL write $PW_DATA_MNT/big.dat $BIG && $TOOL read $PW_DATA_MNT/big.dat"
case "$WORKLOAD" in
plain) BACKUP=$S ;;
verify) BACKUP="$S && $TOOL read $PW_DATA_MNT/big.dat" ;;
dedup | exceed) BACKUP="$TOOL index $INDEX & i=\$!; $S; r=\$?; kill \$i; exit \$r" ;;
stall)
	# The second application stalls under a memory.high of its own, as make
	# check's faults scenario makes one stall: its trigger fires whatever the
	# backup does, and limiting the backup cannot help it (the governor holds
	# off: status's held_off; before, it throttled the backup for nothing).
	BACKUP=$S
	mkdir -p $BURSTCG
	echo 40M >$BURSTCG/memory.high
	;;
smallfiles) BACKUP="$TOOL tree-write $PW_DATA_MNT/tree $BIG 256 && $TOOL tree-read $PW_DATA_MNT/tree" ;;
bighot | grow | noswap | twoapps | fsync) BACKUP=$S ;;
readonly) BACKUP="$TOOL read $PW_DATA_MNT/big.dat" ;;
*) echo "result error=unknown-workload"; exit 1 ;;
esac
# A shell of its own, so that LD_PRELOAD (nocache) reaches the tool and only it.
PRELOAD=
[ "$VARIANT" = nocache ] && PRELOAD=/usr/lib/nocache/nocache.so
# Whether LD_PRELOAD reaches the tool at all (the guest's sh is busybox, static; the tool is not): the
# variant's figures mean nothing if it does not.
NOCACHE_LOADED=-
if [ -n "$PRELOAD" ]; then
	env LD_PRELOAD=$PRELOAD $TOOL sleep 2 &
	p=$!
	sleep 1
	grep -q nocache "/proc/$p/maps" && NOCACHE_LOADED=yes || NOCACHE_LOADED=no
	wait $p
fi

CONF=/etc/pagewarden/pagewarden.yaml
# What an operator sizing memory.high by hand gives the backup: what the application leaves, less 64 MiB for
# the rest of the machine (at least 64 MiB).
HIGH_MIB=$((RAM_MIB - APP_ANON - APP_FILE - 64))
[ $HIGH_MIB -ge 64 ] || HIGH_MIB=64
case "$VARIANT" in
none | none-aa | nocache | min | low) ;; # none-aa: none, named apart (the A/A pair)
swappiness0) echo 0 >/proc/sys/vm/swappiness ;;
high | min-high) echo ${HIGH_MIB}M >$JOBCG/memory.high ;;
high-256) echo 256M >$JOBCG/memory.high ;; # the shipped backup class's memory.high
high-io)
	echo ${HIGH_MIB}M >$JOBCG/memory.high
	echo "$PW_DATA_MAJMIN rbps=${BENCH_IO_BPS:-41943040} wbps=${BENCH_IO_BPS:-41943040}" >$JOBCG/io.max
	;;
pagewarden | rule | pagewarden-nohigh)
	# The shipped configuration, and the operator names the application: min: auto, no size.
	# pagewarden-nohigh: without the backup class's static memory.high (the governor alone limits it).
	mkdir -p /var/lib/pagewarden
	printf 'protect:\n  app:\n    cgroup: /apps/app\n    memory: {min: auto}\n' >/etc/pagewarden/policies.d/app.yaml
	[ "$WORKLOAD" = stall ] &&
		printf '  burst:\n    cgroup: /apps/burst\n    memory: {min: auto}\n' >>/etc/pagewarden/policies.d/app.yaml
	[ $APP2 = 1 ] &&
		printf '  app2:\n    cgroup: /apps/app2\n    memory: {min: auto}\n' >>/etc/pagewarden/policies.d/app.yaml
	[ "$VARIANT" = rule ] &&
		sed -i "s|^  backup:\$|&\n    match: {exe: [$TOOL]}|" /etc/pagewarden/policies.d/jobs.yaml
	[ "$VARIANT" = pagewarden-nohigh ] &&
		sed -i '/^  backup:$/,/^  copy:$/{/^    memory:$/d;/^      high: 256M$/d}' /etc/pagewarden/policies.d/jobs.yaml
	chmod 0644 /etc/pagewarden/policies.d/*.yaml
	;;
*) echo "result error=unknown-variant"; exit 1 ;;
esac

pwload write "$PW_DATA_MNT/app.dat" $APP_FILE >/dev/null
[ $COLD -gt 0 ] && pwload write "$PW_DATA_MNT/cold.dat" $COLD >/dev/null && pwload write "$PW_DATA_MNT/svc.dat" $((RAM_MIB * 3 / 100)) >/dev/null
[ $GROW -gt 0 ] && pwload write "$PW_DATA_MNT/grow.dat" $GROW >/dev/null
[ $APP2 = 1 ] && pwload write "$PW_DATA_MNT/app2.dat" $APP_FILE >/dev/null
# readonly: the data to back up is there before the application starts (and out of the cache below).
[ "$WORKLOAD" = readonly ] && pwload write "$PW_DATA_MNT/big.dat" $BIG >/dev/null
sync
echo 3 >/proc/sys/vm/drop_caches
oom0=$(keyed /proc/vmstat oom_kill)
if [ "$VARIANT" != "${VARIANT#pagewarden}" ] || [ "$VARIANT" = rule ]; then
	pagewardend --config $CONF 2>>/tmp/daemon.log &
	DAEMON=$!
	wait_daemon
fi

# The application's data is what it has been using: read twice, on the kernel's active list (pwapp).
export PWAPP_PASSES=2
# "MODE PHASE": pwapp keeps each phase's operation times and cache misses (its "phase=" lines at stop).
echo "busy before" >/tmp/mode
# bighot: the cold file, read once by the application (its cgroup is charged with it), before its hot set.
[ $COLD -gt 0 ] && sh -c "echo \$\$ >$APPCG/cgroup.procs; exec pwload read $PW_DATA_MNT/cold.dat" >/dev/null
# fsync: the application's log, on the same disk as its data and the backup's
APPENV=
[ "$WORKLOAD" = fsync ] && APPENV=PWAPP_LOG=$PW_DATA_MNT/app.log
sh -c "echo \$\$ >$APPCG/cgroup.procs; exec env $APPENV pwapp $APP_ANON $PW_DATA_MNT/app.dat /tmp/mode" >/tmp/app.log &
APP=$!
while ! grep -q ready /tmp/app.log 2>/dev/null; do sleep 0.2; done
A2=
if [ $APP2 = 1 ]; then
	sh -c "echo \$\$ >$APP2CG/cgroup.procs; exec pwapp $APP_ANON $PW_DATA_MNT/app2.dat /tmp/mode" >/tmp/app2.log &
	A2=$!
	while ! grep -q ready /tmp/app2.log 2>/dev/null; do sleep 0.2; done
fi
SVC=
if [ $COLD -gt 0 ]; then
	mkdir -p $SVCCG
	sh -c "echo \$\$ >$SVCCG/cgroup.procs; exec pwapp $((RAM_MIB * 3 / 100)) $PW_DATA_MNT/svc.dat /tmp/mode" >/tmp/svc.log &
	SVC=$!
	while ! grep -q ready /tmp/svc.log 2>/dev/null; do sleep 0.2; done
fi
# The application's file data in the page cache, whoever it is charged to (mincore: bighot's cold file is
# charged to the same cgroup, and is not what the application needs).
hot_file() { pwload resident $PW_DATA_MNT/app.dat | awk -F'[= ]' '{ print $2 * 1024 }'; }
# Sized by the operator, and on the parent too: a cgroup's protection is
# bounded by its parent's (written there alone it protects nothing).
case "$VARIANT" in
min | min-high)
	echo $(((APP2 + 1) * (APP_ANON + APP_FILE) * MIB)) >$CG/apps/memory.min
	echo $(((APP_ANON + APP_FILE) * MIB)) >$APPCG/memory.min
	[ $APP2 = 0 ] || echo $(((APP_ANON + APP_FILE) * MIB)) >$APP2CG/memory.min
	;;
low)
	echo $(((APP2 + 1) * (APP_ANON + APP_FILE) * MIB)) >$CG/apps/memory.low
	echo $(((APP_ANON + APP_FILE) * MIB)) >$APPCG/memory.low
	[ $APP2 = 0 ] || echo $(((APP_ANON + APP_FILE) * MIB)) >$APP2CG/memory.low
	;;
esac
sleep 7
lines() { wc -l </tmp/app.log; }
ops() { sed -n "$1,$2p" /tmp/app.log | awk -F'ops=' '/ops=/ { print $2 + 0 }'; }
mean() { awk '{ s += $1; n++ } END { printf "%d", n ? s / n : 0 }'; }
l=$(lines)
before=$(ops $((l - 4)) "$l" | mean) # busy, the last 5 s
before_mode=$before
if [ "$MODE" != busy ]; then
	echo "$MODE before-mode" >/tmp/mode
	sleep 4
	l=$(lines)
	[ "$MODE" = light ] && before_mode=$(ops $((l - 2)) "$l" | mean)
fi
stat0=$(cat $APPCG/memory.stat)
echo "$stat0" | sed 's/^/appstat /' # the application's memory.stat as the backup starts: what "auto" sees
psi_total() { awk -F'total=' '/^some/ { print $2 + 0 }' "$1"; } # psi_total FILE: "some" stall, us
psi0=$(for r in memory io cpu; do psi_total $APPCG/$r.pressure; done | tr "\n" " ")
st() { echo "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
file0=$(hot_file) anon0=$(st "$stat0" anon)
swap0=$(cat $APPCG/memory.swap.current)
l0=$(lines)

if [ "$WORKLOAD" = stall ]; then
	sh -c "echo \$\$ >$BURSTCG/cgroup.procs; exec pwload churn 64" >/dev/null 2>&1 &
	BURST=$!
	(
		sleep 5
		kill $BURST
	) &
fi
# The application's resident memory each second of the backup: its lowest is what the backup cost it.
(
	while :; do
		echo "$(hot_file) $(awk '$1 == "anon" { print $2 }' $APPCG/memory.stat)"
		sleep 1
	done
) >/tmp/resident &
SAMPLER=$!
echo "$MODE during" >/tmp/mode
t0=$(uptime_ms)
# grow: the application's second process, 5 s in, in its cgroup (it reads its file twice, then works as the
# first does, in the same mode).
GROWER=
if [ $GROW -gt 0 ]; then
	(
		sleep 5
		exec sh -c "echo \$\$ >$APPCG/cgroup.procs; exec pwapp 1 $PW_DATA_MNT/grow.dat /tmp/mode" >/tmp/grow.log
	) &
	GROWER=$!
fi
case "$VARIANT" in
pagewarden | pagewarden-nohigh)
	pagewardenctl run --job backup --name nightly -- env ${PRELOAD:+LD_PRELOAD=$PRELOAD} sh -c "$BACKUP" >/dev/null
	;;
*)
	sh -c "echo \$\$ >$JOBCG/cgroup.procs; exec env ${PRELOAD:+LD_PRELOAD=$PRELOAD} sh -c '$BACKUP'" >/dev/null
	;;
esac
rc=$?
t1=$(uptime_ms)
kill $SAMPLER
l1=$(lines)
stat1=$(cat $APPCG/memory.stat)
psi1=$(for r in memory io cpu; do psi_total $APPCG/$r.pressure; done | tr "\n" " ")
file1=$(hot_file) anon1=$(st "$stat1" anon)
# grow: the part the application started using during the backup, in the page cache at its end, % of its size;
# twoapps: the second application's file in the page cache at the backup's end, % of its size
kept_pct() { pwload resident "$1" | awk -F'[= ]' '{ printf "%.1f", $4 ? 100 * $2 / $4 : 0 }'; } # FILE's pages cached, %
extra=
[ $APP2 = 1 ] && extra="app2_kept=$(kept_pct $PW_DATA_MNT/app2.dat)"
[ $GROW -gt 0 ] && extra="grow_kept=$(kept_pct $PW_DATA_MNT/grow.dat)"
swap1=$(cat $APPCG/memory.swap.current)
# After: whole seconds 2-11 (the first second is the switch, partly still the backup's).  Major faults and
# the recovery are counted over those 11 s (after_window_s); until 2026-12-07 a "late" phase of 9 s more
# extended them to 20 s, a tenth of every boot and 16 min of the default run: a recovery beyond the window
# now reads ">11" where it read ">20".
AFTER_WINDOW_S=11
echo "busy settle" >/tmp/mode
sleep 1
echo "busy after" >/tmp/mode
sleep $((AFTER_WINDOW_S - 1))
l2=$(lines)
maj2=$(keyed $APPCG/memory.stat pgmajfault)
maj1=$(st "$stat1" pgmajfault)

# Every second of the application, from the start of the recorded run.
awk -F'ops=' -v l0="$l0" -v l1="$l1" '/ops=/ {
	n++
	phase = n <= l0 - 1 ? "before" : n <= l1 - 1 ? "during" : "after"
	print "series", n - l0, phase, $2 + 0
}' /tmp/app.log
# During: relative to the same mode before (busy and light), its mean; its
# worst 1% below, from pwapp's 100 ms windows.  After: the first 5 s,
# relative to busy before; the recovery: seconds until a second reaches 80%
# of before.
during_mean=- during_worst=- during_windows=-
if [ "$MODE" != idle ]; then
	during_mean=$(ops $((l0 + 1)) "$l1" | awk -v b="$before_mode" '{ s += $1; n++ } END { printf "%.1f", n && b ? 100 * s / n / b : 0 }')
fi
after_mean=$(ops $((l1 + 1)) $((l1 + 5)) | awk -v b="$before" '{ s += $1; n++ } END { printf "%.1f", n && b ? 100 * s / n / b : 0 }')
recover=$(ops $((l1 + 1)) "$l2" | awk -v b="$before" '$1 >= 0.8 * b { print NR - 1; found = 1; exit } END { if (!found) print ">" NR }')

gov=
if [ -n "${DAEMON:-}" ]; then
	json=$(pagewardenctl status --json)
	gov="actions=$(echo "$json" | jq '.governor.actions') latency_med_us=$(echo "$json" | jq -r '.governor.reaction_latency.median_us // "-"')"
	gov="$gov latency_max_us=$(echo "$json" | jq -r '.governor.reaction_latency.max_us // "-"')"
	gov="$gov rss_kib=$(keyed /proc/$DAEMON/status VmRSS:) cpu_ticks=$(awk '{ print $14 + $15 }' /proc/$DAEMON/stat)"
	[ "$VARIANT" = rule ] && gov="$gov placed_by_rule=$(echo "$json" | jq '[.actions[].message | select(test("placed by rule"))] | length')"
	echo "$json" | jq -r '.actions[].message' | grep -i governor | head -6 | sed 's/^/# /'
	kill -TERM $DAEMON
	wait $DAEMON
fi
echo stop >/tmp/mode
wait $APP
[ -n "$SVC" ] && wait $SVC
[ -n "$GROWER" ] && wait $GROWER
[ -n "$A2" ] && wait $A2
# phase_field LOG PHASE KEY: a figure of pwapp's "phase=" line ("-" if none)
phase_field() { awk -v p="phase=$2" -v k="$3" '$1 == p { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } }
	END { print v == "" ? "-" : v }' "$1"; }
lat=
for ph in before during after; do
	for k in p50_us p99_us p999_us misses; do
		lat="$lat ${ph}_$k=$(phase_field /tmp/app.log $ph $k)"
		[ -n "$SVC" ] && lat="$lat svc_${ph}_$k=$(phase_field /tmp/svc.log $ph $k)"
		[ -n "$GROWER" ] && [ "$ph" != before ] && lat="$lat grow_${ph}_$k=$(phase_field /tmp/grow.log $ph $k)"
		[ -n "$A2" ] && lat="$lat app2_${ph}_$k=$(phase_field /tmp/app2.log $ph $k)"
	done
done
lat="$lat oom_kills=$(($(keyed /proc/vmstat oom_kill) - oom0))"
# Isolation, busy mode: the worst 1% of the backup's time, the 1st percentile of the rates of pwapp's 100 ms
# windows during it (100 or more samples once the backup takes 10 s; the same count in every variant for a
# backup as long), % of the mean rate of its windows before.  Light mode does one operation every 50 ms, two
# or so a window: too few to say anything per window; its isolation is its p99 operation time during.
if [ "$MODE" = busy ]; then
	during_windows=$(phase_field /tmp/app.log during windows)
	during_worst=$(awk -v w="$(phase_field /tmp/app.log during rate_p1)" -v b="$(phase_field /tmp/app.log before rate_mean)" \
		'BEGIN { if (w == "-" || b == "-" || b <= 0) print "-"; else printf "%.1f", 100 * w / b }')
fi
# PSI "some" totals of the application during the backup (s), and its refaults (pages).
psi="$(echo "$psi0 $psi1" | awk '{ printf "psi_memory_s=%.2f psi_io_s=%.2f psi_cpu_s=%.2f", ($4 - $1) / 1e6, ($5 - $2) / 1e6, ($6 - $3) / 1e6 }')"
refaults="refaults_file=$(($(st "$stat1" workingset_refault_file) - $(st "$stat0" workingset_refault_file)))"
refaults="$refaults refaults_anon=$(($(st "$stat1" workingset_refault_anon) - $(st "$stat0" workingset_refault_anon)))"
resident_min=$(awk -v f0="$file0" -v a0="$anon0" 'NF == 2 { if (!n++ || $1 < mf) mf = $1; if (n == 1 || $2 < ma) ma = $2 }
	END { if (n) printf "file_min_kept=%.1f anon_min_kept=%.1f", f0 ? 100 * mf / f0 : 0, a0 ? 100 * ma / a0 : 0
	      else printf "file_min_kept=- anon_min_kept=-" }' /tmp/resident)
echo "result label=${BENCH_LABEL:-$PW_KERNEL} kernel=$PW_KERNEL mglru=$MGLRU workload=$WORKLOAD mode=$MODE variant=$VARIANT ram_mib=$RAM_MIB" \
	"disk=${BENCH_DISK:-ram} mglru_boot=$MGLRU_BOOT high_mib=$HIGH_MIB nocache_loaded=$NOCACHE_LOADED" \
	"backup_rc=$rc backup_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1000 }')" \
	"file_kept=$(awk -v a="$file0" -v b="$file1" 'BEGIN { printf "%.1f", a ? 100 * b / a : 0 }')" \
	"anon_kept=$(awk -v a="$anon0" -v b="$anon1" 'BEGIN { printf "%.1f", a ? 100 * b / a : 0 }')" \
	"swapped_mib=$(awk -v a="$swap0" -v b="$swap1" 'BEGIN { printf "%.1f", (b - a) / 1048576 }')" \
	"majflt_after=$((maj2 - maj1)) after_window_s=$AFTER_WINDOW_S ops_before=$before ops_before_mode=$before_mode" \
	"during_mean=$during_mean during_worst=$during_worst during_windows=$during_windows after_mean=$after_mean recover_s=$recover $gov" \
	"$lat $psi $refaults $resident_min $extra"
