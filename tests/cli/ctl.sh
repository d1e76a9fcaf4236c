#!/bin/bash
# pagewardenctl: the commands that talk to pagewardend, on a machine without
# one: usage errors, "not running" messages and exit statuses, and run
# --fallback.  The daemon's answers are tested in the VM (tests/vm).
. "$top_srcdir/tests/cli/lib.sh"

NONE="$TMP/none.sock"  # nothing there: ENOENT
touch "$TMP/file.sock" # a plain file: ECONNREFUSED
unset PAGEWARDEN_SOCKET

run "$CTL" --help
for cmd in "run --job CLASS" "move --job CLASS" status list "show JOB" reload version; do
        expect_in "$OUT" "  $cmd" "--help lists $cmd"
done
expect_in "$OUT" "3 the daemon cannot be reached" "--help lists the exit statuses"

# ---- usage errors: 2, except for run, which exits 125 like env(1) ----------

run "$CTL" run -- true
expect_status 125 "run without --job is a usage error"
expect_in "$ERR" "run: --job CLASS is required" "run without --job says so"
run "$CTL" run --job backup
expect_status 125 "run without COMMAND is a usage error"
expect_in "$ERR" "run: missing COMMAND" "run without COMMAND says so"
run "$CTL" run --job backup --
expect_status 125 "run with an empty COMMAND after -- is a usage error"
run "$CTL" run --job 'a/b' -- true
expect_status 125 "run with a class name holding '/' is a usage error"
expect_in "$ERR" "run: invalid job class 'a/b': name contains '/'" "the bad class name is named"
run "$CTL" run --job '-x' -- true
expect_status 125 "run with a class name starting with '-' is a usage error"
run "$CTL" run --job backup --name 'bad name' -- true
expect_status 125 "run with a bad job name is a usage error"
expect_in "$ERR" "run: invalid job name 'bad name'" "the bad job name is named"
run "$CTL" run --job backup --frobnicate -- true
expect_status 125 "run with an unknown option is a usage error"

run "$CTL" run --job backup -p MemoryHigh -- true
expect_status 125 "run --property without '=' is a usage error"
run "$CTL" run --job backup -p CPUWeight=10 -- true
expect_status 125 "run --property with an unknown key is a usage error"
expect_in "$ERR" "unknown property (MemoryHigh, MemoryMax or MemorySwapMax)" "and names the ones there are"
run "$CTL" run --job backup -p MemoryMax=12Q -- true
expect_status 125 "run --property with a bad size is a usage error"
run "$CTL" run --job backup -p MemoryMax=max -- true
expect_status 125 "run --property MemoryMax=max is refused (it could only loosen)"
run "$CTL" move --job backup
expect_status 2 "move without pids is a usage error"
expect_in "$ERR" "move: missing PID" "move without pids says so"
run "$CTL" move 1234
expect_status 2 "move without --job is a usage error"
run "$CTL" move --job backup 12x4
expect_status 2 "move with a non-numeric pid is a usage error"
expect_in "$ERR" "move: invalid process id '12x4'" "the bad pid is named"
run "$CTL" move --job backup -- -5
expect_status 2 "move with a negative pid is a usage error"
run "$CTL" move --job backup 1
expect_status 2 "move refuses pid 1"
run "$CTL" move --job 'x y' 1234
expect_status 2 "move with a bad class name is a usage error"
run "$CTL" show
expect_status 2 "show without JOB is a usage error"
run "$CTL" show 1 2
expect_status 2 "show with two jobs is a usage error"
run "$CTL" show ../x
expect_status 2 "show with a bad job name is a usage error"
run "$CTL" status extra
expect_status 2 "status takes no argument"
expect_in "$ERR" "status: unexpected argument 'extra'" "the extra argument is named"
run "$CTL" list --frobnicate
expect_status 2 "list with an unknown option is a usage error"
run "$CTL" --socket "" status
expect_status 2 "an empty --socket is a usage error"

# ---- no daemon: run does not run COMMAND -----------------------------------

for sock in "$NONE" "$TMP/file.sock"; do
        rm -f "$TMP/ran"
        run "$CTL" --socket "$sock" run --job backup -- touch "$TMP/ran"
        expect_status 125 "run without a daemon exits 125 ($sock)"
        expect_in "$ERR" "pagewardenctl: pagewardend is not running (cannot connect to $sock: " \
                "run without a daemon says so and names the socket ($sock)"
        expect_in "$ERR" "); touch was not run (run_fallback is false; --fallback or run_fallback: true runs it unmanaged)" \
                "run without a daemon says that COMMAND was not run ($sock)"
        [ ! -e "$TMP/ran" ]
        ok $? "run without a daemon does not run COMMAND ($sock)"
done
expect_in "$ERR" "Connection refused" "a plain file at the socket's path refuses connections"

# ---- no daemon: run --fallback runs COMMAND unmanaged ----------------------

rm -f "$TMP/ran"
run "$CTL" --socket "$NONE" run --job backup --fallback -- touch "$TMP/ran"
expect_status 0 "run --fallback without a daemon succeeds"
expect_in "$ERR" "pagewardenctl: warning: pagewardend is not running (cannot connect to $NONE: No such file or directory): running touch outside any job" \
        "run --fallback warns"
[ -e "$TMP/ran" ]
ok $? "run --fallback runs COMMAND"

