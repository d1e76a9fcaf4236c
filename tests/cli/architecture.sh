#!/bin/bash
# docs/ARCHITECTURE.md's module tables against the code: every source file
# has its row and every row its file, and in the daemon's table, read from
# the top down, no module calls a module listed above it (the symbols each
# object file needs, as nm(1) reads them from the build), so that "data
# flows one way" stays true as the code changes.
. "$top_srcdir/tests/cli/lib.sh"

doc="$top_srcdir/docs/ARCHITECTURE.md"

# The file names in the first column of the table under heading $1, in order.
table_files() {
        awk -v h="$1" '
                /^## / { inside = ($0 == "## " h) ; next }
                inside && /^\| `/ {
                        split($0, col, "|")
                        s = col[2]
                        while (match(s, /`[a-z0-9-]+\.[ch]`/)) {
                                print substr(s, RSTART + 1, RLENGTH - 2)
                                s = substr(s, RSTART + RLENGTH)
                        }
                }' "$doc"
}

for part in shared daemon ctl; do
        case $part in
        shared) heading="The shared modules" ;;
        daemon) heading="The daemon's modules" ;;
        ctl) heading="The control program's modules" ;;
        esac
        listed=$(table_files "$heading" | sort -u)
        [ -n "$listed" ]; ok $? "ARCHITECTURE.md has a table of the $part modules"
        present=$(cd "$top_srcdir/src/$part" && ls -- *.c | sort)
        for f in $present; do
                case " $(echo "$listed" | tr '\n' ' ') " in
                *" $f "*) ok 0 "src/$part/$f has its row" ;;
                *) ok 1 "src/$part/$f has its row in \"$heading\"" ;;
                esac
        done
        for f in $listed; do
                [ -e "$top_srcdir/src/$part/$f" ]; ok $? "the row of $f names a file of src/$part"
        done
done

# The daemon's modules top down: a module's files share its stem (backend.h,
# backend.c; the engine's own header cgroup-engine.h belongs to cgroup.c's row).
order=$(table_files "The daemon's modules" | sed 's/\.[ch]$//' | awk '!seen[$0]++')
objdir="$top_builddir/src/daemon"
defs="$TMP/defs" needs="$TMP/needs"
: >"$defs"
: >"$needs"
n_objects=0
for c in "$top_srcdir"/src/daemon/*.c; do
        m=$(basename "$c" .c)
        o="$objdir/libdaemon_a-$m.o"
        [ "$m" = pagewardend ] && o="$objdir/pagewardend-pagewardend.o"
        [ -e "$o" ] || o=$(find "$top_builddir/src" -name "*-$m.o" | head -n 1)
        if [ -z "$o" ] || [ ! -e "$o" ]; then
                ok 1 "the object file of src/daemon/$m.c is built"
                continue
        fi
        n_objects=$((n_objects + 1))
        nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print $3, m }' >>"$defs"
        nm --undefined-only "$o" | awk -v m="$m" '{ print $NF, m }' >>"$needs"
done
[ "$n_objects" -gt 30 ]; ok $? "the daemon's object files are read ($n_objects)"

# symbol -> its module; then each need whose module is listed above the needer.
up=$(awk -v order="$(echo "$order" | tr '\n' ' ')" '
                BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) pos[o[i]] = i }
                FILENAME == ARGV[1] { def[$1] = $2; next }
                {
                        d = def[$1]
                        if (d == "" || d == $2 || !($2 in pos) || !(d in pos)) next
                        if (pos[d] < pos[$2]) print $2 " calls " d " (" $1 "), listed above it"
                }' "$defs" "$needs" | sort -u)
expect_empty "$up" "in the daemon's table no module calls one listed above it"
calls=$(awk 'FILENAME == ARGV[1] { def[$1] = $2; next } def[$1] != "" && def[$1] != $2 { print }' \
        "$defs" "$needs" | wc -l)
[ "$calls" -gt 100 ]; ok $? "calls between the daemon's modules were found to check ($calls)"

done_testing
