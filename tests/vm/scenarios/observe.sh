#!/bin/sh
# Observation, on a systemd host whose policy only protects an application
# (no job class at all: a fresh install): two unplaced copies evict it, a
# backup service (Debian's tar, started as a timer would start it) and a
# user's rsync in her login session (su, a session of logind); a quiet
# service does a little I/O meanwhile.  `pagewardenctl suggest` names both
# copies with their evidence, not the quiet service nor the application; its
# policy file is valid for check as printed and, once reloaded, places both
# at their next run; the episodes survive a restart; an application that
# grows by itself is not blamed.
# Waits poll for what they wait for, with limits far above an idle run's
# time (a loaded machine, a sanitizer build).
. /lib.sh
MIB=1048576
D=$PW_DATA_MNT
APP_CG=$CG/system.slice/pw-app.service
POLICY=/etc/pagewarden/policies.d/protect.yaml

mkdir -p /etc/pagewarden/policies.d /var/lib/pagewarden
# carol may use the socket (group users), so that suggest's refusal is the daemon's
printf 'log_level: debug\nsocket_group: users\n' >/etc/pagewarden/pagewarden.yaml
rm -f /etc/pagewarden/policies.d/*.yaml
cat >$POLICY <<YAML
protect:
  app:
    unit: pw-app.service
    memory: {min: auto}
YAML
chmod 0644 /etc/pagewarden/*.yaml $POLICY
diag "$(dpkg-query -W -f '${Package} ${Version}, ' tar rsync libpam-systemd)"

# The data: the application's file, what the backup archives, what carol copies.
pwload write $D/app.dat 160 >/dev/null
mkdir -p $D/src $D/carol-src $D/archive
pwload write $D/src/db.dump 600 >/dev/null
pwload write $D/carol-src/photos.bin 400 >/dev/null
# Not in the cache: written here, its pages would be charged to this scenario's unit, not to the copies.
sync
echo 3 >/proc/sys/vm/drop_caches
useradd -m -u 1002 -G users carol
chown -R carol $D/carol-src

# The backup, as a timer would start it: a unit of its own.
cat >/etc/systemd/system/backup-db.service <<UNIT
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'rm -f $D/archive/db.tar; exec tar -cf $D/archive/db.tar -C $D src'
UNIT
# A service that reads a little, often: not what evicts anything.
cat >/etc/systemd/system/quiet.service <<UNIT
[Service]
ExecStart=/bin/sh -c 'while :; do cat /etc/services /usr/bin/tar >/dev/null; sleep 1; done'
UNIT
systemctl daemon-reload
systemctl start quiet.service

# carol's copy: rsync in a login session (su opens one through pam_systemd).
carol_copy() { su -l carol -c "rsync -a $D/carol-src/ /home/carol/copy/"; }

# The application: reads its file at random, all the time.
echo busy >/run/pw-app.mode
systemd-run --unit=pw-app.service -p MemoryAccounting=yes -E PWAPP_PASSES=1 pwapp 16 $D/app.dat /run/pw-app.mode >/dev/null 2>&1
app_cached() { [ "$(($(keyed $APP_CG/memory.stat file 2>/dev/null || echo 0) / MIB))" -ge 150 ]; }
check "the application has its file in its cache" wait_for 120 app_cached

check "pagewarden.service starts with a policy that only protects" systemctl start pagewarden.service
wait_daemon
expect_eq "observation is on" "$(pagewardenctl status --json | jq -r .observation.on)" true

# ---- 1. the copies run, nothing places them ----
obs_cpu() { pagewardenctl status --json | jq '.observation.cpu_us'; }
obs_windows() { pagewardenctl status --json | jq '.observation.windows'; }
# after_windows N: until N more observation windows (10 s apart) have been taken, where a fixed sleep
# would wait for the slowest case
windows_reach() { [ "$(obs_windows)" -ge "$1" ]; }
after_windows() { wait_for $((12 * $1 + 30)) windows_reach $(($(obs_windows) + $1)); }
cpu0=$(obs_cpu) w0=$(obs_windows) d0=$(oncpu_us $(systemctl show -P MainPID pagewarden.service))
t0=$(uptime_ms) s0=$(date +%s)
check "the backup runs (tar)" systemctl start backup-db.service
t1=$(uptime_ms)
check "carol's copy runs (rsync, in her session)" carol_copy
diag "both copies took $((($(uptime_ms) - t0) / 1000)) s (the backup $(((t1 - t0) / 1000)) s)"
# When the application lost its cache, against the windows: what a failure below needs to be read
diag "the application's misses a second meanwhile: $(journalctl -q -o cat -u pw-app.service --since @$s0 |
	sed -n 's/.* misses=\([0-9]*\) .*/\1/p' | tr '\n' ' ')"
