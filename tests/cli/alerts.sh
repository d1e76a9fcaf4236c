#!/bin/bash
# The Prometheus alerting rules (packaging/prometheus/pagewarden-alerts.yml):
# they name only metrics that pagewardenctl metrics prints, their unit tests
# feed series shaped like its output (names and labels of
# tests/golden/ctl/metrics.ok, which metrics.sh checks against the program)
# with a case that fires and one that must not for every alert, promtool
# accepts the rules and passes the tests, and make install puts both files
# in $(docdir)/prometheus, where the tests still run.
#
# promtool is in Debian's prometheus package, which is a whole server (its
# postinst starts one): as the VM test bed does with kernels, the .deb is
# fetched with apt-get download into the cache (PW_VM_CACHE, else vm-cache/
# in the build tree), and only usr/bin/promtool is kept, so that later runs
# need no network.  PROMTOOL=/path/to/promtool uses that one instead.
# Without promtool the test fails and says what is missing; only where
# PW_VM_SKIP is set (package builds: no network, no apt) are the promtool
# checks skipped instead.
. "$top_srcdir/tests/cli/lib.sh"

DIR="$top_srcdir/packaging/prometheus"
RULES="$DIR/pagewarden-alerts.yml"
UNIT="$DIR/pagewarden-alerts.test.yml"
GOLDEN="$top_srcdir/tests/golden/ctl/metrics.ok"
CACHE=${PW_VM_CACHE:-$top_builddir/vm-cache}

# ---- promtool ----------------------------------------------------------------

