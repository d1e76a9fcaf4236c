#!/bin/sh
# A busy database during a backup, figures (make bench): PostgreSQL as
# Debian ships it (postgresql@VERSION-main.service) serving `pgbench -S`
# throughout, while borg backs up fresh data as a service (as a timer starts
# it), with and without pagewarden.  Issue 29's last case: before the
# governor's second version, pagewarden made a busy database slower.
#
# One boot, PW_PG_RUNS (3) runs of each variant, interleaved (none,
# pagewarden, none, ...):
#   none        no daemon: the backup runs in system.slice, nothing protected;
#   pagewarden  pagewarden.service running with the policy operators write:
#               the shipped backup class (memory.high 256M, floor 64M) with a
#               units: rule for nightly-backup.service, and the database's
#               unit protected with min: auto.
# Every run starts alike: the database restarted, the page cache dropped,
# its tables read twice by the database itself (pg_prewarm, so that the
# cache is charged to its unit and on the active list) and its shared
# buffers filled, then PW_PG_BEFORE
# (30) s of pgbench before the backup, the backup (a new borg repository of
# PW_PG_DATA_MIB, 1024, MiB of incompressible files), and PW_PG_AFTER (40)
# s after.  The cluster and the backup's data are on the data disk (the
# bench spec throttles it), swap on the swap disk.
#
# Per run: the database's rate (transactions per second, from pgbench's
# per-transaction log) before, during the backup, and over whole seconds
# 2-11 after it, as % of before; seconds until every second of 5 in a row is
# back at >= 90% of before; latency p50/p99 per phase (all transactions);
# the share of the accounts table and its index in the page cache at the
# backup's end (mincore); the backup's time; swap-ins, OOM kills, the
# database unit's memory stall (PSI some, ms) during the backup; and, with
# pagewarden, its memory.min and the governor's actions.  Then medians and
# ranges per variant.  A figure, not a test: the checks are only that each
# run worked (the backup finished, pgbench ran, the daemon was there and
# gave its values back).
. /lib.sh
MIB=1048576
D=$PW_DATA_MNT
SRC=$D/src
REPO=$D/borg
PGDATA=$D/pgdata
RUNS=${PW_PG_RUNS:-3}
SCALE=${PW_PG_SCALE:-30}
DATA_MIB=${PW_PG_DATA_MIB:-1024}
BEFORE=${PW_PG_BEFORE:-30}
AFTER=${PW_PG_AFTER:-40}
CLIENTS=${PW_PG_CLIENTS:-2}
OUT=/run/pgbusy
mkdir -p $OUT
export HOME=/root BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes

