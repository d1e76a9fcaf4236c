#!/bin/sh
# The real backup tools as Debian 12 ships them, run as operators run them
# (transient services, as a timer would start them), placed by the policy
# README and pagewarden.yaml(5) tell operators to write:
#   - /usr/bin/borg, a Python script: held at its exec; and found where
#     python3 runs it by the /proc scan at start and at a reload;
#   - /usr/bin/pg_dump, a link to postgresql-common's pg_wrapper (a Perl
#     script that psql, pgbench, createdb... share): matched by its name
#     just after the wrapper's exec, the real pg_dump running in the job;
#     psql, pgbench and createdb neither placed nor held;
#   - restic and tar, programs: held at their exec;
#   - rsync --server, by command line and user, where sshd runs it for the
#     user backup (a session of logind, libpam-systemd);
#   - borg inside a unit that a units: rule places stays in the unit.
# Each tool does real work on real data; its class's io.stat must account for
# that work, and so must its end-of-job report (a job's scope has no io
# controller: its I/O is counted at its class while it runs alone there).
# The long ones are held at a lock (borg's repository lock, a PostgreSQL
# table lock, a stopped rsync client) while the scenario looks where their
# processes run.
# Waits poll for what they wait for, with limits far above an idle run's.
. /lib.sh
MIB=1048576
POLICY=/etc/pagewarden/policies.d/jobs.yaml # replaces the shipped classes
D=$PW_DATA_MNT
SRC=$D/src # what the tools back up: incompressible, so that an archive is as large as it
DATA_MIB=${PW_TOOLS_MIB:-32}
BORG_REPO=$D/borg
RESTIC_REPO=$D/restic
BACKUP_SLICE=/sys/fs/cgroup/pagewarden.slice/pagewarden-backup.slice
COPY_SLICE=/sys/fs/cgroup/pagewarden.slice/pagewarden-copy.slice
# What a tool may still have dirty in the page cache when it exits (vm.dirty_bytes below, and some)
DIRTY_SLACK=$((16 * MIB))
export HOME=/root BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes
export RESTIC_PASSWORD=pagewarden RESTIC_REPOSITORY=$RESTIC_REPO
# The same environment for the transient services (systemd gives a service no HOME)
RUN_ENV="-E HOME=/root -E BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes -E RESTIC_PASSWORD=pagewarden -E RESTIC_REPOSITORY=$RESTIC_REPO"

