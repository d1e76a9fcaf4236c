#!/bin/bash
# tests/bench/report, make bench's table and plot, on runs whose figures are
# known: medians, ranges, the backup time against the unprotected runs', the
# columns that only pagewarden has, and the plot.
. "$top_srcdir/tests/cli/lib.sh"
REPORT="$top_srcdir/tests/bench/report"
D=$TMP/bench
mkdir -p "$D/raw"

# raw RUN KEY=VALUE...: one run's output, with a few seconds of series.
raw() {
        local f="$D/raw/$1.txt"
        shift
        {
                echo "# some diagnostic line"
                echo "series -1 before 400"
                echo "series 0 during 300"
                echo "series 1 during 100"
                echo "series 2 after 390"
                echo "result $*"
        } >"$f"
}
common="label=6.1 kernel=6.1 mglru=0x0000 workload=plain ram_mib=457 backup_rc=0 ops_before=400"
raw 6.1-plain-busy-none-1 $common mode=busy variant=none backup_s=20.0 file_kept=10.0 anon_kept=80.0 swapped_mib=30.0 \
        majflt_after=3000 during_mean=50.0 during_worst=20.0 after_mean=30.0 recover_s=8
raw 6.1-plain-busy-none-2 $common mode=busy variant=none backup_s=22.0 file_kept=12.0 anon_kept=82.0 swapped_mib=34.0 \
        majflt_after=3200 during_mean=54.0 during_worst=22.0 after_mean=32.0 recover_s=9
raw 6.1-plain-busy-none-3 $common mode=busy variant=none backup_s=30.0 file_kept=20.0 anon_kept=90.0 swapped_mib=40.0 \
        majflt_after=3400 during_mean=58.0 during_worst=24.0 after_mean=34.0 recover_s=">20"
for r in 1 2 3; do
        raw 6.1-plain-busy-pagewarden-$r $common mode=busy variant=pagewarden backup_s=$((22 + r)).0 file_kept=100.0 \
                anon_kept=100.0 swapped_mib=0.0 majflt_after=0 during_mean=95.0 during_worst=9$r.0 after_mean=99.0 \
                recover_s=0 actions=$r latency_med_us=$((r * 1000)) latency_max_us=9000 rss_kib=3072 cpu_ticks=40
done
raw 6.1-plain-idle-nocache-1 $common mode=idle variant=nocache backup_s=18.0 file_kept=1.0 anon_kept=50.0 \
        swapped_mib=99.0 majflt_after=9000 during_mean=- during_worst=- after_mean=5.0 recover_s=12 nocache_loaded=no
raw 6.1-plain-idle-none-1 $common mode=idle variant=none backup_s=18.0 file_kept=1.0 anon_kept=50.0 swapped_mib=99.0 \
        majflt_after=9000 during_mean=- during_worst=- after_mean=5.0 recover_s=12
# Runs with the application's own view (pwapp's phases), on the disk profile.
lat="before_p50_us=2 before_p99_us=100 before_p999_us=400 before_misses=0 during_p50_us=9 during_p99_us=900"
lat="$lat during_p999_us=2000 during_misses=500 psi_memory_s=1.25 psi_io_s=4.0 psi_cpu_s=0.5 file_min_kept=40.0"
v="${common/workload=plain/workload=verify} mode=light backup_s=20.0 file_kept=50.0 anon_kept=90.0 swapped_mib=0.0"
v="$v majflt_after=0 during_mean=90.0 during_worst=80.0 after_mean=90.0 recover_s=0 disk=disk"
raw 6.1-verify-light-none-1 $v variant=none $lat after_p99_us=300 after_misses=90
raw 6.1-verify-light-pagewarden-1 $v variant=pagewarden $lat after_p99_us=110 after_misses=0
# grow: the part of the working set that came during the backup.
g="${common/workload=plain/workload=grow} mode=light backup_s=20.0 file_kept=90.0 anon_kept=90.0 swapped_mib=0.0"
g="$g majflt_after=0 during_mean=90.0 during_worst=- after_mean=90.0 recover_s=0 $lat after_p99_us=100 after_misses=0"
raw 6.1-grow-light-min-1 $g variant=min grow_kept=40.0 grow_during_p99_us=700 grow_during_misses=300 grow_after_p99_us=500
raw 6.1-grow-light-pagewarden-1 $g variant=pagewarden grow_kept=99.0 grow_during_p99_us=90 grow_during_misses=2 grow_after_p99_us=80
# twoapps: the second protected application's figures.
t="${g/workload=grow/workload=twoapps} variant=pagewarden app2_kept=98.0 app2_before_p99_us=20 app2_during_p99_us=60"
raw 6.1-twoapps-light-pagewarden-1 $t app2_during_misses=4 app2_after_p99_us=30
# A block of the plan on another storage profile: its label is the kernel and the profile.
s="${common/label=6.1/label=6.1-ssd} mode=light backup_s=20.0 file_kept=90.0 anon_kept=90.0 swapped_mib=0.0"
s="$s majflt_after=0 after_window_s=11 during_mean=90.0 during_worst=80.0 after_mean=90.0 recover_s=0 disk=ssd"
raw 6.1-ssd-plain-light-none-1 $s variant=none
raw 6.1-ssd-plain-light-pagewarden-1 $s variant=pagewarden