run "$CTL" --socket "$NONE" run --fallback --job backup sh -c 'exit 3'
expect_status 3 "COMMAND's exit status is run's (COMMAND without --)"
run "$CTL" --socket "$NONE" run --fallback --job backup -- sh -c 'kill -TERM $$'
expect_status 143 "a COMMAND killed by SIGTERM gives 143"
run "$CTL" --socket "$NONE" run --fallback --job backup -- "$TMP/no-such-command"
expect_status 127 "a missing COMMAND gives 127"
expect_in "$ERR" "pagewardenctl: $TMP/no-such-command: No such file or directory" "a missing COMMAND is named"
run "$CTL" --socket "$NONE" run --fallback --job backup -- no-such-command-in-path
expect_status 127 "a COMMAND not in PATH gives 127"
printf '#!/bin/sh\nexit 0\n' >"$TMP/noexec"
chmod 0644 "$TMP/noexec"
run "$CTL" --socket "$NONE" run --fallback --job backup -- "$TMP/noexec"
expect_status 126 "a COMMAND that is not executable gives 126"
expect_in "$ERR" "pagewardenctl: $TMP/noexec: Permission denied" "a non-executable COMMAND is named"
OUT=$(echo piped | "$CTL" --socket "$NONE" run --fallback --job backup -- cat 2>/dev/null)
expect_in "$OUT" "piped" "COMMAND inherits stdin and stdout"

# ---- no daemon: run_fallback in the settings file, --no-fallback ----------

printf 'run_fallback: true\n' >"$TMP/open.yaml"
printf 'run_fallback: maybe\n' >"$TMP/bad.yaml"
rm -f "$TMP/ran"
run "$CTL" --socket "$NONE" -c "$TMP/open.yaml" run --job backup -- touch "$TMP/ran"
expect_status 0 "run_fallback: true runs COMMAND without --fallback"
expect_in "$ERR" "running touch outside any job (run_fallback)" "and the warning says why"
[ -e "$TMP/ran" ]
ok $? "COMMAND ran"
rm -f "$TMP/ran"
run "$CTL" --socket "$NONE" -c "$TMP/open.yaml" run --job backup --no-fallback -- touch "$TMP/ran"
expect_status 125 "--no-fallback fails closed whatever the settings say"
expect_in "$ERR" "touch was not run (--no-fallback;" "and says so"
[ ! -e "$TMP/ran" ]
ok $? "COMMAND did not run"
run "$CTL" --socket "$NONE" -c "$TMP/bad.yaml" run --job backup -- touch "$TMP/ran"
expect_status 125 "an invalid settings file fails closed"
expect_in "$ERR" "cannot read run_fallback from $TMP/bad.yaml (invalid: see pagewardenctl check): failing closed" \
        "and says which file"
run "$CTL" --socket "$NONE" -c "$TMP/absent.yaml" run --job backup -- touch "$TMP/ran"
expect_status 125 "a settings file named with -c that does not exist fails closed"
[ ! -e "$TMP/ran" ]
ok $? "COMMAND did not run"
run "$CTL" --socket "$NONE" -c "$TMP/bad.yaml" run --job backup --fallback -- true
expect_status 0 "--fallback does not read the settings file"

# ---- no daemon: the other commands exit 3 ----------------------------------

for cmd in status list "show 3" reload "move --job backup 4242"; do
        # shellcheck disable=SC2086 # $cmd is split on purpose
        run "$CTL" --socket "$NONE" $cmd
        expect_status 3 "$cmd without a daemon exits 3"
        expect_in "$ERR" "pagewardenctl: pagewardend is not running (cannot connect to $NONE: No such file or directory)" \
                "$cmd without a daemon says so"
        expect_empty "$OUT" "$cmd without a daemon prints nothing on stdout"
done
run "$CTL" --socket "$NONE" status --json
expect_status 3 "status --json without a daemon exits 3"
expect_empty "$OUT" "status --json without a daemon prints nothing on stdout"
run "$CTL" --socket "$TMP/file.sock" --json list
expect_status 3 "list --json against a plain file exits 3"

run "$CTL" --socket "$NONE" version
expect_status 0 "version without a daemon succeeds"
expect_in "$OUT" "pagewardenctl 0." "version prints pagewardenctl's version"
expect_in "$OUT" "pagewardend: not running" "version says that the daemon is not running"
run "$CTL" --socket "$NONE" version --json
expect_status 3 "version --json without a daemon exits 3"

# ---- the socket: --socket, else $PAGEWARDEN_SOCKET, else the default -------

run env PAGEWARDEN_SOCKET="$TMP/env.sock" "$CTL" status
expect_status 3 "PAGEWARDEN_SOCKET: status without a daemon exits 3"
expect_in "$ERR" "cannot connect to $TMP/env.sock:" "PAGEWARDEN_SOCKET names the socket"
run env PAGEWARDEN_SOCKET="$TMP/env.sock" "$CTL" --socket "$NONE" status
expect_in "$ERR" "cannot connect to $NONE:" "--socket overrides PAGEWARDEN_SOCKET"
rm -f "$TMP/ran"
run env PAGEWARDEN_SOCKET="$TMP/env.sock" "$CTL" run --job backup -- touch "$TMP/ran"
expect_status 125 "PAGEWARDEN_SOCKET: run without a daemon exits 125"
expect_in "$ERR" "cannot connect to $TMP/env.sock:" "run uses PAGEWARDEN_SOCKET"
[ ! -e "$TMP/ran" ]
ok $? "run without a daemon at PAGEWARDEN_SOCKET does not run COMMAND"
run "$CTL" --socket "$TMP/$(printf 'x%.0s' {1..120})" status
expect_status 3 "a socket path too long for sun_path exits 3"
expect_in "$ERR" "File name too long" "a socket path too long says so"

done_testing
