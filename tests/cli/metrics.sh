#!/bin/bash
# pagewardenctl metrics against a fake daemon that answers with a recorded
# status (tests/golden/ctl): text in the Prometheus format (each line checked
# here; the strict parser is tests/unit/test-ctl-metrics.c), -o FILE written
# atomically and readable by node_exporter, pagewarden_up 0 and status's exit
# status when the daemon does not answer; and the units that run it.
. "$top_srcdir/tests/cli/lib.sh"

GOLDEN="$top_srcdir/tests/golden/ctl"
export PAGEWARDEN_SOCKET="$TMP/control.sock"
answer() { fake_answer "$PAGEWARDEN_SOCKET" "$GOLDEN/$1.json"; } # answer NAME: tests/golden/ctl/NAME.json
no_daemon() {
        fake_stop
        rm -f "$PAGEWARDEN_SOCKET"
}

# The lines that are neither "# HELP name text", "# TYPE name type" nor a sample
# "name{label="escaped",...} value"; and the families whose HELP and TYPE are
# not once each, right before their samples.
bad_lines() {
        local name='[a-zA-Z_:][a-zA-Z0-9_:]*' label='[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*"'
        local value='(\+Inf|-Inf|NaN|[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)'
        grep -vxE "# HELP $name .+|# TYPE $name (counter|gauge|histogram)|$name(\{$label(,$label)*\})? $value" <<<"$1"
        awk '
        /^# HELP / { if (seen[$3]++) print "HELP again: " $3; fam = $3; help = 1; next }
        /^# TYPE / { if ($3 != fam || !help) print "TYPE without HELP: " $3; type[$3] = $4; help = 0; next }
        {
                n = $1; sub(/\{.*/, "", n)
                base = n
                if (type[fam] == "histogram") sub(/_(bucket|sum|count)$/, "", base)
                if (base != fam) print "not of its family " fam ": " $0
                if (type[fam] == "counter" && fam !~ /_total$/) print "counter without _total: " fam
                if (series[$1]++) print "duplicate: " $1
        }' <<<"$1"
}
value_of() { # value_of SERIES: its value in $OUT
        awk -v s="$1" '$1 == s { print $2 }' <<<"$OUT"
}

# ---- stdout ------------------------------------------------------------------

answer status-metrics
run "$CTL" metrics
expect_status 0 "metrics exits 0"
expect_eq "every line is a comment of the format or a sample" "$(bad_lines "$OUT")" ""
expect_eq "the daemon answered: pagewarden_up 1" "$(value_of pagewarden_up)" 1
expect_eq "a class's memory.high in force" "$(value_of 'pagewarden_class_memory_high_bytes{class="backup"}')" \
        2147483648
expect_eq "the configured one" "$(value_of 'pagewarden_class_memory_high_configured_bytes{class="backup"}')" \
        4294967296
expect_eq "the histogram ends with +Inf" \
        "$(value_of 'pagewarden_governor_reaction_latency_seconds_bucket{le="+Inf"}')" 12
expect_eq "the same as metrics.ok" "$OUT" "$(cat "$GOLDEN/metrics.ok")"
expect_empty "$ERR" "nothing on stderr"
# The format is checked by the unit test's strict parser (test-ctl-metrics.c);
# Prometheus's own linter, where it is installed, is a second opinion
# (Debian's prometheus package is a whole server: not a test dependency).
if command -v promtool >/dev/null; then
        promtool check metrics <<<"$OUT" >"$TMP/lint" 2>&1
        ok $? "promtool check metrics accepts it$(sed 's/^/; /' "$TMP/lint" | tr -d '\n')"
fi

for json in status-idle status-jobs status-left-policy status-empty status-odd; do
        answer $json
        run "$CTL" metrics
        expect_status 0 "$json: metrics exits 0"
        expect_eq "$json: every line is of the format" "$(bad_lines "$OUT")" ""
done

# ---- -o FILE: atomic, mode 0644 ------------------------------------------------

answer status-metrics
prom="$TMP/textfile/pagewarden.prom"
mkdir "$TMP/textfile"
run sh -c "umask 077; exec \"\$0\" metrics -o \"\$1\"" "$CTL" "$prom"
expect_status 0 "metrics -o FILE exits 0"
expect_empty "$OUT" "and prints nothing"
expect_eq "FILE has the metrics" "$(cat "$prom")" "$(cat "$GOLDEN/metrics.ok")"
expect_eq "mode 0644 whatever the umask (node_exporter runs as another user)" "$(stat -c %a "$prom")" 644
inode=$(stat -c %i "$prom")
exec 9<"$prom"
answer status-idle
run "$CTL" metrics --output "$prom"
expect_status 0 "--output FILE again"
OUT=$(cat "$prom")
expect_eq "FILE has the new metrics" "$(value_of pagewarden_governor_active)" 0
expect_in "$(cat <&9)" 'pagewarden_governor_active 1' "a reader of the old file still reads it whole (replaced by a rename)"
exec 9<&-
expect_eq "FILE is a new inode" "$([ "$(stat -c %i "$prom")" != "$inode" ] && echo new)" new
expect_eq "no temporary file is left" "$(ls -A "$TMP/textfile")" pagewarden.prom
run "$CTL" metrics -o "$TMP/none/pagewarden.prom"
expect_status 1 "-o into a directory that is not there exits 1"
expect_in "$ERR" "pagewardenctl: cannot write $TMP/none/pagewarden.prom: No such file or directory" "and says why"

# ---- no daemon: exit 3 as status, pagewarden_up 0 -----------------------------

no_daemon
run "$CTL" metrics
expect_status 3 "without a daemon metrics exits 3, as status does"
expect_in "$ERR" "pagewardenctl: pagewardend is not running (cannot connect to $PAGEWARDEN_SOCKET: No such file or directory)" \
        "and says so, as status does"
expect_eq "stdout: pagewarden_up 0 alone" "$(grep -v '^#' <<<"$OUT")" "pagewarden_up 0"
expect_eq "in the format" "$(bad_lines "$OUT")" ""
run "$CTL" metrics -o "$prom"
expect_status 3 "-o FILE without a daemon exits 3 too"
expect_eq "and FILE says pagewarden_up 0 (no stale values)" "$(grep -v '^#' "$prom")" "pagewarden_up 0"
answer failure-bare
run "$CTL" metrics
expect_status 1 "a daemon that answers with an error: exit 1"
expect_eq "and pagewarden_up 0" "$(grep -v '^#' <<<"$OUT")" "pagewarden_up 0"

# ---- usage -------------------------------------------------------------------

run "$CTL" metrics extra
expect_status 2 "metrics takes no operand"
run "$CTL" metrics --json
expect_status 2 "nor --json"
run "$CTL" --json metrics
expect_status 2 "not even before the command"
expect_in "$ERR" "metrics: --json does not apply" "and says why"
run "$CTL" metrics -o
expect_status 2 "-o needs a FILE"
run "$CTL" metrics -o ""
expect_status 2 "an empty one is refused"
run "$CTL" metrics --help
expect_status 0 "metrics --help"
expect_in "$OUT" "metrics [-o FILE]" "--help lists metrics"
expect_in "$OUT" "--output FILE" "and --output"

# ---- the units ---------------------------------------------------------------

service="$top_builddir/packaging/systemd/pagewarden-metrics.service"
timer="$top_srcdir/packaging/systemd/pagewarden-metrics.timer"
expect_eq "the service writes node_exporter's textfile directory, with the installed pagewardenctl" \
        "$(grep -cxE 'ExecStart=/[^@ ]*/pagewardenctl metrics -o /var/lib/prometheus/node-exporter/pagewarden.prom' "$service")" 1
expect_in "$(cat "$service")" "Type=oneshot" "a oneshot"
expect_eq "the service has no [Install]: only the timer starts it" "$(grep -c '^\[Install\]' "$service")" 0
expect_in "$(cat "$timer")" "OnUnitActiveSec=15s" "the timer runs it every 15 s"
expect_eq "the timer is wanted by timers.target only once enabled, by nothing else" \
        "$(sed -n '/^\[Install\]/,$ { /^[A-Za-z]/p }' "$timer")" "WantedBy=timers.target"
if command -v systemd-analyze >/dev/null; then
        cp "$service" "$timer" "$TMP/"
        # Verify the units as installed: ExecStart= must name an existing program.
        sed -i "s|^ExecStart=[^ ]*|ExecStart=$CTL|" "$TMP/pagewarden-metrics.service"
        run systemd-analyze verify --man=no "$TMP/pagewarden-metrics.service" "$TMP/pagewarden-metrics.timer"
        expect_eq "systemd-analyze verify accepts them" "$(grep pagewarden-metrics <<<"$OUT$ERR")" ""
else
        TAP_N=$((TAP_N + 1))
        echo "ok $TAP_N - systemd-analyze verify accepts them # SKIP no systemd-analyze"
fi

done_testing
