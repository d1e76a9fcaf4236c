#!/bin/bash
# pagewardend: options, exit statuses, configuration errors, and the host check
# on the machine the tests run on.
. "$top_srcdir/tests/cli/lib.sh"
CONF="$top_srcdir/conf"

run "$DAEMON" --help
expect_status 0 "--help succeeds"
expect_in "$OUT" "Usage: pagewardend [--config FILE] [--check | --thaw | --restore]" "--help prints the synopsis"
expect_in "$OUT" "--thaw" "--help names --thaw"
run "$DAEMON" --version
expect_status 0 "--version succeeds"
run "$DAEMON" --frobnicate
expect_status 2 "an unknown option is a usage error"
run "$DAEMON" extra
expect_status 2 "an operand is a usage error"
expect_in "$ERR" "unexpected argument 'extra'" "the operand is named"

run "$DAEMON" --check --config "$CONF/pagewarden.yaml"
expect_status 0 "--check accepts the shipped configuration"
expect_in "$OUT" "valid; 2 job classes, 0 protected applications" "--check summarises"

# Like pagewardenctl check, --check (ExecStartPre=, ExecReload=) warns of an
# exe: program that cannot match on this host; the configuration is valid.
mkdir -p "$TMP/progs/policies.d"
printf 'policy_dir: policies.d\n' >"$TMP/progs/pagewarden.yaml"
printf 'jobs:\n  backup:\n    match:\n      exe: [%s/no-such-program]\n' "$TMP" >"$TMP/progs/policies.d/rules.yaml"
run "$DAEMON" --check --config "$TMP/progs/pagewarden.yaml"
expect_status 0 "--check: a program that cannot match is no error"
expect_in "$ERR" "warning: $TMP/progs/policies.d/rules.yaml:4:13: warning: $TMP/no-such-program does not exist on this host" \
        "--check warns of it, located, as pagewardenctl check does"

mkdir -p "$TMP/conf/policies.d"
printf 'log_level: chatty\n' >"$TMP/conf/pagewarden.yaml"
printf 'jobs:\n  b: {memory: {high: 5%%%%}}\n' >"$TMP/conf/policies.d/a.yaml"
run "$DAEMON" --check --config "$TMP/conf/pagewarden.yaml"
expect_status 3 "--check rejects an invalid configuration with exit 3"
expect_in "$ERR" "error: Invalid configuration (2 errors):" "errors are logged as errors"
expect_in "$ERR" "error: $TMP/conf/pagewarden.yaml:1:12: error: 'chatty'" "a settings error is located"
expect_in "$ERR" "error: $TMP/conf/policies.d/a.yaml:2:22: error: '5%%'" "a policy error is located"
# Off the journal (a file here, as under nohup): local time, level, message;
# no "<3>" priority prefix, which only journald reads.
expect_eq "every line starts with its time and level" \
        "$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} error: ' "$TMP/err")" 0
expect_eq "no priority prefix off the journal" "$(grep -c '^<[0-9]>' "$TMP/err")" 0
# A $JOURNAL_STREAM inherited from a unit, stderr redirected since: plain lines.
JOURNAL_STREAM=1:1 run "$DAEMON" --check --config "$TMP/conf/pagewarden.yaml"
expect_eq "an inherited \$JOURNAL_STREAM that is not stderr changes nothing" "$(grep -c '^<[0-9]>' "$TMP/err")" 0
# stderr is the journal's stream: priorities for journald, through sd-journal
# or, without its socket (as on this machine), as "<N>" prefixes.
if [ -S /run/systemd/journal/socket ]; then
        ok 0 "# SKIP journald runs here: the prefix fallback needs a machine without it"
else
        : >"$TMP/err"
        JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/err") "$DAEMON" --check --config "$TMP/conf/pagewarden.yaml" 2>>"$TMP/err"
        expect_in "$(cat "$TMP/err")" "<3>$TMP/conf/pagewarden.yaml:1:12: error: 'chatty'" \
                "stderr that is \$JOURNAL_STREAM gets journal priorities"