# ---- helpers ----
# cgroup_of PID: its cgroup (as the daemon's JSON writes one: /a/b)
cgroup_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
# all_jobs: the running and the ended jobs, one JSON array
all_jobs() { pagewardenctl list --all --json | jq -c '[(.jobs // [])[], (.ended // [])[]]'; }
# jobs_named NAME: how many jobs of that name there were
jobs_named() { all_jobs | jq --arg n "$1" '[.[] | select(.name == $n)] | length'; }
jobs_named_is() { [ "$(jobs_named "$1")" = "$2" ]; }
# newest NAME: the id of the newest job of that name
newest() { all_jobs | jq --arg n "$1" '[.[] | select(.name == $n)] | max_by(.id) | .id'; }
# field ID FIELD: a field of job ID, running or ended
field() { all_jobs | jq -r --argjson id "$1" --arg f "$2" '[.[] | select(.id == $id)][0][$f]'; }
# bytes ID FIELD: a byte count of job ID, -1 when the report has none (null)
bytes() { all_jobs | jq -r --argjson id "$1" --arg f "$2" '[.[] | select(.id == $id)][0][$f] // -1'; }
# ended ID: job ID has ended (its report is there)
ended() { [ "$(pagewardenctl list --all --json | jq --argjson id "$1" '[(.ended // [])[] | select(.id == $id)] | length')" = 1 ]; }
# io CGDIR KEY: rbytes or wbytes of the data disk in a cgroup's io.stat (descendants included)
io() {
	[ -r "$1/io.stat" ] || { echo 0; return; }
	awk -v d="$PW_DATA_MAJMIN" -v k="$2" '$1 == d { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) v = a[2] } } END { print v + 0 }' "$1/io.stat"
}
# pid_of_exe PATH: the processes running that file (/proc/PID/exe)
pid_of_exe() { for d in /proc/[0-9]*; do [ "$(readlink "$d/exe" 2>/dev/null)" = "$1" ] && echo "${d#/proc/}"; done; }
# pid_of_args TEXT: the processes whose arguments, joined by spaces, start with TEXT
pid_of_args() {
	for d in /proc/[0-9]*; do
		case "$(tr '\0' ' ' 2>/dev/null <"$d/cmdline")" in "$1"*) echo "${d#/proc/}" ;; esac
	done
}
main_pid() { p=$(systemctl show -P MainPID "$1"); [ "$p" != 0 ] && echo "$p"; }
has_main_pid() { [ -n "$(main_pid "$1")" ]; }
cold_cache() { sync; echo 3 >/proc/sys/vm/drop_caches; }
size_of() { du -sb "$1" | cut -f1; }
# started NAME UNIT: run the rest as a transient service UNIT, as a timer would, and wait for it in the background
# (systemd-run --wait); its status in /run/UNIT.rc afterwards, its messages in /run/UNIT.log
started() {
	_u=$1
	shift
	# shellcheck disable=SC2086  # RUN_ENV: options
	(systemd-run --wait --unit="$_u" $RUN_ENV "$@" >"/run/$_u.log" 2>&1; echo $? >"/run/$_u.rc") &
}
finished() { test -s "/run/$1.rc"; }
# succeeded UNIT DESCRIPTION: its status is 0, else its messages as diagnostics
succeeded() {
	rc=$(cat "/run/$1.rc" 2>/dev/null)
	expect_eq "$2" "$rc" 0
	[ "$rc" = 0 ] || sed 's/^/# '"$1"': /' "/run/$1.log" | tail -15
}
# report ID TOOL: the end-of-job report's figures as diagnostics
report() {
	diag "$2: job $1 $(all_jobs | jq -r --argjson id "$1" '.[] | select(.id == $id) | "\(.how) after \(.runtime) s, read \(.io_read_bytes) B, wrote \(.io_written_bytes) B, peak \(.memory_peak) B, placed by \(.placed_by), cgroup \(.cgroup)"')"
}
# write_policy [with-borg]
write_policy() {
	exe="/usr/bin/restic, /usr/bin/pg_dump, /usr/bin/tar"
	[ "$1" = with-borg ] && exe="/usr/bin/borg, $exe"
	cat >$POLICY <<YAML
jobs:
  backup:
    match:
      units: [nightly-backup.service]
      exe: [$exe]
  copy:
    users: [backup]
    match:
      cmdline: ["rsync --server *"]
      user: [backup]
YAML
	chmod 0644 $POLICY
}

# ---- the host, before the daemon ----
diag "$(dpkg-query -W -f '${Package} ${Version}, ' borgbackup restic postgresql rsync openssh-server tar libpam-systemd)"
diag "/usr/bin/borg: $(head -1 /usr/bin/borg); /usr/bin/pg_dump -> $(readlink -f /usr/bin/pg_dump) ($(head -1 "$(readlink -f /usr/bin/pg_dump)"))"
# Small dirty limits: what a tool writes reaches the disk while it runs, in its job, not after it.
echo $((2 * MIB)) >/proc/sys/vm/dirty_background_bytes
echo $((8 * MIB)) >/proc/sys/vm/dirty_bytes
t0=$(uptime_ms)
mkdir -p "$SRC"
i=0
while [ $i -lt $((DATA_MIB / 32)) ]; do
	dd if=/dev/urandom of="$SRC/part$i" bs=1M count=32 status=none
	i=$((i + 1))