diag "during them observation took $(($(obs_cpu) - cpu0)) us of CPU in $(($(obs_windows) - w0)) windows;" \
	"the whole daemon $(($(oncpu_us $(systemctl show -P MainPID pagewarden.service)) - d0)) us"
session=$(journalctl -q -o cat -u 'session-*.scope' 2>/dev/null | head -1)
diag "carol's session: $(ls -d $CG/user.slice/user-1002.slice/session-* 2>/dev/null) $session"

suspects() { pagewardenctl suggest --json | jq -r '.suspects[].name' | sort | tr '\n' ' '; }
named() { suspects | grep -q -- "$1"; }
both_named() { named backup-db.service && named /usr/bin/rsync; }
# A window is 10 s; an episode shows in suggest while it goes on.
check "suggest names both within two windows after they ended" wait_for 60 both_named
diag "suspects: $(suspects)"
pagewardenctl suggest | sed 's/^/# /'
json=$(pagewardenctl suggest --json)
backup=$(echo "$json" | jq -c '.suspects[] | select(.name == "backup-db.service")')
rsync=$(echo "$json" | jq -c '.suspects[] | select(.name == "/usr/bin/rsync")')
# field JSON KEY: a number of it, 0 when it is not there
field() {
	_v=$(echo "$1" | jq "$2 // 0" 2>/dev/null)
	echo "${_v:-0}"
}
expect_ge "the backup's evidence: page cache charged to it (MiB)" "$(($(field "$backup" .charged_bytes) / MIB))" 256
expect_eq "named by its unit" "$(echo "$backup" | jq -r .unit)" backup-db.service
expect_ge "carol's copy: page cache charged to her session (MiB)" "$(($(field "$rsync" .charged_bytes) / MIB))" 128
expect_eq "named by its program, as carol's" "$(echo "$rsync" | jq -r '.programs[0].uid')" 1002
check "with its command line" sh -c "echo '$rsync' | jq -r '.programs[0].cmdline' | grep -q '^rsync -a $D/carol-src/'"
expect_ge "its program's own I/O (/proc/PID/io, MiB)" "$(($(field "$rsync" '.programs[0].bytes') / MIB))" 128
lost=$(field "$backup" '[.applications[] | select(.name == "app") | .lost_bytes] | add')
expect_ge "the application's loss meanwhile is in the evidence (MiB)" "$((lost / MIB))" 4
right=0 wrong=0
for name in $(suspects); do
	case $name in backup-db.service | /usr/bin/rsync) right=$((right + 1)) ;; *) wrong=$((wrong + 1)); diag "also named: $name" ;; esac
done
diag "precision: $right named rightly, $wrong wrongly (of 2 copies and a quiet service, an application, nothing else streaming)"
check "neither the quiet service nor the application is named" \
	sh -c "! pagewardenctl suggest --json | jq -r '.suspects[].name' | grep -q -e quiet -e pw-app"
expect_eq "status lists the unplaced work too (no command lines)" \
	"$(pagewardenctl status --json | jq -r '[.unplaced[] | select(.name == "backup-db.service")] | length'),$(pagewardenctl status --json | jq '[.unplaced[] | has("programs")] | any')" "1,false"