epoch() { date +%s.%N; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# psi_some_ms FILE: a pressure file's "some" total, in ms
psi_some_ms() { awk '$1 == "some" { split($5, a, "="); printf "%d", a[2] / 1000 }' "$1" 2>/dev/null || echo 0; }
# trace: until killed, in $OUT/trace, once a second (pwload sample: a few
# system calls a sample, no fork): /proc/stat, /proc/vmstat, and the CPU
# time, memory and PSI of the database, the backup (system.slice's unit
# without pagewarden, pagewarden.slice with it), this scenario (pgbench's
# client) and the daemon.  Alike in both variants.
trace() {
	sc=$CG/system.slice/pw-scenario.service bk=$CG/system.slice/nightly-backup.service
	pw=$CG/system.slice/pagewarden.service pws=$CG/pagewarden.slice
	exec pwload sample 1000 /proc/stat /proc/vmstat $CGDIR/cpu.stat $CGDIR/memory.current \
		$CGDIR/cpu.pressure $CGDIR/memory.pressure $CGDIR/io.pressure $bk/cpu.stat $bk/memory.current \
		$pws/cpu.stat $pws/memory.current $sc/cpu.stat $sc/memory.current $pw/cpu.stat >"$OUT/trace"
}
# records: the trace's samples, a line each of key=value: t (epoch), /proc/stat's
# CPU jiffies (busy, iowait, all), CPU us per cgroup (bk1: the unit in
# system.slice, bk2: pagewarden.slice), vmstat counters, memory, PSI totals
# (%.0f: mawk's %d stops at 2^31).
records() {
	awk -v pg="$CGDIR" -v sc="$CG/system.slice/pw-scenario.service" -v pw="$CG/system.slice/pagewarden.service" \
		-v bk1="$CG/system.slice/nightly-backup.service" '
		function flush() {
			if (t == "") return
			printf "t=%s busy=%.0f iow=%.0f all=%.0f pg_us=%.0f bk1_us=%.0f bk2_us=%.0f cl_us=%.0f pw_us=%.0f", t, all - idle - iow, iow, all,
				us["pg"], us["bk1"], us["bk2"], us["cl"], us["pw"]
			printf " pswpin=%.0f pswpout=%.0f majflt=%.0f scan=%.0f dirty=%.0f wb=%.0f pg_mem=%.0f bk_mem=%.0f cl_mem=%.0f", v["pswpin"],
				v["pswpout"], v["pgmajfault"], v["pgscan_kswapd"] + v["pgscan_direct"], v["nr_dirty"],
				v["nr_writeback"], mem["pg"], mem["bk"], mem["cl"]
			printf " psi_cpu=%.0f psi_mem=%.0f psi_io=%.0f\n", psi["cpu"], psi["memory"], psi["io"]
			split("", us); split("", mem); split("", psi); split("", v); all = idle = iow = 0
		}
		$1 == "T" { flush(); t = $2; next }
		{ i = index($0, ":"); f = substr($0, 1, i - 1); n = split(substr($0, i + 1), a, " ") }
		f == "/proc/stat" && a[1] == "cpu" { for (j = 2; j <= n; j++) all += a[j]; idle = a[5]; iow = a[6] }
		f == "/proc/vmstat" { v[a[1]] = a[2] }
		f ~ /cpu.stat$/ && a[1] == "usage_usec" { d = substr(f, 1, length(f) - 9)
			k = d == pg ? "pg" : d == sc ? "cl" : d == pw ? "pw" : d == bk1 ? "bk1" : "bk2"; us[k] = a[2] }
		f ~ /memory.current$/ { d = substr(f, 1, length(f) - 15)
			k = d == pg ? "pg" : d == sc ? "cl" : "bk"; mem[k] += a[1] }
		f ~ /pressure$/ && a[1] == "some" { split(a[5], b, "="); k = f; sub(/.*\//, "", k); sub(/\..*/, "", k); psi[k] = b[2] }
		END { flush() }' "$OUT/trace"
}
# kept: the accounts table and its index in the page cache, % (mincore of every segment)
kept() {
	for f in $(ls "$PGDATA/$REL" "$PGDATA/$REL".* "$PGDATA/$IDX" "$PGDATA/$IDX".* 2>/dev/null); do
		pwload resident "$f"
	done | awk -F'[ =]' '{ r += $2; s += $4 } END { printf "%.1f", s ? 100 * r / s : 0 }'
}

diag "$(dpkg-query -W -f '${Package} ${Version}, ' postgresql borgbackup systemd)"
diag "guest: $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) of RAM, $(nproc) vCPUs, kernel $(uname -r)"

# ---- the database: Debian's cluster, moved to the data disk ----
PGV=$(ls /usr/lib/postgresql | sort -n | tail -1)
UNIT=postgresql@$PGV-main.service
pg_dropcluster --stop "$PGV" main 2>/dev/null
check "pg_createcluster on the data disk" sh -c "pg_createcluster -d $PGDATA $PGV main >/dev/null"
check "$UNIT starts" systemctl start "$UNIT"
wait_for 120 pg_isready -q
runuser -u postgres -- createuser -s root
createdb bench
t0=$(uptime_ms)
check "pgbench -i -s $SCALE" sh -c "pgbench -i -q -s $SCALE bench >$OUT/init.log 2>&1"
psql -qAt -c 'CREATE EXTENSION pg_prewarm' bench
REL=$(psql -qAt -c "SELECT pg_relation_filepath('pgbench_accounts')" bench)
IDX=$(psql -qAt -c "SELECT pg_relation_filepath('pgbench_accounts_pkey')" bench)
DBSIZE=$(psql -qAt -c "SELECT pg_database_size('bench') / 1048576" bench)
diag "database: scale $SCALE, $DBSIZE MiB, made in $(($(uptime_ms) - t0)) ms; accounts $REL, index $IDX; shared_buffers $(psql -qAt -c 'SHOW shared_buffers' bench)"
CGDIR=$CG$(systemctl show -P ControlGroup "$UNIT")

# ---- the backup's data and its unit ----
mkdir -p "$SRC"
t0=$(uptime_ms)
i=0
while [ $i -lt $((DATA_MIB / 32)) ]; do
	dd if=/dev/urandom of="$SRC/part$i" bs=1M count=32 status=none
	i=$((i + 1))
done
sync
diag "backup data: $(du -sm "$SRC" | cut -f1) MiB in $SRC, made in $(($(uptime_ms) - t0)) ms"
cat >/etc/systemd/system/nightly-backup.service <<UNIT
[Service]
Type=oneshot
Environment=HOME=/root BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
ExecStart=/usr/bin/borg create $REPO::nightly $SRC
UNIT
systemctl daemon-reload

# ---- pagewarden's policy: the shipped backup class, a rule, the database ----
# The build must read /etc/pagewarden (README's ./configure --sysconfdir=/etc): one configured for
# /usr/local would run the "pagewarden" variant without this policy, and compare nothing.
case $(pagewardend --help) in
*"(default: /etc/pagewarden/pagewarden.yaml)"*) ;;
*) echo "Bail out! pagewardend does not read /etc/pagewarden/pagewarden.yaml: configure the build with --sysconfdir=/etc"; exit 1 ;;
esac
printf 'log_level: info\n' >/etc/pagewarden/pagewarden.yaml
cat >/etc/pagewarden/policies.d/jobs.yaml <<YAML
jobs:
  backup:
    memory:
      high: 256M
    under_pressure:
      memory_high_floor: 64M
    match:
      units: [nightly-backup.service]
protect:
  postgres:
    unit: $UNIT
    memory: {min: auto}
YAML
chmod 0644 /etc/pagewarden/*.yaml /etc/pagewarden/policies.d/*.yaml
out=$(pagewardenctl check --strict 2>&1)
case $out in
*"1 job class, 1 protected application"*) ok "pagewardenctl check --strict accepts the policy: $out" ;;
*) echo "Bail out! pagewardenctl check --strict does not see the policy (a comparison without it compares nothing): $out"; exit 1 ;;
esac

# ---- the runs ----
# run K VARIANT: one run; a line of figures in $OUT/runs
run() {
	k=$1 v=$2
	systemctl restart "$UNIT"
	wait_for 120 pg_isready -q
	rm -rf "$REPO"
	borg init --encryption=none "$REPO" >/dev/null 2>&1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	if [ "$v" = pagewarden ]; then
		systemctl start pagewarden.service
		wait_daemon
	fi
	min_unit=$(cat "$CGDIR/memory.min")
	for _ in 1 2; do
		psql -qAt -c "SELECT pg_prewarm('pgbench_accounts', 'read'), pg_prewarm('pgbench_accounts_pkey', 'read')" bench >/dev/null
	done
	# and its shared buffers filled, the index first, as pgbench would leave them
	psql -qAt -c "SELECT pg_prewarm('pgbench_accounts_pkey', 'buffer'), pg_prewarm('pgbench_accounts', 'buffer')" bench >/dev/null
	kept0=$(kept)
	rm -f $OUT/pgb.*
	trace &
	tr=$!
	pgbench -S -n -c "$CLIENTS" -j 1 -T 3000 -l --log-prefix=$OUT/pgb bench >$OUT/pgbench.log 2>&1 &
	pgb=$!
	sleep "$BEFORE"
	sin0=$(vmstat pswpin) oom0=$(vmstat oom_kill) psi0=$(psi_some_ms "$CGDIR/memory.pressure")
	st0=$(cat "$CGDIR/memory.stat")
	jlog=$(date '+%Y-%m-%d %H:%M:%S')
	b0=$(epoch)
	systemctl start nightly-backup.service
	brc=$?
	b1=$(epoch)
	keptb=$(kept)
	psi1=$(psi_some_ms "$CGDIR/memory.pressure")
	min_end=$(cat "$CGDIR/memory.min")
	sleep "$AFTER"
	sin1=$(vmstat pswpin) oom1=$(vmstat oom_kill)
	# What the database itself paid (whose the swap-ins are): its refaults and major faults from the backup's
	# start to the end of the after window, and its memory then.
	st1=$(cat "$CGDIR/memory.stat")
	dstat() { echo "$st0
$st1" | awk -v k="$1" '$1 == k { v[++n] = $2 } END { print v[2] - v[1] }'; }
	diag "run $k ($v): the database's refaults anon +$(dstat workingset_refault_anon) file +$(dstat workingset_refault_file), major faults +$(dstat pgmajfault); anon +$(($(dstat anon) / 1048576)) MiB, file +$(($(dstat file) / 1048576)) MiB"
	kill "$pgb" "$tr"
	wait "$pgb" "$tr" 2>/dev/null
	expect_eq "run $k ($v): the backup finished" "$brc" 0
	check "run $k ($v): pgbench ran throughout" test -s "$(ls $OUT/pgb.* | head -1)"
	acts=0
	if [ "$v" = pagewarden ]; then
		journalctl -u pagewarden.service -q --no-pager -o cat --since "$jlog" |
			grep -E '^Governor: |[Pp]rotect|auto' | grep -v 'reaction latency' | head -20 | sed "s/^/# run $k daemon: /"
		acts=$(journalctl -u pagewarden.service -q --no-pager -o cat --since "$jlog" | grep -c '^Governor: .* on class ')
		diag "run $k: the daemon's CPU time $(($(systemctl show -P CPUUsageNSec pagewarden.service) / 1000000)) ms, its memory $(($(systemctl show -P MemoryCurrent pagewarden.service) / 1024)) KiB"
		systemctl stop pagewarden.service
		wait_for 10 test "$(cat "$CGDIR/memory.min")" = 0
		expect_eq "run $k: the daemon gave the database's memory.min back at its stop" "$(cat "$CGDIR/memory.min")" 0
	fi
	# Per-transaction log: client tx latency_us script epoch_s epoch_us
	cat $OUT/pgb.* | awk -v b0="$b0" -v b1="$b1" -v before="$BEFORE" -v after="$AFTER" '
		{ t = $5 + $6 / 1e6; s = int(t); n[s]++; lat = $3 / 1000
		  if (t >= b0 - before + 5 && t < b0) print "before", lat
		  else if (t >= b0 && t < b1) print "during", lat
		  else if (t >= b1 + 2 && t < b1 + 12) print "after", lat
		  if (t >= b0 && t < b1) nd++ }
		END {
			s0 = int(b0) - before + 5; sb = 0; nb = 0
			for (s = s0; s < int(b0); s++) { sb += n[s]; nb++ }
			base = sb / nb
			e = int(b1) + 1; sa = 0
			for (s = e + 1; s <= e + 10; s++) sa += n[s]
			rec = -1
			for (s = e; s <= e + after - 6 && rec < 0; s++) {
				good = 1
				for (j = 0; j < 5; j++) if (n[s + j] < 0.9 * base) good = 0
				if (good) rec = s - e
			}
			printf "rate %.1f %.1f %.1f %s\n", base, 100 * nd / (b1 - b0) / base, 100 * sa / 10 / base, rec < 0 ? ">" (after - 5) : rec
		}' >$OUT/phases
	# Where the time went: the trace's deltas per phase (before: the same window as the rate; after: seconds
	# 2-12), then second by second from 4 s before the backup's end to 20 s after.  CPU in % of all vCPUs;
	# pages a second; PSI in ms a second; tps from pgbench's log over the same interval.
	{ cat $OUT/pgb.* | awk '{ printf "x %d.%06d\n", $5, $6 }'; records; } | awk -v b0="$b0" -v b1="$b1" \
		-v before="$BEFORE" -v ncpu="$(nproc)" -v run="run $k ($v)" '
		BEGIN { base = b0 - 10000 } # tenths of a second from base: small integers (mawk names big ones %.6g)
		$1 == "x" { x[int(($2 - base) * 10)]++; next }
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] } }
		c["t"] - p["t"] > 0.5 && p["t"] > 0 {
			t = c["t"]; dt = t - p["t"]; tx = 0
			for (b = int((p["t"] - base) * 10) + 1; b <= int((t - base) * 10); b++) tx += x[b]
			mid = (t + p["t"]) / 2
			ph = mid >= b0 - before + 5 && mid < b0 ? "before" : mid >= b0 && mid < b1 ? "during" : \
				mid >= b1 + 2 && mid < b1 + 12 ? "after" : ""
			d["tps"] = tx / dt
			all = c["all"] - p["all"]
			d["busy"] = all ? 100 * (c["busy"] - p["busy"]) / all : 0
			d["iow"] = all ? 100 * (c["iow"] - p["iow"]) / all : 0
			# a cgroup that went (the backup unit moved into pagewarden.slice) reads 0: no negative time
			split("pg bk1 bk2 cl pw", w, " ")
			for (i in w) { u = c[w[i] "_us"] - p[w[i] "_us"]; d[w[i]] = u > 0 ? u / 1e4 / dt / ncpu : 0 }
			d["bk"] = d["bk1"] + d["bk2"]; delete d["bk1"]; delete d["bk2"]
			split("pswpin pswpout majflt scan", w, " ")
			for (i in w) d[w[i]] = (c[w[i]] - p[w[i]]) / dt
			split("psi_cpu psi_mem psi_io", w, " ")
			for (i in w) d[w[i]] = (c[w[i]] - p[w[i]]) / 1000 / dt
			d["dirty"] = c["dirty"] / 256; d["wb"] = c["wb"] / 256
			d["pg_mem"] = c["pg_mem"] / 1048576; d["bk_mem"] = c["bk_mem"] / 1048576; d["cl_mem"] = c["cl_mem"] / 1048576
			if (ph != "") { ns[ph]++; for (f in d) sum[ph, f] += d[f] }
			if (t - b1 >= -4 && t - b1 <= 20) { line[++nl] = sprintf("%+5.1f", t - b1); for (f in d) val[nl, f] = d[f] }
		}
		{ for (f in c) p[f] = c[f] }
		function get(f, kind, k) { return kind == "mean" ? (ns[k] ? sum[k, f] / ns[k] : 0) : val[k, f] }
		function row(lbl, kind, k) {
			return sprintf("%s tps %4.0f cpu%% busy %3.0f pg %3.0f bk %3.0f cl %3.0f pw %2.0f iow %3.0f | swpin %4.0f swpout %4.0f majflt %4.0f scan %5.0f dirty %4.0fM wb %3.0fM | mem pg %3.0fM bk %3.0fM cl %2.0fM | pg psi ms cpu %3.0f mem %3.0f io %3.0f",
				lbl, get("tps", kind, k), get("busy", kind, k), get("pg", kind, k), get("bk", kind, k), get("cl", kind, k), get("pw", kind, k), get("iow", kind, k), get("pswpin", kind, k),
				get("pswpout", kind, k), get("majflt", kind, k), get("scan", kind, k), get("dirty", kind, k), get("wb", kind, k), get("pg_mem", kind, k), get("bk_mem", kind, k),
				get("cl_mem", kind, k), get("psi_cpu", kind, k), get("psi_mem", kind, k), get("psi_io", kind, k))
		}
		END {
			for (q = 1; q <= 3; q++) { ph = q == 1 ? "before" : q == 2 ? "during" : "after"
				printf "# %s %-6s%s\n", run, ph, row("", "mean", ph) }
			for (i = 1; i <= nl; i++) printf "# %s %s\n", run, row(line[i], "at", i)
		}'
	rates=$(sed -n 's/^rate //p' $OUT/phases)
	pct() { awk -v p="$1" -v ph="$2" '$1 == ph { print $2 }' $OUT/phases | sort -n | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p); if (i < 1) i = 1; printf "%.1f", a[i] }'; }
	line=$(printf 'run=%s variant=%s backup_s=%.1f tps_before=%s during_pct=%s after_pct=%s recover_s=%s p50_before_ms=%s p99_before_ms=%s p50_during_ms=%s p99_during_ms=%s p50_after_ms=%s p99_after_ms=%s kept_start_pct=%s kept_end_pct=%s stall_ms=%s swapins=%s oom=%s min_before=%s min_during=%s actions=%s' \
		"$k" "$v" "$(awk -v a="$b0" -v b="$b1" 'BEGIN { print b - a }')" $rates \
		"$(pct 0.5 before)" "$(pct 0.99 before)" "$(pct 0.5 during)" "$(pct 0.99 during)" "$(pct 0.5 after)" "$(pct 0.99 after)" \
		"$kept0" "$keptb" $((psi1 - psi0)) $((sin1 - sin0)) $((oom1 - oom0)) "$min_unit" "$min_end" "$acts")
	echo "$line" >>$OUT/runs
	diag "$line"
}

k=0
while [ $k -lt "$RUNS" ]; do
	k=$((k + 1))
	run "$k" none
	run "$k" pagewarden
done

# ---- medians [ranges] per variant ----
diag "---- $RUNS runs each, medians [min-max]; rates in % of the same run's rate before the backup ----"
for v in none pagewarden; do
	for f in backup_s tps_before during_pct after_pct recover_s p99_before_ms p99_during_ms p99_after_ms kept_end_pct stall_ms swapins oom actions; do
		grep "variant=$v " $OUT/runs | tr ' ' '\n' | sed -n "s/^$f=//p" | tr -d '>' | sort -n |
			awk -v v="$v" -v f="$f" '{ a[NR] = $1 } END { printf "# %-10s %-14s %s [%s-%s]\n", v, f, a[int((NR + 1) / 2)], a[1], a[NR] }'
	done
	# The rates themselves: a run's rate before varies (504-1236 tps in one boot), and a percentage
	# of a low "before" looks like a gain.
	for f in during after; do
		grep "variant=$v " $OUT/runs | awk -v f="$f" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] }
			printf "%.0f\n", c["tps_before"] * c[f "_pct"] / 100 }' | sort -n |
			awk -v v="$v" -v f="tps_$f" '{ a[NR] = $1 } END { printf "# %-10s %-14s %s [%s-%s]\n", v, f, a[int((NR + 1) / 2)], a[1], a[NR] }'
	done
done
done_testing
