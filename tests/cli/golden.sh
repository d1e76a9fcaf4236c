#!/bin/bash
# `check --print` of the shipped files against expected output, and the
# printed policy parses again to the same policy (bgpd-style golden tests).
. "$top_srcdir/tests/cli/lib.sh"
cd "$top_srcdir" || exit 99

# The disk that "/" is on, found independently of pagewarden: findmnt, then
# the parent of a partition through sysfs.
root_disk() {
        local mm dir
        mm=$(findmnt -fno MAJ:MIN / | tr -d " ") || return 1
        dir=$(readlink -f "/sys/dev/block/$mm") || return 1
        [ -e "$dir/partition" ] && dir=$(dirname "$dir")
        DISK_MAJMIN=$(cat "$dir/dev")
        DISK_NAME=$(basename "$dir")
}
root_disk || { ok 1 "find the disk of / with findmnt and sysfs"; done_testing; exit; }

# Machine-specific values become placeholders before comparing.
normalise() {
        sed -e "s|\"$DISK_MAJMIN\"  # $DISK_NAME,|\"@DISK@\"  # @DISK_NAME@,|"
}

# Entry comments name the source file and line, which differ after a reprint.
strip_sources() {
        sed -e '/^# /d' -e 's|^\(  [A-Za-z0-9_-]*:\)  # .*|\1|' -e 's|\(# .*\), from .*|\1|'
}

golden() { # golden NAME ARGS...
        local name=$1
        shift
        run "$CTL" check --print --ram 16G "$@"
        expect_status 0 "$name: check --print succeeds"
        printf '%s\n' "$OUT" | normalise >"$TMP/$name.out"
        diff -u "tests/golden/$name.ok" "$TMP/$name.out" >"$TMP/$name.diff"
        ok $? "$name: output matches tests/golden/$name.ok"
        sed 's/^/# /' "$TMP/$name.diff"

        # The printed policy is itself a valid policy file that prints the same.
        printf '%s\n' "$OUT" >"$TMP/$name.reparse.yaml"
        run "$CTL" check --print --ram 16G "$TMP/$name.reparse.yaml"
        expect_status 0 "$name: the printed policy parses again"
        printf '%s\n' "$OUT" >"$TMP/$name.second"
        strip_sources <"$TMP/$name.out" >"$TMP/a"
        normalise <"$TMP/$name.second" | strip_sources >"$TMP/b"
        diff -u "$TMP/a" "$TMP/b" >"$TMP/$name.diff2"
        ok $? "$name: printing the printed policy gives the same policy"
        sed 's/^/# /' "$TMP/$name.diff2"
}

golden default --config conf/pagewarden.yaml
golden examples conf/examples
golden inputs tests/golden/inputs

done_testing