check "metrics count it per suspect" sh -c \
	"pagewardenctl metrics | grep -q '^pagewarden_unplaced_charged_bytes{suspect=\"backup-db.service\"} [1-9]'"
check "suggest is root's (it names other users' command lines)" sh -c \
	"! su -s /bin/sh carol -c 'pagewardenctl suggest' 2>/tmp/suggest.err"
check "the daemon says so" grep -q "only root may read what observation found" /tmp/suggest.err
check "status is hers to read (its list has no command lines)" sh -c "su -s /bin/sh carol -c 'pagewardenctl status --json' | jq -e '.unplaced | length > 0' >/dev/null"

# ---- 2. the suggested policy places them at their next run ----
pagewardenctl suggest --policy >/tmp/unplaced.yaml
sed 's/^/# /' /tmp/unplaced.yaml
check "the suggested policy is valid for check as printed" pagewardenctl check /tmp/unplaced.yaml
install -m 0644 /tmp/unplaced.yaml /etc/pagewarden/policies.d/unplaced.yaml
check "the whole configuration with it checks" pagewardenctl check
check "reload with it" pagewardenctl reload
before=$(pagewardenctl suggest --json | jq '[.suspects[] | select(.name == "backup-db.service") | .charged_bytes] | add')
systemctl start backup-db.service &
BACKUP=$!
backup_placed() { pagewardenctl list --json | jq -e '.jobs[] | select(.unit == "backup-db.service" and .class == "unplaced")' >/dev/null; }
check "the backup's next run is a job of the suggested class" wait_for 60 backup_placed
carol_copy &
COPY=$!
rsync_placed() { pagewardenctl list --all --json | jq -e '[(.jobs // [])[], (.ended // [])[]] | .[] | select(.name == "rsync" and .class == "unplaced" and .user == "carol")' >/dev/null; }
check "carol's next copy is a job of the suggested class" wait_for 60 rsync_placed
wait $BACKUP $COPY
check "a window after they ended" after_windows 1
after=$(pagewardenctl suggest --json | jq '[.suspects[] | select(.name == "backup-db.service") | .charged_bytes] | add')
expect_eq "placed, the backup adds nothing to its evidence" "$after" "$before"

# ---- 3. nothing lost at a restart ----
n=$(pagewardenctl suggest --json | jq '.episodes | length')
check "the daemon restarts" systemctl restart pagewarden.service
wait_daemon
expect_eq "the episodes are kept over a restart" "$(pagewardenctl suggest --json | jq '.episodes | length')" "$n"
check "and still name both" both_named

# ---- 4. an application that grows by itself is not blamed ----
rm -f /etc/pagewarden/policies.d/unplaced.yaml
pagewardenctl reload >/dev/null
names0=$(suspects)
episodes0=$(pagewardenctl suggest --json | jq '.episodes | length')
sh -c "echo \$\$ >$APP_CG/cgroup.procs; exec pwload churn 700" >/dev/null 2>&1 &
GROW=$!
sleep 25
kill $GROW
check "a window after the growth" after_windows 1
diag "episodes while the application grew: $(($(pagewardenctl suggest --json | jq '.episodes | length') - episodes0))"
expect_eq "its growth names no one new" "$(suspects)" "$names0"
check "and never the application" sh -c "! pagewardenctl suggest --json | jq -r '.suspects[].cgroup' | grep -q pw-app"

# ---- the cost ----
obs=$(pagewardenctl status --json | jq -c .observation)
diag "observation: $obs"
windows=$(echo "$obs" | jq .windows)
expect_ge "it observed in windows of 10 s" "$windows" 3
diag "daemon CPU per window: $(($(echo "$obs" | jq .cpu_us) / windows)) us over $windows windows, $(echo "$obs" | jq .cgroups) cgroups looked at"
diag "episodes file: $(wc -c </var/lib/pagewarden/observations.json) bytes for $(pagewardenctl suggest --json | jq '.episodes | length') episodes"

check "the daemon stops cleanly" systemctl stop pagewarden.service
done_testing
