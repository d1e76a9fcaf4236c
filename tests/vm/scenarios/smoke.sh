#!/bin/sh
# shellcheck disable=SC2016,SC2317  # single-quoted code for sh -c/awk; helpers called via check
# smoke.sh: checks the test VM itself (run inside the guest by tests/vm/vm-run,
# busybox sh).  TAP output; exits non-zero if any assertion failed.

CG=/sys/fs/cgroup
CHILD=$CG/pw-smoke
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { echo "# $*"; }
# check DESCRIPTION COMMAND...
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
has_word() { # FILE WORD
	tr ' ' '\n' <"$1" 2>/dev/null | grep -qx "$2"
}
mounted() { # MOUNTPOINT FSTYPE
	awk -v m="$1" -v t="$2" '$2 == m && $3 == t { f = 1 } END { exit !f }' /proc/mounts
}

diag "kernel: $(uname -r) (PW_KERNEL=$PW_KERNEL, $PW_KERNEL_PKG)"
diag "cmdline: $(cat /proc/cmdline)"
diag "cpus: $(nproc), $(grep MemTotal /proc/meminfo)"
case $(uname -r) in
"$PW_KERNEL".*) ok "kernel release $(uname -r) matches PW_KERNEL=$PW_KERNEL" ;;
*) not_ok "kernel release $(uname -r) does not match PW_KERNEL=$PW_KERNEL" ;;
esac

# cgroup v2
check "cgroup2 mounted at $CG" mounted "$CG" cgroup2
diag "controllers: $(cat $CG/cgroup.controllers 2>/dev/null)"
for c in memory io cpu; do
	check "cgroup.controllers has $c" has_word $CG/cgroup.controllers "$c"
done
sc=$(cat $CG/cgroup.subtree_control 2>/dev/null)
if [ -z "$sc" ]; then
	ok "no controller pre-enabled in the root's cgroup.subtree_control"
else
	not_ok "root cgroup.subtree_control is not empty: '$sc'"
fi

# PSI
for r in cpu memory io; do
	check "/proc/pressure/$r exists" test -r /proc/pressure/$r
done
if echo "+memory +io +cpu" >$CG/cgroup.subtree_control; then
	ok "enabled memory io cpu in the root's cgroup.subtree_control"
else
	not_ok "could not enable memory io cpu in the root's cgroup.subtree_control"
fi
rmdir "$CHILD" 2>/dev/null
check "created child cgroup $CHILD" mkdir "$CHILD"
check "child has memory.pressure" test -e "$CHILD/memory.pressure"
if (exec 3<>"$CHILD/memory.pressure" && echo "some 150000 1000000" >&3) 2>/dev/null; then
	ok "PSI trigger 'some 150000 1000000' registered on $CHILD/memory.pressure"
else
	not_ok "PSI trigger registration on $CHILD/memory.pressure failed"
fi
if [ -e "$CHILD/memory.reclaim" ]; then
	diag "memory.reclaim: present"
else
	diag "memory.reclaim: ABSENT"
fi
check "child accepts memory.high" sh -c "echo 64M >'$CHILD/memory.high'"
check "child has io.max" test -e "$CHILD/io.max"
check "io.max accepts a limit for the data disk $PW_DATA_MAJMIN" \
	sh -c "echo '$PW_DATA_MAJMIN rbps=10485760' >'$CHILD/io.max' && grep -q '^$PW_DATA_MAJMIN rbps=10485760' '$CHILD/io.max'"
check "moved this shell into $CHILD and back" \
	sh -c "echo \$\$ >'$CHILD/cgroup.procs' && echo \$\$ >'$CG/cgroup.procs'"
check "removed $CHILD" rmdir "$CHILD"

# Data disk
diag "data disk: PW_DATA_DEV=$PW_DATA_DEV PW_DATA_MAJMIN=$PW_DATA_MAJMIN PW_DATA_MNT=$PW_DATA_MNT"
check "data disk is a block device" test -b "$PW_DATA_DEV"
check "data disk mounted at /data (ext4)" mounted /data ext4
check "PW_DATA_MNT is /data" test "$PW_DATA_MNT" = /data
check "PW_DATA_MAJMIN matches sysfs" \
	test "$PW_DATA_MAJMIN" = "$(cat "/sys/block/${PW_DATA_DEV##*/}/dev" 2>/dev/null)"
check "/data is writable" \
	sh -c 'dd if=/dev/zero of=/data/smoke bs=1M count=4 2>/dev/null && sync && test "$(wc -c </data/smoke)" -eq 4194304 && rm /data/smoke'

# Swap
diag "swap: PW_SWAP_DEV=$PW_SWAP_DEV PW_SWAP_MAJMIN=$PW_SWAP_MAJMIN"
if [ -n "$PW_SWAP_DEV" ]; then
	check "swap $PW_SWAP_DEV active in /proc/swaps" \
		awk -v d="$PW_SWAP_DEV" '$1 == d { f = 1 } END { exit !f }' /proc/swaps
else
	n=$((n + 1))
	echo "ok $n - swap active # SKIP started with --no-swap"
fi
check "/tmp is a tmpfs" mounted /tmp tmpfs

echo "1..$n"
if [ "$failed" -ne 0 ]; then
	diag "$failed of $n assertions failed"
	exit 1
fi
exit 0
