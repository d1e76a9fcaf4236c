#!/bin/bash
# tests/vm/vm-run's second boot: a guest that dies before its scenario has
# started (before lib.sh's "scenario started" line) is booted once more,
# with a warning, and a second death is reported; a guest that dies after
# it is never booted again.  The deaths are real kernel panics (sysrq c)
# in the busybox guest of the 6.1 kernel, and a hang that the start deadline
# ends; and --disk-profile throttles the data disk.  Seven boots, 2-3 minutes.
. "$top_srcdir/tests/cli/lib.sh"
if [ -n "${PW_VM_SKIP:-}" ]; then
        echo "1..0 # SKIP PW_VM_SKIP is set ($PW_VM_SKIP)"
        exit 0
fi
VMRUN="$top_srcdir/tests/vm/vm-run"
cache=${PW_VM_CACHE:-$top_builddir/vm-cache}
mkdir -p "$cache"
export PW_VM_CACHE=$cache
# One qemu at a time on the machine, as tests/vm/vm-test does.
exec 9>"$cache/vm.lock"
flock 9

# Dies before it prints anything: as if the kernel or the first shell died.
cat >"$TMP/early.sh" <<'EOF'
echo c >/proc/sysrq-trigger
EOF
# Dies after lib.sh said it started.
cat >"$TMP/late.sh" <<'EOF'
. /lib.sh
ok "the scenario ran"
echo c >/proc/sysrq-trigger
EOF
boot() { # boot SCENARIO [VM-RUN OPTIONS]: vm-run on it, the busybox guest, 6.1
        local s=$1
        shift
        run "$VMRUN" --kernel 6.1 --no-swap --data-size 64M --timeout 120 "$@" \
                --file "$top_srcdir/tests/vm/scenarios/lib.sh:/lib.sh" \
                --console-log "$TMP/console-$(basename "$s" .sh).log" "$s"
}

boot "$TMP/early.sh"
expect_status 99 "a guest that dies twice before its scenario starts is an infrastructure failure"
expect_in "$ERR" "the guest died before its scenario started (its kernel reported" "the first death is named, with the kernel's words"
expect_in "$ERR" "booting once more" "and the guest is booted once more"
n=$(grep -c "booting once more" "$TMP/err")
ok $([ "$n" -eq 1 ]; echo $?) "only once ($n)"
test -s "$TMP/console-early.boot1.log"
ok $? "the first boot's console is kept next to the second's"
expect_in "$ERR" "without reporting a scenario exit status" "the second death is reported as such"

# Hangs before it prints anything, with nothing on the console (seen under
# TCG): the boot ends at the start deadline, not at --timeout (a bench's is
# 40 minutes), and the guest is booted once more.
cat >"$TMP/hang.sh" <<'EOF'
sleep 1000
EOF
t0=$SECONDS
PW_VM_START_DEADLINE=15 boot "$TMP/hang.sh" --timeout 600
expect_status 99 "a guest that hangs twice before its scenario starts is an infrastructure failure"
expect_in "$ERR" "the guest died before its scenario started (no scenario output within 15 s (PW_VM_START_DEADLINE)" "the first hang is named"
n=$(grep -c "booting once more" "$TMP/err")
ok $([ "$n" -eq 1 ]; echo $?) "and the guest is booted once more, once ($n)"
expect_in "$ERR" "guest did not start its scenario: no scenario output within 15 s" "the second hang is reported as such"
ok $([ $((SECONDS - t0)) -lt 300 ]; echo $?) "both boots ended at the deadline, not at --timeout 600 ($((SECONDS - t0)) s)"

# --disk-profile: what the bench's storage costs.  1000 direct 4 KiB reads of the data disk take at
# least 4.9 s at the disk profile's 200 IOPS (qemu's burst is a tenth of a second's worth); unthrottled
# they take well under that, even on a loaded machine.
cat >"$TMP/disk.sh" <<'EOF'
. /lib.sh
t0=$(uptime_ms)
dd if="$PW_DATA_DEV" of=/dev/null bs=4096 count=1000 iflag=direct 2>/dev/null
echo "reads_ms=$(($(uptime_ms) - t0))"
EOF
reads_ms() { sed -n 's/^reads_ms=//p' <<<"$OUT"; }
boot "$TMP/disk.sh" --disk-profile disk
expect_status 0 "--disk-profile disk boots"
expect_in "$ERR" "disks: disk" "and says so"
disk_ms=$(reads_ms)
ok $([ "${disk_ms:-0}" -ge 3000 ]; echo $?) "1000 direct reads at 200 IOPS take at least 3 s (${disk_ms:-none} ms)"
boot "$TMP/disk.sh"
expect_status 0 "the default, ram, boots"
ram_ms=$(reads_ms)
ok $([ -n "$ram_ms" ] && [ "$ram_ms" -lt 3000 ]; echo $?) "unthrottled they take less (${ram_ms:-none} ms)"
run "$VMRUN" --disk-profile tape "$TMP/disk.sh"
expect_status 99 "an unknown profile is refused"
expect_in "$ERR" "--disk-profile: want ram, ssd or disk, got 'tape'" "and named"

boot "$TMP/late.sh"
expect_status 99 "a guest that dies after its scenario started is a failure"
expect_in "$OUT" "ok 1 - the scenario ran" "its output is kept"
n=$(grep -c "booting once more" "$TMP/err")
ok $([ "$n" -eq 0 ]; echo $?) "and it is not booted again ($n)"
test -e "$TMP/console-late.boot1.log"
ok $((1 - $?)) "so there is no first boot's console"

done_testing