MISSING= # what is missing to have promtool, when it cannot be had
cached_promtool() {
        ls -d "$CACHE"/tools/promtool-*/promtool 2>/dev/null | sort -V | tail -n 1
}
# Downloads prometheus's .deb and keeps its promtool, under a lock (another
# build tree may share the cache); sets PROMTOOL, or MISSING.
fetch_promtool() {
        local dl x deb ver opts=(-q)
        if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
                MISSING="promtool: not cached in $CACHE/tools, and no apt-get and dpkg-deb to download Debian's prometheus package (or set PROMTOOL=/path/to/promtool)"
                return 1
        fi
        if ! mkdir -p "$CACHE/debs" "$CACHE/tools" "$CACHE/locks"; then
                MISSING="promtool: cannot create the cache directory $CACHE"
                return 1
        fi
        exec 8>"$CACHE/locks/promtool.lock"
        if ! flock -w 900 8; then
                MISSING="promtool: timed out waiting for the cache lock $CACHE/locks/promtool.lock"
                return 1
        fi
        PROMTOOL=$(cached_promtool) # fetched by another run meanwhile
        [ -n "$PROMTOOL" ] && return 0
        # Leftovers of runs killed while holding the lock.
        rm -rf "$CACHE"/debs/.dl.prometheus.* "$CACHE"/tools/.x.prometheus.*
        dl=$(mktemp -d "$CACHE/debs/.dl.prometheus.XXXXXX")
        # apt's _apt sandbox user cannot write into a root-owned cache.
        [ "$(id -u)" = 0 ] && opts+=(-o APT::Sandbox::User=root)
        echo "# downloading prometheus (apt-get download) into $CACHE/debs for its promtool"
        if ! (cd "$dl" && apt-get "${opts[@]}" download prometheus) >"$TMP/apt.out" 2>&1; then
                sed 's/^/# apt-get: /' "$TMP/apt.out" | tail -n 5
                rm -rf "$dl"
                MISSING="promtool: apt-get download prometheus failed (no network to the Debian archive? stale lists: run 'apt-get update'), and none is cached in $CACHE/tools (or set PROMTOOL=/path/to/promtool)"
                return 1
        fi
        deb=$(ls "$dl"/prometheus_*.deb 2>/dev/null | head -n 1)
        ver=$(basename "$deb" .deb)
        ver=${ver#prometheus_}
        x=$(mktemp -d "$CACHE/tools/.x.prometheus.XXXXXX")
        # Only promtool: the rest (the server, its web assets) is not needed.
        if [ -z "$deb" ] || ! dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x" ./usr/bin/promtool ||
                ! mv "$x/usr/bin/promtool" "$x/promtool" || ! "$x/promtool" --version >"$TMP/version" 2>&1; then
                rm -rf "$dl" "$x"
                MISSING="promtool: no usable usr/bin/promtool in the downloaded ${deb:-prometheus .deb}"
                return 1
        fi
        rm -rf "${x:?}/usr" "$dl"
        # A rename: a run that looks meanwhile sees all of it or nothing.
        mv "$x" "$CACHE/tools/promtool-$ver" || { MISSING="promtool: cannot write $CACHE/tools"; return 1; }
        PROMTOOL="$CACHE/tools/promtool-$ver/promtool"
        echo "# cached $PROMTOOL"
}

if [ -n "${PROMTOOL:-}" ]; then
        [ -x "$PROMTOOL" ] || MISSING="promtool: PROMTOOL=$PROMTOOL is not an executable file"
else
        PROMTOOL=$(cached_promtool)
        if [ -z "$PROMTOOL" ]; then
                if [ -n "${PW_VM_SKIP:-}" ]; then
                        MISSING="promtool: not cached in $CACHE/tools, and PW_VM_SKIP is set ($PW_VM_SKIP): no download"
                else
                        fetch_promtool
                fi
        fi
fi
exec 8>&-
have_promtool() { # have_promtool DESCRIPTION: true if promtool can run the check, else a failure (a skip under PW_VM_SKIP)
        [ -z "$MISSING" ] && return 0
        if [ -n "${PW_VM_SKIP:-}" ]; then
                TAP_N=$((TAP_N + 1))
                echo "ok $TAP_N - $1 # SKIP $MISSING"
        else
                ok 1 "$1: $MISSING"
        fi
        return 1
}

# ---- only the metrics pagewardenctl metrics prints, shaped as it prints them ----

label_names() { # label_names SERIES: the names of its labels, sorted, joined by commas
        sed -E 's/^[^{]*//; s/^\{//; s/\}$//; s/="([^"\\]|\\.)*"//g' <<<"$1" | tr , '\n' | grep . | sort | paste -sd, -
}
# Each family of metrics.ok with each set of label names its samples have:
# "family label,label".  Besides them, the rules use node_exporter's mtime
# of the file and Prometheus's up.
shapes=$(awk '/^# TYPE / { fam = $3; next } /^#/ { next } { print fam, $1 }' "$GOLDEN" |
        while read -r fam sample; do echo "$fam $(label_names "$sample")"; done | sort -u)
shapes+=$'\n'"node_textfile_mtime_seconds file"$'\n'"up "
families=$(awk '{ print $1 }' <<<"$shapes" | sort -u)

# The expressions of the rules (expr: TEXT, or expr: | and the lines below it).
exprs=$(awk '/^ *expr:/ { ind = match($0, /[^ ]/); sub(/^ *expr: */, ""); if ($0 != "|") print; else block = 1; next }
        block && match($0, /[^ ]/) > ind { print; next } { block = 0 }' "$RULES")
names=$(grep -oE '\b(pagewarden|node)_[a-z0-9_]+' <<<"$exprs" | sort -u)
expect_eq "the rules name only metrics pagewardenctl metrics prints (or node_exporter's mtime)" \
        "$(comm -23 <(echo "$names") <(echo "$families"))" ""
expect_in "$names" "node_textfile_mtime_seconds" "they watch the metrics file's age"

# Each input series: a name and a set of labels that pagewardenctl metrics
# prints together, with the instance and job of a scrape.
bad_series=$(sed -n "s/^ *- series: '\(.*\)'\$/\1/p" "$UNIT" | while read -r s; do
        all=",$(label_names "$s"),"
        l=$(tr , '\n' <<<"$all" | grep -vx 'instance\|job' | grep . | paste -sd, -)
        [[ $all == *,instance,* && $all == *,job,* ]] || echo "$s: no instance and job"
        grep -qFx "${s%%\{*} $l" <<<"$shapes" || echo "$s: pagewardenctl metrics prints no such series"
done)
expect_eq "the tests' input series have the names and labels pagewardenctl metrics prints" "$bad_series" ""
expect_eq "and there are some" "$(grep -c "^ *- series: 'pagewarden_" "$UNIT" | awk '$1 > 20 { print "yes" }')" yes

# ---- every alert: a case that fires and one that must not ---------------------

alerts=$(sed -n 's/^ *- alert: *//p' "$RULES")
cases=$(awk '
        /^ *alertname:/ { a = $2; next }
        /^ *exp_alerts: *\[\]/ { if (a != "") print a, "quiet"; a = ""; next }
        /^ *exp_alerts: *$/ { if (a != "") print a, "fires"; a = ""; next }' "$UNIT")
expect_eq "there are alerts (down, stale, protection, stalls, OOM kills, frozen, held down)" \
        "$(wc -l <<<"$alerts" | awk '$1 >= 10 { print "yes" }')" yes
for a in $alerts; do
        expect_eq "$a: a case that fires and one that does not" \
                "$(grep "^$a " <<<"$cases" | awk '{ print $2 }' | sort -u | tr '\n' ' ')" "fires quiet "
done
for a in $(awk '{ print $1 }' <<<"$cases" | sort -u); do
        grep -qx "$a" <<<"$alerts" || ok 1 "the tests name an alert the rules do not have: $a"
done
run awk '/^ *- alert:/ { a = $3 } /^ *severity:/ { s[a] = $2 } /^ *summary:/ { m[a]++ } /^ *description:/ { d[a]++ }
        END { for (a in s) if (s[a] !~ /^(critical|warning)$/ || !m[a] || !d[a]) print a }' "$RULES"
expect_eq "every alert has a severity (critical or warning), a summary and a description" "$OUT" ""
expect_eq "the descriptions say what to run" \
        "$(awk '/^ *- alert:/ { a = $3 } /^ *#/ { next } a != "" && /pagewardenctl|journalctl|systemctl/ { t[a] = 1 }
                END { for (a in t) print a }' "$RULES" | sort)" \
        "$(sort <<<"$alerts")"

# ---- promtool ----------------------------------------------------------------

if have_promtool "promtool check rules"; then
        echo "# $PROMTOOL: $("$PROMTOOL" --version 2>&1 | head -n 1)"
        run "$PROMTOOL" check rules "$RULES"
        expect_status 0 "promtool check rules accepts pagewarden-alerts.yml"
        expect_in "$OUT" "SUCCESS: $(wc -l <<<"$alerts") rules found" "all $(wc -l <<<"$alerts") alerts"
fi
if have_promtool "promtool test rules"; then
        run "$PROMTOOL" test rules "$UNIT"
        expect_status 0 "promtool test rules: every case of pagewarden-alerts.test.yml passes"
        expect_in "$OUT" "SUCCESS" "and says so"
fi

# ---- installed: $(docdir)/prometheus -------------------------------------------

dest=$TMP/root
make -s -C "$top_builddir" install-dist_prometheusDATA DESTDIR="$dest" >"$TMP/make.out" 2>&1
ok $? "make install-dist_prometheusDATA (part of make install)"
# $(docdir) as this tree's make expands it.
# (Without the calling make's flags: under make distcheck they say -w, and
# "make[4]: Entering directory" would be read as the path.)
docdir=$(printf 'print-docdir:\n\t@echo $(docdir)\n' |
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$top_builddir" -f Makefile -f - print-docdir)
for f in pagewarden-alerts.yml pagewarden-alerts.test.yml; do
        cmp -s "$DIR/$f" "$dest$docdir/prometheus/$f"
        ok $? "$f is installed in $docdir/prometheus"
done
if have_promtool "promtool test rules on the installed copy"; then
        run "$PROMTOOL" test rules "$dest$docdir/prometheus/pagewarden-alerts.test.yml"
        expect_status 0 "the installed tests find the installed rules and pass"
fi

done_testing