run "$REPORT" "$D"
expect_status 0 "report succeeds"
expect_in "$OUT" "Storage (vm-run --disk-profile): ram, ssd, disk (" "the storage profiles of its runs (ram: runs without one)"
expect_in "$OUT" "faults: its major faults in the 20 or 11 s after;" \
        "the window after the backup, as the runs say (20 s where they do not: runs before after_window_s)"
lat_row() { echo "$OUT" | sed -n '/^| mode | variant | n | p99 before us/,/^$/p' | grep "^| $1 | $2 |"; }
expect_eq "the application's operations: p99 before, during, after, after/before, misses, file kept at its lowest, PSI" \
        "$(lat_row light none)" "| light | none | 1 | 100 | 900 | 300 | 3.00 | 500 | 90 | 40 | 1.2 | 4.0 | 0.5 |"
expect_in "$(lat_row light pagewarden)" "| 110 | 1.10 | 500 | 0 |" "per variant"
ok "$([ "$(echo "$OUT" | grep -c '^| mode | variant | n | p99 before us')" = 3 ] && echo 0 || echo 1)" \
        "that table only where the runs have those figures (verify, grow and twoapps, not the older plain runs)"
row() { echo "$OUT" | grep "^| $1 | $2 |"; }
grow_row() { echo "$OUT" | sed -n '/^| mode | variant | n | grown part kept %/,/^$/p' | grep "^| $1 | $2 |"; }
expect_eq "grow: the part that came during the backup, kept %, its p99 and misses during, its p99 after" \
        "$(grow_row light min)" "| light | min | 1 | 40 | 700 | 300 | 500 |"
expect_eq "per variant" "$(grow_row light pagewarden)" "| light | pagewarden | 1 | 99 | 90 | 2 | 80 |"
ok "$([ "$(echo "$OUT" | grep -c '^| mode | variant | n | grown part kept %')" = 1 ] && echo 0 || echo 1)" \
        "that table only for the workload whose runs have those figures"
expect_eq "twoapps: the second application's file kept, its p99 before, during, misses during, p99 after" \
        "$(echo "$OUT" | sed -n '/^| mode | variant | n | app2 file kept %/,/^$/p' | grep '^| light |')" \
        "| light | pagewarden | 1 | 98 | 20 | 60 | 4 | 30 |"
expect_in "$OUT" "### kernel 6.1, workload plain" "one table per kernel and workload"
expect_in "$OUT" "WARNING: nocache was not loaded into the backup in 1 run(s)" "a nocache run without nocache is named"
expect_in "$(row busy none)" "| busy | none | 3 | 12 [10-20] | 82 [80-90] | 34 [30-40] | 3200 [3000-3400] | 54 [50-58] | 22 [20-24] | 32 [30-34] |" \
        "the unprotected row: median [min-max] of each figure"
expect_in "$(row busy none)" "| 9 [8->20] | 1.00 [0.91-1.36] |" \
        "a recovery beyond the window is marked '>', and the backup time is relative to the median unprotected run"
expect_in "$(row busy pagewarden)" "| 100 | 100 | 0 | 0 | 95 | 92 [91-93] | 99 | 0 | 1.09 [1.05-1.14] | 2 [1-3] | 2.0 [1.0-3.0] | 3.0 |" \
        "pagewarden's row: equal values without a range, its governor actions, reaction median (ms) and RSS (MiB)"
