#!/bin/sh
# Job cgroups leave no dying memcg behind: 100 jobs that each write 32 MB
# through the page cache and exit, four at a time.  Released slots are
# reclaimed and reused, so nr_dying_descendants stays 0 and the number of
# cgroups stays bounded.  The naive way (rmdir right after the job) is
# measured too, to show that the test can fail: how many of its cgroups the
# kernel leaves dying is reported, and the contrast asserted when it left any.
. /lib.sh
JOBS=${JOBS:-100}
PAR=4

printf 'jobs:\n  churn:\n    memory: {high: 256M}\n' >/tmp/policy.yaml
check "apply the class" pwtest apply /tmp/policy.yaml

worker() { # worker K: jobs K, K+PAR, ...
	i=$1
	while [ "$i" -lt "$JOBS" ]; do
		pwtest run churn "j$i" -- pwload write "$PW_DATA_MNT/j$i" 32 >/dev/null 2>>/tmp/jobs.$1 || echo "FAILED j$i" >>/tmp/jobs.$1
		rm -f "$PW_DATA_MNT/j$i"
		i=$((i + PAR))
	done
}
start=$(date +%s)
k=0
while [ $k -lt $PAR ]; do
	worker $k &
	k=$((k + 1))
done
wait
diag "$JOBS jobs in $(($(date +%s) - start)) s"
cat /tmp/jobs.* >/tmp/jobs
expect_eq "every job ran and was released" "$(grep -c '^job ' /tmp/jobs)" "$JOBS"
expect_eq "no job failed" "$(grep -c FAILED /tmp/jobs)" 0
before=$(awk '/^job / { for (i = 1; i <= NF; i++) if ($i ~ /^before=/) { split($i, a, "="); s += a[2]; n++ } } END { printf "%d", s / n / 1048576 }' /tmp/jobs)
after=$(awk '/^job / { for (i = 1; i <= NF; i++) if ($i ~ /^after=/) { split($i, a, "="); if (a[2] > m) m = a[2] } } END { printf "%d", m / 1024 }' /tmp/jobs)
avg_after=$(awk '/^job / { for (i = 1; i <= NF; i++) if ($i ~ /^after=/) { split($i, a, "="); s += a[2]; n++ } } END { printf "%d", s / n / 1024 }' /tmp/jobs)
rel=$(awk '/^job / { for (i = 1; i <= NF; i++) if ($i ~ /^release_us=/) { split($i, a, "="); s += a[2]; n++ } } END { printf "%d", s / n / 1000 }' /tmp/jobs)
diag "charged to a slot when its job ended: $before MiB on average; left after reclaim: $avg_after KiB on average, $after KiB at most; release took $rel ms on average"
expect_ge "each job's page cache was charged to its slot (MiB)" "$before" 30
# What stays is per-CPU charge stock and slab, and pages still under
# writeback: the daemon waits for writeback a bounded time (5 x 50 ms without
# progress), so how much a slow disk leaves is the kernel's backlog, not the
# daemon's doing (idle at most 64 KiB; 4.5 MiB once on a busy machine).  The
# average is the daemon's effect; the most left in one slot is bounded only
# grossly: half of what the job charged (without reclaim, all of it stays).
expect_le "reclaim leaves under 512 KiB in a slot on average (KiB)" "$avg_after" 512
expect_le "and never more than half of the 33 MiB (KiB)" "$after" 16384

S=$CG/pagewarden.slice
# A cgroup removed a moment ago may be dying for a moment, never for long
# (polled for at most 30 s; idle runs read 0 within 2 s).
i=0
while [ $i -lt 300 ] && [ "$(keyed $S/cgroup.stat nr_dying_descendants)" != 0 ]; do sleep 0.1; i=$((i + 1)); done
dying=$(keyed $S/cgroup.stat nr_dying_descendants)
diag "pagewarden.slice cgroup.stat: $(tr '\n' ' ' <$S/cgroup.stat)"
expect_eq "nr_dying_descendants of pagewarden.slice is 0" "$dying" 0
slots=$(ls -d $S/churn/slot-* | wc -l)
diag "slots of the class: $slots"
expect_le "the class has at most $PAR slots" "$slots" $PAR
out=$(pwtest scan)
expect_eq "no slot is labelled busy" "$(echo "$out" | grep -c 'labelled=1')" 0
expect_eq "no slot has a process" "$(cat $S/churn/slot-*/cgroup.procs | wc -l)" 0

# The naive way, for comparison: a fresh cgroup per job, removed as soon as it is empty.
mkdir $CG/naive
echo +memory >$CG/naive/cgroup.subtree_control
i=0
while [ $i -lt 20 ]; do
	mkdir $CG/naive/j$i
	sh -c "echo \$\$ >$CG/naive/j$i/cgroup.procs; exec pwload write $PW_DATA_MNT/n$i 32" >/dev/null
	rmdir $CG/naive/j$i
	i=$((i + 1))
done
sleep 2
naive=$(keyed $CG/naive/cgroup.stat nr_dying_descendants)
rm -f "$PW_DATA_MNT"/n*
diag "naive: 20 jobs removed right after they ended leave $naive dying memcgs"
if [ "$naive" -gt 0 ]; then
	expect_le "pagewarden's slots leave fewer dying memcgs than the naive way did in this run" "$dying" $((naive - 1))
else
	diag "the kernel left no dying memcg of the naive way by itself this run, so this run shows no contrast"
fi

done_testing