done
mkdir -p "$SRC/small"
for i in 1 2 3 4 5 6 7 8 9 10; do cp -a /etc "$SRC/small/etc$i" 2>/dev/null; done
sync
DATA=$(size_of "$SRC")
diag "data: $((DATA / MIB)) MiB in $SRC, made in $(($(uptime_ms) - t0)) ms"

check "borg init (encryption none)" borg init --encryption=none "$BORG_REPO"
check "restic init" sh -c 'restic init >/dev/null'

# PostgreSQL: Debian creates the cluster at install
PGV=$(ls /usr/lib/postgresql | sort -n | tail -1)
diag "clusters: $(pg_lsclusters -h | tr '\n' ';')"
if ! pg_lsclusters -h | grep -q "^$PGV *main "; then
	diag "no cluster $PGV/main: pg_createcluster"
	pg_createcluster "$PGV" main >/dev/null
fi
check "postgresql@$PGV-main starts" systemctl start "postgresql@$PGV-main.service"
wait_for 120 pg_isready -q
check "and answers" pg_isready -q

# The user backup (Debian's, uid 34) logs in with a key; root's rsync copies to it over ssh.
usermod -s /bin/bash backup
BHOME=$(getent passwd backup | cut -d: -f6)
install -d -m 0700 -o backup -g backup "$BHOME/.ssh"
install -d -m 0700 /root/.ssh
ssh-keygen -q -t ed25519 -N '' -f /root/.ssh/id_ed25519
install -m 0600 -o backup -g backup /root/.ssh/id_ed25519.pub "$BHOME/.ssh/authorized_keys"
install -d -o backup -g backup "$D/copy"
check "ssh.service runs" systemctl start ssh.service

# A unit that a units: rule names, running borg.
mkdir -p /etc/pagewarden/policies.d
cat >/etc/systemd/system/nightly-backup.service <<UNIT
[Service]
Type=oneshot
Environment=HOME=/root BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
ExecStart=/usr/bin/borg create --lock-wait 300 $BORG_REPO::nightly /etc/systemd
UNIT
systemctl daemon-reload

