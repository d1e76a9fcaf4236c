#!/bin/bash
# tests/bench/compare, make bench's driver: what it refuses before it boots
# anything (a typo in BENCH_* must not cost an hour of boots), and --help.
. "$top_srcdir/tests/cli/lib.sh"
COMPARE="$top_srcdir/tests/bench/compare"
export top_srcdir top_builddir="$TMP/build" BENCH_OUT="$TMP/bench-out"

run env BENCH_WORKLOADS="plain stal" "$COMPARE"
expect_status 2 "an unknown workload is refused"
expect_in "$ERR" "BENCH_WORKLOADS: unknown workload 'stal' (plain, dedup, verify, stall, smallfiles, bighot, grow, readonly, noswap, twoapps, exceed, fsync)" "and named, with the known ones"
run env BENCH_VARIANTS="none pagewardn" "$COMPARE"
expect_status 2 "an unknown variant is refused"
expect_in "$ERR" "unknown variant 'pagewardn'" "and named"
run env BENCH_KERNELS="6.2" "$COMPARE"
expect_status 2 "an unknown kernel is refused"
expect_in "$ERR" "unknown kernel '6.2' (6.1, 6.12, 6.12-nomglru)" "and named, with the known ones"
for r in 0 x 1.5 -1; do
        run env BENCH_REPS="$r" "$COMPARE"
        expect_status 2 "BENCH_REPS='$r' is refused"
done
run env BENCH_MEM=512M "$COMPARE"
expect_status 2 "BENCH_MEM with a unit is refused"
expect_in "$ERR" "BENCH_MEM: '512M' is not a size in MiB" "and says what it wants"
[ -e "$TMP/bench-out" ]
ok $((1 - $?)) "nothing was written for a refused run"

run env BENCH_DISK=nvme "$COMPARE"
expect_status 2 "an unknown storage profile is refused"
expect_in "$ERR" "BENCH_DISK: unknown profile 'nvme' (ram, ssd, disk)" "and named, with the known ones"

for c in BENCH_TIMEOUT BENCH_TRIES; do
        run env $c=0 "$COMPARE"
        expect_status 2 "$c=0 is refused"
done

