#!/bin/sh
# Protection on a real kernel: a cgroup two levels deep gets memory.min, its
# ancestor is raised to cover it, and under page-cache pressure (another
# cgroup reads twice the RAM) the protected cgroup keeps its cached file.
# The same run without protection is reported, not asserted: what the kernel
# keeps by itself varies from run to run (6.12's MGLRU: 1% to 59%), so the
# contrast is asserted only when this run's kernel showed one.  Withdrawing
# restores every original value, also from another process (the state file).
# Sizes follow the guest's RAM (vm-run --mem): the application's file a fifth
# of it, its protection a quarter more, the reader twice the RAM.
. /lib.sh
MIB=1048576
RAM_MIB=$(awk '$1 == "MemTotal:" { print int($2 / 1024) }' /proc/meminfo)
APP_MIB=$((RAM_MIB / 5))
MIN_MIB=$((APP_MIB * 5 / 4))
BIG_MIB=$((RAM_MIB * 2))
diag "RAM $RAM_MIB MiB: the application's file $APP_MIB MiB, protected with $MIN_MIB MiB; the reader $BIG_MIB MiB"

check "engine starts" pwtest features
mkdir -p $CG/apps/db $CG/reader
echo +memory >$CG/apps/cgroup.subtree_control
echo 16777216 >$CG/apps/memory.low # an original value that must come back

pwload write "$PW_DATA_MNT/app.dat" $APP_MIB >/dev/null
pwload write "$PW_DATA_MNT/big.dat" $BIG_MIB >/dev/null
sync

cache_app() { # the application reads its file once; its page cache is charged to apps/db
	echo 3 >/proc/sys/vm/drop_caches
	sh -c "echo \$\$ >$CG/apps/db/cgroup.procs; exec pwload read $PW_DATA_MNT/app.dat" >/dev/null
	keyed $CG/apps/db/memory.stat file
}
pressure() { # another cgroup reads twice the RAM
	sh -c "echo \$\$ >$CG/reader/cgroup.procs; exec pwload read $PW_DATA_MNT/big.dat"
}
cached() { keyed $CG/apps/db/memory.stat file; }

# Without protection.
before=$(cache_app)
diag "unprotected: apps/db caches $((before / MIB)) MiB; pressure: $(pressure)"
after=$(cached)
unprotected=$((after * 100 / before))
diag "unprotected: apps/db keeps $((after / MIB)) of $((before / MIB)) MiB ($unprotected%)"
expect_ge "the application's file was cached (MiB)" "$((before / MIB))" $((APP_MIB * 95 / 100))

# With protection.
cat >/tmp/protect.yaml <<YAML
protect:
  db:
    cgroup: /apps/db
    memory: {min: ${MIN_MIB}M, swap: deny}
YAML
before=$(cache_app)
out=$(pwtest protect /tmp/protect.yaml)
diag "$out"
expect_eq "memory.min on the protected cgroup" "$(cat $CG/apps/db/memory.min)" $((MIN_MIB * MIB))
expect_eq "its ancestor is raised to cover it" "$(cat $CG/apps/memory.min)" $((MIN_MIB * MIB))
expect_eq "an ancestor's higher original value is not lowered" "$(cat $CG/apps/memory.low)" 16777216
expect_eq "swap: deny sets memory.swap.max 0" "$(cat $CG/apps/db/memory.swap.max)" 0
expect_eq "the effective protection is reported" "$(kv "$(echo "$out" | grep '^protect')" effective_min)" $((MIN_MIB * MIB))
check "the originals are kept in the state file" grep -q ' apps/db$' /run/pagewarden/protect.state
diag "protected: pressure: $(pressure)"
after=$(cached)
kept=$((after * 100 / before))
diag "protected: apps/db keeps $((after / MIB)) of $((before / MIB)) MiB ($kept%)"
expect_ge "with protection the application keeps at least 90% of its cached data (% kept)" "$kept" 90
if [ "$unprotected" -lt 50 ]; then
	expect_ge "and at least 40 points more than the kernel kept by itself in this run (% kept)" "$kept" $((unprotected + 40))
else
	diag "the kernel kept $unprotected% by itself this run, so this run shows no contrast"
fi

# Withdrawal, by another process: originals come from the state file.
out=$(pwtest unprotect)
expect_eq "nothing is remembered after withdrawal" "$(kv "$out" saved)" 0
expect_eq "memory.min of the protected cgroup restored" "$(cat $CG/apps/db/memory.min)" 0
expect_eq "memory.min of the ancestor restored" "$(cat $CG/apps/memory.min)" 0
expect_eq "memory.low of the ancestor restored" "$(cat $CG/apps/memory.low)" 16777216
expect_eq "memory.swap.max restored" "$(cat $CG/apps/db/memory.swap.max)" max

# A protected cgroup that does not exist is reported, not fatal; the others still apply.
cat >/tmp/protect2.yaml <<YAML
protect:
  gone: {cgroup: /no/such/app, memory: {min: 64M}}
  db: {cgroup: /apps/db, memory: {min: 128M}}
YAML
out=$(pwtest protect /tmp/protect2.yaml)
diag "$out"
expect_eq "a missing cgroup is reported as ENOENT" "$(kv "$(echo "$out" | grep 'path=no/such/app')" error)" -2
expect_eq "the existing one is protected" "$(cat $CG/apps/db/memory.min)" 134217728
check "nothing was created for the missing one" test ! -e $CG/no
pwtest unprotect >/dev/null
expect_eq "and withdrawn again" "$(cat $CG/apps/db/memory.min)" 0
rm -f "$PW_DATA_MNT"/*.dat

done_testing
