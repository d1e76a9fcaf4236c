# shellcheck shell=bash
# TAP helpers for the command-line tests.  Each assertion prints one
# "ok N - ..." or "not ok N - ..." line; finish with `done_testing`.
set -u

: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
CTL="$top_builddir/src/pagewardenctl"
DAEMON="$top_builddir/src/pagewardend"
TAP_N=0
TAP_FAILED=0
TMP=$(mktemp -d /tmp/pagewarden-cli.XXXXXX)
# A fake daemon (tests/cli/fake-pagewardend) that answers every request
# with a recorded response; fake_answer starts it, fake_stop ends it.
FAKE="$top_builddir/tests/cli/fake-pagewardend"
FAKE_PID=
fake_stop() {
        [ -n "$FAKE_PID" ] || return 0
        kill "$FAKE_PID" 2>/dev/null
        kill -CONT "$FAKE_PID" 2>/dev/null # a test may have stopped it
        wait "$FAKE_PID" 2>/dev/null
        FAKE_PID=
}
fake_answer() { # fake_answer SOCKET FILE: the fake daemon answers on SOCKET with FILE from now on
        fake_stop
        rm -f "$TMP/ready"
        "$FAKE" "$1" "$2" >"$TMP/ready" &
        FAKE_PID=$!
        for _ in $(seq 50); do grep -q ready "$TMP/ready" 2>/dev/null && return; sleep 0.1; done
        echo "Bail out! the fake daemon did not start"
        exit 1
}
trap 'fake_stop; rm -rf "$TMP"' EXIT

ok() { # ok COND-STATUS DESCRIPTION
        TAP_N=$((TAP_N + 1))
        if [ "$1" -eq 0 ]; then
                echo "ok $TAP_N - $2"
        else
                echo "not ok $TAP_N - $2"
                TAP_FAILED=$((TAP_FAILED + 1))
        fi
}

# run CMD...: runs a command, keeping its exit status, stdout and stderr.
run() {
        "$@" >"$TMP/out" 2>"$TMP/err"
        STATUS=$?
        OUT=$(cat "$TMP/out")
        ERR=$(cat "$TMP/err")
}

expect_status() { # expect_status N DESCRIPTION
        local s=0
        [ "$STATUS" -eq "$1" ] || s=1
        ok $s "$2 (exit $STATUS, want $1)"
        [ $s -eq 0 ] || { echo "# stdout: $OUT"; echo "# stderr: $ERR"; } | sed 's/^/# /'
}

expect_in() { # expect_in TEXT NEEDLE DESCRIPTION
        local s=0
        case "$1" in *"$2"*) ;; *) s=1 ;; esac
        ok $s "$3"
        [ $s -eq 0 ] || { echo "want: $2"; echo "got:"; echo "$1"; } | sed 's/^/# /'
}

expect_eq() { # expect_eq DESCRIPTION GOT WANT
        local s=0
        [ "$2" = "$3" ] || s=1
        ok $s "$1"
        [ $s -eq 0 ] || printf "got '%s', want '%s'\n" "$2" "$3" | sed 's/^/# /'
}

expect_empty() { # expect_empty TEXT DESCRIPTION
        local s=0
        [ -z "$1" ] || s=1
        ok $s "$2"
        [ $s -eq 0 ] || echo "$1" | sed 's/^/# got: /'
}

expect_not_in() { # expect_not_in TEXT NEEDLE DESCRIPTION
        local s=0
        case "$1" in *"$2"*) s=1 ;; esac
        ok $s "$3"
}

# For assertions that need root: in CI a missing precondition is a failure, not a skip.
need_root() { # need_root DESCRIPTION
        [ "$(id -u)" -eq 0 ] && return 0
        if [ "${CI:-}" = true ]; then
                ok 1 "$1: needs root"
        else
                TAP_N=$((TAP_N + 1))
                echo "ok $TAP_N - $1 # SKIP needs root"
        fi
        return 1
}

done_testing() {
        echo "1..$TAP_N"
        [ "$TAP_FAILED" -eq 0 ]
}
