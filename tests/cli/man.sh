#!/bin/bash
# The manual pages render without warnings, and --help matches their SYNOPSIS.
. "$top_srcdir/tests/cli/lib.sh"

for page in pagewarden.yaml.5 pagewardenctl.8 pagewardend.8; do
        f="$top_builddir/man/$page"
        [ -s "$f" ]; ok $? "$page exists"
        run groff -man -ww -z "$f"
        expect_status 0 "$page: groff accepts it"
        expect_empty "$ERR" "$page: groff prints no warning"
        run env LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$f"
        expect_empty "$ERR" "$page: man -l renders it without warnings"
done

# Every option that --help lists is documented in the man page.
for prog in pagewardenctl pagewardend; do
        case $prog in
        pagewardenctl) page=pagewardenctl.8 bin=$CTL ;;
        pagewardend) page=pagewardend.8 bin=$DAEMON ;;
        esac
        text=$(MANWIDTH=200 man -l "$top_builddir/man/$page" 2>/dev/null)
        for opt in $("$bin" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
                expect_in "$text" "$opt" "$page documents $opt from --help"
        done
done

# The settings keys and policy keys are all in pagewarden.yaml(5).
text=$(MANWIDTH=200 man -l "$top_builddir/man/pagewarden.yaml.5" 2>/dev/null)
for key in policy_dir socket socket_group cgroup_root backend restore_on_stop run_fallback history_jobs history_days history_file log_level pressure threshold \
        window release cooldown jobs memory high max swap_max cpu weight io device read_bps write_bps \
        read_iops write_iops under_pressure memory_high_floor io_floor freeze freeze_max users protect unit \
        cgroup min low swap; do
        expect_in "$text" "$key" "pagewarden.yaml(5) documents $key"
done

done_testing
