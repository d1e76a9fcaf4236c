#!/bin/sh
# shellcheck disable=SC2016  # single-quoted code for sh -c
# systemd-smoke.sh: checks the systemd test VM itself (tests/vm/vm-run
# --systemd --install BUILDDIR --file tests/vm/scenarios/lib.sh:/lib.sh):
# systemd as PID 1 with the system up, cgroup v2 with the controllers
# pagewarden needs, the bus, transient units, the data and swap disks, and
# pagewarden installed as a package would be (unit present, not enabled).
# Runs from pw-scenario.service under /bin/sh (dash).  TAP output.

# shellcheck source=lib.sh
. /lib.sh

diag "kernel: $(uname -r) (PW_KERNEL=$PW_KERNEL, $PW_KERNEL_PKG), init: ${PW_VM_INIT:-?}"
diag "cmdline: $(cat /proc/cmdline)"
diag "systemd: $(systemctl --version | head -n 1)"

# --- systemd as PID 1, and the system up ------------------------------------

expect_eq "PID 1 is systemd" "$(cat /proc/1/comm)" systemd
case $(readlink /proc/1/exe) in
*/lib/systemd/systemd) ok "PID 1 runs $(readlink /proc/1/exe)" ;;
*) not_ok "PID 1 runs $(readlink /proc/1/exe), want .../lib/systemd/systemd" ;;
esac

# --wait: until the boot's job queue is empty (pw-scenario.service is
# Type=exec, so its own start job does not hold it).
state=$(timeout 120 systemctl is-system-running --wait 2>/dev/null)
case $state in
running) ok "systemctl is-system-running: running" ;;
degraded)
	ok "systemctl is-system-running: degraded (failed units below)"
	systemctl --no-pager --no-legend --plain --failed | while read -r line; do diag "failed: $line"; done
	;;
*) not_ok "systemctl is-system-running: '$state', want running or degraded" ;;
esac
diag "$(systemd-analyze time 2>/dev/null | head -n 1)"
systemd-analyze blame --no-pager 2>/dev/null | head -n 5 | while read -r line; do diag "blame: $line"; done
expect_eq "multi-user.target is active" "$(systemctl is-active multi-user.target)" active

# --- cgroup v2 -----------------------------------------------------------------

expect_eq "cgroup2 is mounted at $CG" "$(stat -f -c %T "$CG")" cgroup2fs
controllers=$(cat "$CG/cgroup.controllers")
diag "root cgroup.controllers: $controllers"
diag "root cgroup.subtree_control: $(cat "$CG/cgroup.subtree_control")"
diag "cgroup2 mount options: $(awk -v m="$CG" '$2 == m { print $4 }' /proc/mounts)"
for c in memory io cpu; do
	case " $controllers " in
	*" $c "*) ok "controller $c is available" ;;
	*) not_ok "controller $c is not in $CG/cgroup.controllers" ;;
	esac
done
check "no cgroup v1 hierarchy is mounted" sh -c '! awk '\''$3 == "cgroup" { f = 1 } END { exit !f }'\'' /proc/mounts'
expect_eq "systemctl show -p ControlGroup system.slice" \
	"$(systemctl show -p ControlGroup system.slice)" "ControlGroup=/system.slice"
self=$(sed -n 's/^0:://p' /proc/self/cgroup)
expect_eq "the scenario runs in pw-scenario.service's cgroup" "$self" /system.slice/pw-scenario.service

# --- the bus ---------------------------------------------------------------------

reply=$(busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
	org.freedesktop.systemd1.Manager GetUnit s system.slice 2>&1)
expect_eq "busctl: Manager.GetUnit system.slice" "$reply" 'o "/org/freedesktop/systemd1/unit/system_2eslice"'
expect_eq "dbus.service is active" "$(systemctl is-active dbus.service)" active

# --- a transient scope with a memory limit --------------------------------------

check "systemd-run --scope -p MemoryHigh=64M true" systemd-run --quiet --scope -p MemoryHigh=64M true
high=$(systemd-run --quiet --scope --unit=pw-smoke-high.scope -p MemoryHigh=64M \
	sh -c 'cat "/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/memory.high"' 2>&1)
expect_eq "the scope's cgroup has memory.high = 64M" "$high" 67108864
where=$(systemd-run --quiet --scope --unit=pw-smoke-where.scope sh -c 'sed -n "s/^0:://p" /proc/self/cgroup' 2>&1)
expect_eq "the scope runs in its own cgroup" "$where" /system.slice/pw-smoke-where.scope

# --- data and swap disks -------------------------------------------------------

expect_eq "PW_DATA_MNT is /data" "$PW_DATA_MNT" /data
expect_eq "$PW_DATA_DEV is mounted on /data (ext4)" \
	"$(awk -v m=/data '$2 == m { print $1, $3 }' /proc/mounts)" "$PW_DATA_DEV ext4"
expect_eq "PW_DATA_MAJMIN matches $PW_DATA_DEV" "$PW_DATA_MAJMIN" \
	"$(cat "/sys/class/block/${PW_DATA_DEV#/dev/}/dev" 2>/dev/null)"
expect_eq "data.mount is active" "$(systemctl is-active data.mount)" active
check "/data is writable" sh -c 'echo x >/data/pw-smoke && rm /data/pw-smoke'
if [ -n "$PW_SWAP_DEV" ]; then
	check "swap is active on $PW_SWAP_DEV" grep -q "^$PW_SWAP_DEV " /proc/swaps
else
	ok "no swap disk (--no-swap) # SKIP"
fi
diag "root: $(df -h / | awk 'NR == 2 { print $1, $2 " size, " $4 " free" }')"

# --- pagewarden, installed and not enabled -----------------------------------

check "pagewardend is installed" test -x "$(command -v pagewardend)"
check "pagewardenctl is installed" test -x "$(command -v pagewardenctl)"
diag "pagewardend: $(command -v pagewardend), pagewardenctl: $(command -v pagewardenctl)"
check "the shipped settings file is installed" test -r /etc/pagewarden/pagewarden.yaml
if out=$(pagewardend --check 2>&1); then
	ok "pagewardend --check passes with the shipped configuration"
else
	not_ok "pagewardend --check fails with the shipped configuration"
	echo "$out" | while read -r line; do diag "$line"; done
fi
check "pagewardenctl --version runs" sh -c 'pagewardenctl --version >/dev/null'
if systemctl cat pagewarden.service >/tmp/pw-unit 2>&1; then
	ok "systemctl cat pagewarden.service ($(head -n 1 /tmp/pw-unit | sed 's/^# //'))"
else
	not_ok "systemctl cat pagewarden.service: $(cat /tmp/pw-unit)"
fi
exec_start=$(systemctl show -p ExecStart --value pagewarden.service | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
check "ExecStart ($exec_start) is an executable" test -x "$exec_start"
expect_eq "pagewarden.service is not enabled" "$(systemctl is-enabled pagewarden.service 2>&1)" disabled
expect_eq "pagewarden.service is not running" "$(systemctl is-active pagewarden.service 2>&1)" inactive
diag "unit search path: $(systemd-analyze unit-paths 2>/dev/null | grep -c .) directories, /usr/local/lib/systemd/system $(systemd-analyze unit-paths 2>/dev/null | grep -qx /usr/local/lib/systemd/system && echo included || echo NOT included)"

done_testing