ci=$(row busy pagewarden | awk -F' [|] ' '{ print $(NF - 1) }' | tr -d ' |')
check_ci() { # lo-hi around the ratio of the medians, 24/22
        awk -v ci="$ci" 'BEGIN { split(ci, r, "-"); exit !(ci ~ /^[0-9]+[.][0-9][0-9]-[0-9]+[.][0-9][0-9]$/ && r[1] <= 1.09 && r[2] >= 1.09 && r[1] < r[2]) }'
}
check_ci
ok $? "pagewarden's backup time: a bootstrap 95% interval of the ratio of medians around 1.09 ($ci)"
expect_eq "the same raw data give the same interval" "$("$REPORT" "$D" | grep '^| busy | pagewarden |' | awk -F' [|] ' '{ print $(NF - 1) }' | tr -d ' |')" "$ci"
expect_in "$(row busy none)" " | - | - |" "none against itself: no interval, and no daemon"
expect_in "$(row busy pagewarden)" " | 0.4 |" "the daemon's CPU time (40 ticks of 100/s)"
expect_in "$(row idle none)" "| 1 | 50 | 99 | 9000 | - | - | 5 | 12 | 1.00 | - | - | - |" \
        "idle: no during figures; columns a variant does not have are '-'"
ok "$([ "$(echo "$OUT" | grep -c '^| busy')" = 2 ] && echo 0 || echo 1)" "one row per mode and variant"
ok "$(head -n "$(wc -l <"$D/results.md")" "$TMP/out" | cmp -s "$D/results.md" - && echo 0 || echo 1)" "results.md holds the table it printed"
expect_in "$OUT" "plot: $D/ops-6.1-plain.png" "and it names the plot"
expect_in "$OUT" "### kernel 6.1-ssd, workload plain" "a block on another profile has its own table"
expect_in "$OUT" "plot: $D/ops-6.1-ssd-plain.png" "and its own plot, named by its label and workload"
expect_eq "that plot is a PNG" "$(head -c 4 "$D/ops-6.1-ssd-plain.png" 2>/dev/null | tail -c 3)" PNG
expect_eq "runs.tsv: a header and one line per run" "$(wc -l <"$D/runs.tsv")" 16
expect_in "$(head -1 "$D/runs.tsv")" "backup_s" "runs.tsv's header names the figures"
expect_eq "the series of the first repetition" "$(cat "$D/series/6.1-plain-busy-pagewarden.dat")" "$(printf -- '-1 400\n0 300\n1 100\n2 390')"
expect_eq "the plot is a PNG" "$(head -c 4 "$D/ops-6.1-plain.png" | tail -c 3)" PNG

# A block whose none ran 6 times or more and no none-aa: its split-half A/A pair, none's even repetitions
# (by their file's number: 10 sorts before 2) against its odd ones, with no boot of its own.
D=$TMP/aa
mkdir -p "$D/raw"
for r in 1 2 3 4 5 6 7 8 9 10; do
        raw 6.1-plain-busy-none-$r $common mode=busy variant=none backup_s=$((r % 2 ? 20 : 30)).0 file_kept=10.0 \
                anon_kept=80.0 swapped_mib=0.0 majflt_after=0 during_mean=50.0 during_worst=20.0 after_mean=30.0 recover_s=8
        raw 6.1-plain-busy-pagewarden-$r $common mode=busy variant=pagewarden backup_s=25.0 file_kept=100.0 \
                anon_kept=100.0 swapped_mib=0.0 majflt_after=0 during_mean=95.0 during_worst=90.0 after_mean=99.0 recover_s=0
done
run "$REPORT" "$D"
expect_status 0 "report succeeds on a cost block without none-aa"
expect_in "$(row busy none-aa)" "| busy | none-aa | 5 |" "none-aa: the even half of none's 10 runs"
expect_in "$(row busy none-aa)" "| 8 | 1.50 |" "its backup against the odd half (30 s against 20 s)"
expect_in "$(row busy none-aa)" "| 1.50-1.50 |" "and the interval of that ratio"
expect_in "$(row busy none)" "| busy | none | 10 |" "none keeps all its runs"
expect_in "$(row busy pagewarden)" "| 0 | 1.00 |" "pagewarden against all of them (25 s against a median of 25 s)"
expect_in "$OUT" "a split-half A/A pair" "the table says what none-aa is"
expect_not_in "$OUT" "none-odd" "the odd half is not a row"
raw 6.1-plain-busy-none-aa-1 $common mode=busy variant=none-aa backup_s=40.0 file_kept=10.0 anon_kept=80.0 \
        swapped_mib=0.0 majflt_after=0 during_mean=50.0 during_worst=20.0 after_mean=30.0 recover_s=8
run "$REPORT" "$D"
expect_in "$(row busy none-aa)" "| busy | none-aa | 1 |" "a none-aa that ran is the row, as before"
expect_not_in "$OUT" "a split-half A/A pair" "and nothing is split"

# Bad input: no runs, or no directory.
mkdir -p "$TMP/empty/raw"
run "$REPORT" "$TMP/empty"
expect_status 1 "a directory without runs is an error"
expect_in "$ERR" "no run in" "and says so"
run "$REPORT" "$TMP/none"
expect_status 1 "a missing directory is an error"
done_testing