# A run with a fake test bed: vm-run fails the first boot of pagewarden's
# run (as the emulated guest sometimes hangs) and every boot of min's.
S=$TMP/src
mkdir -p "$S/tests/bench" "$S/tests/vm" "$TMP/fake"
ln -s "$top_srcdir/tests/bench/compare" "$top_srcdir/tests/bench/report" "$S/tests/bench/"
cat >"$S/tests/vm/vm-run" <<'FAKE'
#!/bin/bash
echo "$*" >>"$FAKE/args"
for a; do case $a in BENCH_VARIANT=*) v=${a#*=} ;; BENCH_MODE=*) m=${a#*=} ;; esac; done
n=$(($(cat "$FAKE/$v" 2>/dev/null || echo 0) + 1))
echo $n >"$FAKE/$v"
if [ "$v" = min ] || { [ "$v" = pagewarden ] && [ $n = 1 ]; }; then
        echo "series 0 during 1"
        echo "vm-run: error: guest did not finish within --timeout 300 s (killed)" >&2
        exit 99
fi
echo "series -1 before 400"
echo "series 0 during 380"
echo "series 1 after 400"
x=; [ "$v" = pagewarden ] && x="actions=1 latency_med_us=- latency_max_us=- rss_kib=3072 cpu_ticks=40"
echo "result label=6.1 kernel=6.1 mglru=none workload=plain mode=$m variant=$v ram_mib=464 backup_rc=0" \
        "backup_s=20.0 file_kept=100.0 anon_kept=100.0 swapped_mib=0.0 majflt_after=0 ops_before=400" \
        "ops_before_mode=400 during_mean=95.0 during_worst=95.0 after_mean=100.0 recover_s=0 $x"
FAKE
chmod +x "$S/tests/vm/vm-run"
fake() { run env top_srcdir="$S" FAKE="$TMP/fake" PW_VM_CACHE="$TMP/cache" BENCH_KERNELS=6.1 BENCH_WORKLOADS=plain \
        BENCH_MODES=busy BENCH_VARIANTS="none pagewarden min" BENCH_REPS=1 "$@" "$S/tests/bench/compare"; }
fake
R=$TMP/bench-out
expect_status 1 "a run whose every boot failed fails the bench"
expect_in "$OUT" "6.1-plain-busy-pagewarden-1: boot 1 FAILED (vm-run exit 99" "a failed boot is reported"
expect_not_in "$OUT" "pagewarden-1: boot 2 FAILED" "and the next boot of the run succeeded"
expect_in "$OUT" "6.1-plain-busy-min-1: boot 2 FAILED" "a run gets two boots"
expect_eq "vm-run booted 4 + 1 times" "$(cat "$TMP/fake/none" "$TMP/fake/pagewarden" "$TMP/fake/min")" "1
2
2"
expect_in "$(cat "$R/run.txt")" "boot 1 of 6.1-plain-busy-pagewarden-1 failed: vm-run exit 99: vm-run: error: guest did not finish" \
        "run.txt names the failed boot and why"
expect_in "$(cat "$R/run.txt")" "1 of 3 runs failed" "and counts the run that never succeeded"
expect_in "$(cat "$R/raw/failed/6.1-plain-busy-pagewarden-1.1.err")" "guest did not finish" "the failed boot's output is kept"
expect_in "$(cat "$R/raw/6.1-plain-busy-pagewarden-1.txt")" "result label=6.1" "and the run's own is the good boot's"
expect_in "$(grep '^| busy | pagewarden |' "$R/results.md")" "| busy | pagewarden | 1 | 100 |" "the table has the retried run"
expect_not_in "$(grep '^| busy |' "$R/results.md")" "| min |" "and not the failed one"
expect_in "$(head -n 1 "$TMP/fake/args")" "--timeout 300 " "a boot's limit is 300 s by default"
expect_in "$(head -n 1 "$TMP/fake/args")" "--disk-profile disk " "the disks cost what a disk's cost by default"
expect_in "$(head -n 1 "$TMP/fake/args")" "BENCH_DISK=disk " "and the scenario is told"
expect_in "$(cat "$R/results.md")" "Storage (vm-run --disk-profile): ram (" "the table says what storage its runs had"
expect_not_in "$(cat "$TMP/fake/args")" "nocache" "nocache is not needed without its variant"
expect_not_in "$(cat "$TMP/fake/args")" "--no-swap" "every workload but noswap has its swap disk"
rm -rf "$R" "$TMP/fake"/*
fake BENCH_WORKLOADS="plain noswap" BENCH_VARIANTS=none
expect_eq "noswap: its guest has no swap disk, plain's has" \
        "$(grep -c -- '--no-swap .*BENCH_WORKLOAD=noswap' "$TMP/fake/args") $(grep -c -- '--no-swap' "$TMP/fake/args")" "1 1"
rm -rf "$R" "$TMP/fake"/*
fake BENCH_TRIES=1 BENCH_VARIANTS=pagewarden
expect_status 1 "BENCH_TRIES=1: one failed boot fails the run"
expect_eq "and it is not booted again" "$(cat "$TMP/fake/pagewarden")" 1

# The default plan (nothing chosen): the blocks the committed run has, repetition by repetition, and the
# cost block's none and pagewarden (on 6.12) one after another in each repetition.
rm -rf "$R" "$TMP/fake"/*
run env top_srcdir="$S" FAKE="$TMP/fake" PW_VM_CACHE="$TMP/cache" "$S/tests/bench/compare"
expect_in "$OUT" "# 87 boots (11 blocks: 6.1 plain idle none,pagewarden 3; " "the default plan: 87 boots in 11 blocks"
order=$(grep -o 'BENCH_VARIANT=[^ ]* --env BENCH_MODE=[^ ]* --env BENCH_WORKLOAD=[^ ]*' "$TMP/fake/args" |
        sed 's/BENCH_[A-Z]*=//g; s/ --env / /g' | awk '{ print $3 "-" $2 "-" $1 }' | uniq) # uniq: the fake's retried boots
expect_eq "the first repetition runs every block once, in the plan's order" "$(echo "$order" | head -n 29 | tr '\n' ' ')" \
        "plain-idle-none plain-idle-pagewarden plain-light-none plain-light-high plain-light-min-high plain-light-low plain-light-pagewarden bighot-light-none bighot-light-min bighot-light-pagewarden smallfiles-light-none smallfiles-light-pagewarden grow-light-none grow-light-pagewarden exceed-light-none exceed-light-pagewarden fsync-light-none fsync-light-pagewarden plain-busy-none plain-busy-pagewarden plain-light-swappiness0 plain-light-high-io smallfiles-light-nocache plain-light-none plain-light-pagewarden plain-light-none plain-light-pagewarden plain-light-none plain-light-pagewarden "
expect_eq "the last repetitions are the cost block's, interleaved" "$(echo "$order" | tail -n 6 | tr '\n' ' ')" \
        "plain-light-none plain-light-pagewarden plain-light-none plain-light-pagewarden plain-light-none plain-light-pagewarden "
expect_eq "on 6.12: the cost block, where the kernel alone keeps the application whole" \
        "$(grep -c -- '--kernel 6.12 ' "$TMP/fake/args") $(tail -n 14 "$TMP/fake/args" | grep -c -- '--kernel 6.12 ')" "20 14"
expect_eq "the reference blocks: two boots on the ssd profile, two unthrottled, labelled so" \
        "$(grep -c -- '--disk-profile ssd .*BENCH_LABEL=6.1-ssd .*BENCH_DISK=ssd ' "$TMP/fake/args") $(grep -c -- '--disk-profile ram .*BENCH_LABEL=6.1-ram ' "$TMP/fake/args")" "2 2"
expect_eq "every other boot (the fake's 4 retries too) on the disk profile, labelled by its kernel" \
        "$(grep -c -- '--disk-profile disk ' "$TMP/fake/args") $(grep -cE -- '--disk-profile disk .*BENCH_LABEL=6\.12? ' "$TMP/fake/args")" "87 87"
expect_in "$(ls "$R/raw")" "6.1-ssd-plain-light-pagewarden-1.txt" "the reference runs' files are named by their label"
expect_in "$(cat "$R/run.txt")" "plan (kernels workloads modes variants reps [disk]): 6.1 plain idle none,pagewarden 3; " \
        "run.txt records the plan"

run "$COMPARE" --help
expect_status 0 "--help"
expect_in "$OUT" "also stall: a second protected application stalls" "names the stall workload"
expect_not_in "$OUT" "set -u" "and only the comment"
done_testing