printf 'log_level: debug\n' >/etc/pagewarden/pagewarden.yaml
write_policy with-borg
chmod 0644 /etc/pagewarden/*.yaml
out=$(pagewardenctl check --strict 2>&1)
rc=$?
expect_eq "pagewardenctl check --strict accepts the policy on Debian (every exe: program can match)" $rc 0
echo "$out" | sed 's/^/# check: /'

# ---- 3a. borg running before the daemon starts: placed by the scan at start ----
systemd-run --quiet --unit=pw-borglock-a.service $RUN_ENV borg with-lock "$BORG_REPO" sleep 600
wait_for 120 test -d "$BORG_REPO/lock.exclusive"
apid=$(main_pid pw-borglock-a.service)
diag "borg with-lock: pid $apid, exe $(readlink /proc/$apid/exe), args: $(tr '\0' ' ' </proc/$apid/cmdline)"
check "pagewarden.service starts" systemctl start pagewarden.service
if ! systemctl is-active -q pagewarden.service; then
	journalctl -u pagewarden.service -q --no-pager -o cat | tail -20 | sed 's/^/# daemon: /'
	done_testing
	exit 1
fi
wait_daemon
wait_for 60 jobs_named_is borg 1
expect_eq "borg running before the daemon started is a job named borg" "$(jobs_named borg)" 1
id_a=$(newest borg)
expect_eq "of class backup" "$(field "$id_a" class)" backup
expect_eq "placed by its exe: rule" "$(field "$id_a" placed_by)" "rule exe /usr/bin/borg (jobs.yaml:5)"
expect_eq "its python3 process is in the job's cgroup" "$(cgroup_of "$apid")" "$(field "$id_a" cgroup)"
pagewardenctl stop "$id_a" >/dev/null
wait_for 60 ended "$id_a"
wait_for 60 test ! -e "$BORG_REPO/lock.exclusive"
check "stopped, it released the repository's lock" test ! -e "$BORG_REPO/lock.exclusive"

# ---- 2. the wrapper's other names are not held: with the daemon stopped, they run ----
dpid=$(main_pid pagewarden.service)
kill -STOP "$dpid"
for p in psql pgbench createdb; do
	t0=$(uptime_ms)
	timeout -s KILL 30 $p --version >/dev/null 2>&1
	rc=$?
	expect_eq "with the daemon stopped, $p --version runs (its exec is not held: $(($(uptime_ms) - t0)) ms)" "$rc" 0
done
# the probe sees a hold: restic's exec waits for the daemon
timeout -s KILL 5 restic version >/dev/null 2>&1
rc=$?
kill -CONT "$dpid"
expect_eq "while restic's exec is held (killed after 5 s)" "$rc" 137
wait_daemon

# psql, pgbench, createdb, createuser at work meanwhile (pgbench -i: a few minutes under TCG)
(
	runuser -u postgres -- createuser -s root && createdb bench && pgbench -i -s 2 bench
	echo $? >/run/pgbench-init.rc
) >/run/pgbench-init.log 2>&1 &

# ---- 3b. borg running when a reload adds the rule: placed by the scan at reload ----
write_policy
check "reload without /usr/bin/borg" pagewardenctl reload
systemd-run --quiet --unit=pw-borglock-b.service $RUN_ENV borg with-lock "$BORG_REPO" sleep 600
wait_for 120 test -d "$BORG_REPO/lock.exclusive"
bpid=$(main_pid pw-borglock-b.service)
expect_eq "while no rule names borg, it runs in its unit" "$(cgroup_of "$bpid")" /system.slice/pw-borglock-b.service
write_policy with-borg
check "reload with /usr/bin/borg" pagewardenctl reload
wait_for 60 jobs_named_is borg 2
expect_eq "then the reload's scan places it: a second job named borg" "$(jobs_named borg)" 2
id_b=$(newest borg)
expect_eq "its python3 process is in the job's cgroup" "$(cgroup_of "$bpid")" "$(field "$id_b" cgroup)"

# ---- 1. borg create, and 5. borg in nightly-backup.service, both waiting for that lock ----
started pw-borg.service borg create --lock-wait 300 "$BORG_REPO::tools" "$SRC"
systemctl start --no-block nightly-backup.service
wait_for 120 jobs_named_is borg 3
id=$(newest borg)
expect_eq "borg create run as a service is a job named borg" "$(jobs_named borg)" 3
expect_eq "of class backup" "$(field "$id" class)" backup
expect_eq "placed by its exe: rule" "$(field "$id" placed_by)" "rule exe /usr/bin/borg (jobs.yaml:5)"
wait_for 60 has_main_pid pw-borg.service
cpid=$(main_pid pw-borg.service)
expect_eq "its python3 process, waiting for the lock, is in the job's cgroup" "$(cgroup_of "$cpid")" "$(field "$id" cgroup)"
npid_is() { npid=$(pid_of_args "/usr/bin/python3 /usr/bin/borg create --lock-wait 300 $BORG_REPO::nightly" | head -1); [ -n "$npid" ]; }
wait_for 120 npid_is
expect_eq "borg in nightly-backup.service (a units: rule) stays in the unit's cgroup" "$(cgroup_of "$npid")" /system.slice/nightly-backup.service
unit_job() { all_jobs | jq -r '[.[] | select(.unit == "nightly-backup.service")] | max_by(.id) | .id // empty'; }
has_unit_job() { [ -n "$(unit_job)" ]; }
wait_for 60 has_unit_job
nid=$(unit_job)
expect_eq "the unit is the job" "$(field "$nid" cgroup)" /system.slice/nightly-backup.service
expect_eq "placed by its units: rule" "$(field "$nid" placed_by)" "rule units nightly-backup.service (jobs.yaml:4)"
expect_eq "and no job of its own for that borg" "$(jobs_named borg)" 3
cold_cache
r0=$(io $BACKUP_SLICE rbytes) w0=$(io $BACKUP_SLICE wbytes) s0=$(size_of "$BORG_REPO")
pagewardenctl stop "$id_b" >/dev/null # the lock goes: both go on
wait_for 900 finished pw-borg.service
succeeded pw-borg.service "borg create succeeded"
wait_for 60 ended "$id"
wait_for 300 unit_is nightly-backup.service inactive
expect_eq "nightly-backup.service succeeded" "$(systemctl show -P Result nightly-backup.service)" success
wait_for 60 ended "$nid"
sync
out=$(($(size_of "$BORG_REPO") - s0))
report "$id" borg
diag "borg: the repository grew by $((out / MIB)) MiB (both archives); class backup read $((($(io $BACKUP_SLICE rbytes) - r0) / MIB)) MiB, wrote $((($(io $BACKUP_SLICE wbytes) - w0) / MIB)) MiB of the data disk"
expect_eq "its I/O was counted at its class (its scope has no io controller)" "$(field "$id" io_counted_at)" class
check "from when it ran alone there: after the job it shared the class with ended" \
	test "$(field "$id" io_counted_from)" -gt "$(field "$id" started)"
expect_ge "borg's job read the data (its report, bytes)" "$(bytes "$id" io_read_bytes)" $((DATA * 95 / 100))
expect_ge "and wrote its archive (its report, bytes)" "$(bytes "$id" io_written_bytes)" $((out - DIRTY_SLACK - 2 * MIB))
expect_ge "class backup's io.stat read the data (bytes)" $(($(io $BACKUP_SLICE rbytes) - r0)) $((DATA * 95 / 100))
expect_ge "and wrote the archive (bytes)" $(($(io $BACKUP_SLICE wbytes) - w0)) $((out - 2 * MIB))
report "$nid" nightly-backup.service

# ---- 1. restic, tar: programs, held at their exec ----
for tool in restic tar; do
	n=$(jobs_named $tool)
	case $tool in
	restic) dest=$RESTIC_REPO ;;
	tar) dest=$D/src.tar ;;
	esac
	cold_cache
	r0=$(io $BACKUP_SLICE rbytes) w0=$(io $BACKUP_SLICE wbytes) s0=$(size_of "$dest" 2>/dev/null)
	case $tool in
	restic) started pw-restic.service restic backup --quiet "$SRC" ;;
	tar) started pw-tar.service tar cf "$dest" -C "$D" src ;;
	esac
	wait_for 120 jobs_named_is $tool $((n + 1))
	expect_eq "$tool run as a service is a job named $tool" "$(jobs_named $tool)" $((n + 1))
	id=$(newest $tool)
	expect_eq "of class backup" "$(field "$id" class)" backup
	expect_eq "placed by its exe: rule" "$(field "$id" placed_by)" "rule exe /usr/bin/$tool (jobs.yaml:5)"
	wait_for 900 finished pw-$tool.service
	succeeded pw-$tool.service "$tool succeeded"
	wait_for 60 ended "$id"
	sync
	out=$(($(size_of "$dest") - ${s0:-0}))
	report "$id" $tool
	diag "$tool: wrote $((out / MIB)) MiB; class backup read $((($(io $BACKUP_SLICE rbytes) - r0) / MIB)) MiB, wrote $((($(io $BACKUP_SLICE wbytes) - w0) / MIB)) MiB of the data disk"
	expect_ge "$tool's job read the data (its report, bytes)" "$(bytes "$id" io_read_bytes)" $((DATA * 95 / 100))
	expect_ge "and wrote its output (its report, bytes)" "$(bytes "$id" io_written_bytes)" $((out - DIRTY_SLACK))
	expect_ge "class backup's io.stat read the data (bytes)" $(($(io $BACKUP_SLICE rbytes) - r0)) $((DATA * 95 / 100))
	expect_ge "and wrote the output (bytes)" $(($(io $BACKUP_SLICE wbytes) - w0)) $((out - MIB))
done

# ---- 1. pg_dump through pg_wrapper, held at a table lock; 2. psql and pgbench beside it ----
wait_for 900 test -s /run/pgbench-init.rc
rc=$(cat /run/pgbench-init.rc)
expect_eq "createuser, createdb and pgbench -i -s 2 succeeded" $rc 0
[ $rc = 0 ] || tail -5 /run/pgbench-init.log | sed 's/^/# pgbench: /'
diag "database bench: $(psql -d bench -tAc "SELECT pg_size_pretty(pg_database_size('bench'))")"
systemd-run --quiet --unit=pw-psql.service psql -d bench -c "BEGIN; LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600);"
locked() { [ "$(psql -d bench -tAc "SELECT count(*) FROM pg_locks WHERE relation = 'pgbench_accounts'::regclass AND mode = 'AccessExclusiveLock' AND granted")" = 1 ]; }
wait_for 120 locked
check "psql holds pgbench_accounts locked" locked
w0=$(io $BACKUP_SLICE wbytes)
started pw-pgdump.service pg_dump -f "$D/bench.sql" bench
wait_for 120 jobs_named_is pg_dump 1
expect_eq "pg_dump run as a service is a job named pg_dump" "$(jobs_named pg_dump)" 1
id=$(newest pg_dump)
expect_eq "of class backup" "$(field "$id" class)" backup
expect_eq "placed by its exe: rule" "$(field "$id" placed_by)" "rule exe /usr/bin/pg_dump (jobs.yaml:5)"
waits_for_lock() { [ "$(psql -d bench -tAc "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND wait_event_type = 'Lock'")" -ge 1 ]; }
wait_for 120 waits_for_lock pg_dump
REAL=/usr/lib/postgresql/$PGV/bin
dpids=$(pid_of_exe $REAL/pg_dump)
expect_eq "the real $REAL/pg_dump runs (waiting for the lock): one process" "$(echo $dpids | wc -w)" 1
expect_eq "it is the service's main process, the wrapper's exec" "$dpids" "$(main_pid pw-pgdump.service)"
expect_eq "and it runs in the job's cgroup" "$(cgroup_of "$dpids")" "$(field "$id" cgroup)"
started pw-pgbench.service pgbench -n -S -T 5 bench
wait_for 120 waits_for_lock pgbench
bpids=$(pid_of_exe $REAL/pgbench)
expect_eq "pgbench runs meanwhile (waiting for the lock)" "$(echo $bpids | wc -w)" 1
expect_eq "in its service's cgroup, not placed" "$(cgroup_of "$bpids")" /system.slice/pw-pgbench.service
qpids=$(pid_of_exe $REAL/psql)
expect_eq "psql holding the lock runs in its service's cgroup, not placed" "$(cgroup_of "$qpids")" /system.slice/pw-psql.service
check "the lock goes" sh -c "psql -d bench -qtAc \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND pid <> pg_backend_pid()\" >/dev/null"
wait_for 900 finished pw-pgdump.service
succeeded pw-pgdump.service "pg_dump succeeded"
wait_for 300 finished pw-pgbench.service
succeeded pw-pgbench.service "pgbench succeeded"
wait_for 60 ended "$id"
sync
out=$(size_of "$D/bench.sql")
report "$id" pg_dump
diag "pg_dump: the dump is $((out / MIB)) MiB; class backup wrote $((($(io $BACKUP_SLICE wbytes) - w0) / MIB)) MiB of the data disk"
expect_ge "pg_dump's job wrote the dump (its report, bytes)" "$(bytes "$id" io_written_bytes)" $((out - DIRTY_SLACK))
expect_ge "class backup's io.stat wrote it (bytes)" $(($(io $BACKUP_SLICE wbytes) - w0)) $((out - MIB))
systemctl reset-failed pw-psql.service 2>/dev/null

# ---- 4. rsync --server under sshd, for the user backup ----
cold_cache
w0=$(io $COPY_SLICE wbytes)
started pw-rsync.service rsync -a -e "ssh -i /root/.ssh/id_ed25519 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes" "$SRC/" "backup@localhost:$D/copy/"
wait_for 180 jobs_named_is rsync 1
# the client stopped, the server waits for it: where everything runs, at leisure
systemctl kill -s STOP pw-rsync.service
expect_eq "rsync --server is a job named rsync" "$(jobs_named rsync)" 1
id=$(newest rsync)
expect_eq "of class copy" "$(field "$id" class)" copy
expect_eq "placed by its cmdline: rule" "$(field "$id" placed_by)" "rule cmdline rsync --server * (jobs.yaml:9)"
expect_eq "for the user backup" "$(field "$id" user)" backup
spids=$(pid_of_args "rsync --server ")
for p in $spids; do
	pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status")
	diag "rsync --server: pid $p, uid $(awk '/^Uid:/ { print $2 }' "/proc/$p/status"), in $(cgroup_of "$p"); parent $pp ($(tr '\0' ' ' <"/proc/$pp/cmdline")) in $(cgroup_of "$pp")"
done
in_job=0
for p in $spids; do [ "$(cgroup_of $p)" = "$(field "$id" cgroup)" ] && in_job=$((in_job + 1)); done
check "its processes run in the job ($in_job of $(echo $spids | wc -w))" test "$in_job" -ge 1 -a "$in_job" = "$(echo $spids | wc -w)"
sshd_session=$(for p in $(pgrep -u backup -x sshd); do cgroup_of $p; done | head -1)
diag "backup's sshd session: $sshd_session"
check "it came from backup's session under user.slice (its sshd is in $sshd_session)" \
	sh -c "echo '$sshd_session' | grep -q '^/user.slice/user-$(id -u backup).slice/session-.*\.scope$'"
client=$(main_pid pw-rsync.service)
expect_eq "root's rsync client is not placed (args: $(tr '\0' ' ' </proc/$client/cmdline | cut -c1-40)...)" "$(cgroup_of "$client")" /system.slice/pw-rsync.service
systemctl kill -s CONT pw-rsync.service
wait_for 900 finished pw-rsync.service
succeeded pw-rsync.service "rsync succeeded"
wait_for 60 ended "$id"
sync
report "$id" rsync
diag "rsync: class copy wrote $((($(io $COPY_SLICE wbytes) - w0) / MIB)) MiB of the data disk"
expect_ge "rsync --server's job wrote the data (its report, bytes)" "$(bytes "$id" io_written_bytes)" $((DATA - DIRTY_SLACK))
expect_ge "class copy's io.stat wrote it (bytes)" $(($(io $COPY_SLICE wbytes) - w0)) $((DATA - MIB))

# ---- 6. nothing else was placed ----
all=$(all_jobs)
diag "jobs: $(echo "$all" | jq -r 'sort_by(.id) | map("\(.id) \(.name) (\(.class), \(.user), \(.placed_by))") | join("; ")')"
expect_eq "no job runs any more" "$(pagewardenctl list --json | jq '.jobs | length')" 0
expect_eq "jobs seen: 3 borg, restic, tar, pg_dump, rsync and nightly-backup.service" "$(echo "$all" | jq length)" 8
expect_eq "by name" "$(echo "$all" | jq -r '[.[] | select(.unit == null) | .name] | sort | join(" ")')" "borg borg borg pg_dump restic rsync tar"

journalctl -u pagewarden.service -q --no-pager -o cat | grep -E '^(Class |Job [0-9]+ \(|Unit |[0-9]+ programs? )' | sed 's/^/# daemon: /'
journalctl -u pagewarden.service -p warning -q --no-pager -o cat | head -20 | sed 's/^/# warning: /'
check "pagewarden.service stops" systemctl stop pagewarden.service
done_testing