fi

run "$DAEMON" --config "$TMP/none.yaml"
expect_status 3 "a missing settings file stops the daemon"
expect_in "$ERR" "none.yaml: error: cannot open: No such file or directory" "the missing file is named"

# One daemon per control socket: while another holds SOCKET.lock, a second
# one stops with exit 1 before it looks at the host, let alone writes to it.
mkdir -p "$TMP/one/policies.d"
printf 'socket: %s\npolicy_dir: policies.d\n' "$TMP/one/control.sock" >"$TMP/one/pagewarden.yaml"
exec {lock}>"$TMP/one/control.sock.lock"
flock -n "$lock"
run timeout 10 "$DAEMON" --config "$TMP/one/pagewarden.yaml"
expect_status 1 "a second daemon for the same socket stops with exit 1"
expect_in "$ERR" "Another pagewardend runs for $TMP/one/control.sock" "and says which socket is taken"
expect_not_in "$ERR" "This host" "before the host check"
# --thaw must never thaw behind a running daemon's back (its governor froze
# the class on purpose): it takes the same lock.
run timeout 10 "$DAEMON" --thaw --config "$TMP/one/pagewarden.yaml"
expect_status 1 "--thaw while a daemon runs stops with exit 1"
expect_in "$ERR" "Another pagewardend runs for $TMP/one/control.sock" "and says a daemon runs"
exec {lock}>&-
run "$DAEMON" --thaw --check
expect_status 2 "--thaw and --check together are a usage error"
printf 'log_level: chatty\n' >"$TMP/bad-settings.yaml"
run "$DAEMON" --thaw --config "$TMP/bad-settings.yaml"
expect_status 3 "--thaw with invalid settings exits 3"
expect_in "$ERR" "bad-settings.yaml:1:12: error: 'chatty'" "and names the error"
# Only the settings are read: a broken policy does not keep jobs frozen.
mkdir -p "$TMP/two/policies.d"
printf 'socket: %s\n' "$TMP/two/control.sock" >"$TMP/two/pagewarden.yaml"
printf 'jobs:\n  b: {memory: {high: 5%%%%}}\n' >"$TMP/two/policies.d/a.yaml"
run timeout 10 "$DAEMON" --thaw --config "$TMP/two/pagewarden.yaml"
expect_not_in "$ERR" "Invalid" "--thaw does not read the policy (a broken one does not stop it)"

# The host check on this very machine.  Our build machines are hybrid
# (memory and io on cgroup v1): the daemon must refuse with the cause and the remedy.
if grep -qE ' - cgroup cgroup [^ ]*\bmemory\b' /proc/self/mountinfo; then
        # (the socket in $TMP: the host check comes after the instance lock, taken beside the socket)
        run timeout 10 "$DAEMON" --config "$TMP/one/pagewarden.yaml"
        expect_status 4 "on a hybrid host the daemon stops with exit 4 (and the lock was free again)"
        expect_in "$ERR" "controllers are bound to cgroup v1" "the error names the cgroup v1 binding"
        expect_in "$ERR" "boot with systemd.unified_cgroup_hierarchy=1" "the error names the remedy"
        expect_not_in "$ERR" "READY" "nothing claims readiness"
elif need_root "the daemon starts on a cgroup v2 host"; then
        "$DAEMON" --config "$CONF/pagewarden.yaml" 2>"$TMP/err" &
        pid=$!
        sleep 1
        kill -HUP $pid 2>/dev/null
        sleep 0.5
        kill -TERM $pid 2>/dev/null
        wait $pid
        STATUS=$?
        ERR=$(cat "$TMP/err")
        OUT=
        expect_status 0 "on a cgroup v2 host the daemon runs and stops on SIGTERM"
        expect_in "$ERR" "Reloaded" "SIGHUP reloads the configuration"
fi

done_testing
