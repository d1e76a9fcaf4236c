#!/bin/sh
# The cgroup engine on a real kernel: class limits land in the class cgroup
# exactly, jobs run in slots below it from their first instruction, a dd with
# O_DIRECT is held to the io limit, and a changed policy replaces the limits.
# The disk's own speed (the same write outside any job) is reported; the
# rate's lower bound is asserted only where the disk is faster than the limit.
. /lib.sh
MIB=1048576

check "engine starts and reports features" pwtest features
feat=$(pwtest features)
diag "features: $feat"
expect_eq "memory.reclaim detected" "$(kv "$feat" memory_reclaim)" 1
expect_eq "user xattrs on cgroupfs detected" "$(kv "$feat" user_xattr)" 1
expect_eq "the root delegates memory io cpu" "$(cat $CG/cgroup.subtree_control)" "cpu io memory"

cat >/tmp/policy.yaml <<YAML
jobs:
  backup:
    memory: {high: 256M, max: 512M, swap_max: 64M}
    cpu: {weight: 50}
    io:
      - device: $PW_DATA_MNT
        write_bps: 10M
        read_bps: 20M
        write_iops: 4000
YAML
check "apply a class" pwtest apply /tmp/policy.yaml
C=$CG/pagewarden.slice/backup
expect_eq "memory.high" "$(cat $C/memory.high)" 268435456
expect_eq "memory.max" "$(cat $C/memory.max)" 536870912
expect_eq "memory.swap.max" "$(cat $C/memory.swap.max)" 67108864
expect_eq "cpu.weight" "$(cat $C/cpu.weight)" 50
expect_eq "io.max on the whole data disk" "$(cat $C/io.max)" "$PW_DATA_MAJMIN rbps=20971520 wbps=10485760 riops=max wiops=4000"
expect_eq "pagewarden.slice delegates memory io cpu to classes" "$(cat $CG/pagewarden.slice/cgroup.subtree_control)" "cpu io memory"

# A job: its command runs in a slot below the class from its first instruction.
out=$(pwtest run backup whoami -- cat /proc/self/cgroup 2>/tmp/err)
expect_eq "the job's first instruction already runs in its slot" "$out" "0::/pagewarden.slice/backup/slot-0"
diag "$(cat /tmp/err)"
expect_eq "the class enables memory and io for its slots (io.stat per job)" "$(cat $C/cgroup.subtree_control)" "io memory"
pwtest run backup status -- sh -c 'exit 3' 2>/dev/null
expect_eq "the job's exit status comes back" "$?" 3

# The io limit holds: 40 MiB with O_DIRECT at 10 MiB/s.
out=$(pwtest run backup dd -- pwload write-direct "$PW_DATA_MNT/direct.dat" 40 2>/tmp/err)
rate=$(kv "$out" mib_per_s)
diag "O_DIRECT write in a job: $out (limit 10 MiB/s)"
out=$(pwload write-direct "$PW_DATA_MNT/direct2.dat" 40)
free=$(kv "$out" mib_per_s)
diag "the same write outside any job: $out"
expect_le "O_DIRECT write rate in a job is held to the 10 MiB/s limit (20% over at most)" "$rate" 12
if awk -v f="$free" 'BEGIN { exit !(f >= 15) }'; then
	expect_ge "and not held below it by more than 20%, the disk itself being faster (MiB/s)" "$rate" 8
else
	diag "the disk itself wrote at $free MiB/s this run, not faster than the limit: no lower bound this run"
fi
rm -f "$PW_DATA_MNT"/direct*.dat

# Reload with changed limits: new values, and the disk no longer named loses its limit.
cat >/tmp/policy2.yaml <<YAML
jobs:
  backup:
    memory: {high: 128M}
YAML
check "apply a changed class" pwtest apply /tmp/policy2.yaml
expect_eq "memory.high changed" "$(cat $C/memory.high)" 134217728
expect_eq "memory.max back to max" "$(cat $C/memory.max)" max
expect_eq "io.max of the dropped disk is gone" "$(cat $C/io.max)" ""

# Adoption: a job whose manager was killed is found again by its label.
mkfifo /tmp/fifo
pwtest run backup survivor -- sh -c 'touch /tmp/started; read x </tmp/fifo' 2>/dev/null &
mgr=$!
while [ ! -e /tmp/started ]; do sleep 0.1; done
kill -9 $mgr
out=$(pwtest scan | grep 'name=survivor')
diag "after kill -9 of the job's manager: $out"
expect_eq "the running job is found with its label" "$(kv "$out" labelled)/$(kv "$out" populated)" "1/1"
slot=$(kv "$out" path)
pwtest release "$slot" >/dev/null 2>&1
expect_eq "a slot with a running job is not released" "$?" 1
echo done >/tmp/fifo
# until its job has ended (its slot is empty): at most 30 s
i=0
while [ $i -lt 300 ] && ! pwtest scan | grep 'name=survivor' | grep -q 'populated=0'; do sleep 0.1; i=$((i + 1)); done
out=$(pwtest release "$slot")
expect_eq "once its job has ended it is reclaimed and released" "$(kv "$out" r)" 0
expect_eq "and is idle again" "$(pwtest scan | grep -c 'labelled=1')" 0

# Freeze and thaw the class.
check "freeze the class" pwtest freeze backup 1
expect_eq "cgroup.events says frozen" "$(keyed $C/cgroup.events frozen)" 1
check "thaw the class" pwtest freeze backup 0
expect_eq "cgroup.events says thawed" "$(keyed $C/cgroup.events frozen)" 0

# Unsafe names never reach the file system.
printf 'jobs:\n  "../escape": {}\n' >/tmp/bad.yaml
pwtest apply /tmp/bad.yaml >/dev/null 2>&1
expect_eq "a class name with '..' is refused" "$?" 1
check "nothing was created outside the tree" test ! -e "$CG/escape"

done_testing
