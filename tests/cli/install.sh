#!/bin/bash
# make install: the shipped defaults in $(pkgdatadir)/defaults, the
# operator's /etc/pagewarden created by the first install and never touched
# by a later one; make uninstall removes only unchanged copies; the
# completions land where configure said.
. "$top_srcdir/tests/cli/lib.sh"

dest=$TMP/root
mk() { make -s -C "$top_builddir" "$@" DESTDIR="$dest" >"$TMP/make.out" 2>&1; }
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$top_builddir/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
etc=$dest${sysconfdir//\$\{prefix\}/$prefix}/pagewarden
defaults=$dest$prefix/share/pagewarden/defaults

mk install
ok $? "make install DESTDIR=..."
check_same() { cmp -s "$1" "$2"; ok $? "$3"; }
check_same "$etc/pagewarden.yaml" "$top_srcdir/conf/pagewarden.yaml" "the first install creates the settings file"
check_same "$etc/policies.d/jobs.yaml" "$top_srcdir/conf/policies.d/jobs.yaml" "and the default job classes"
check_same "$defaults/pagewarden.yaml" "$top_srcdir/conf/pagewarden.yaml" "the shipped settings are kept in defaults/"
check_same "$defaults/policies.d/jobs.yaml" "$top_srcdir/conf/policies.d/jobs.yaml" "and the shipped classes"

# The operator edits one file, removes the other, adds a third.
echo "log_level: debug # the operator's" >>"$etc/pagewarden.yaml"
rm "$etc/policies.d/jobs.yaml"
printf 'jobs:\n  mine: {}\n' >"$etc/policies.d/mine.yaml"
mk install
ok $? "make install again"
expect_in "$(cat "$TMP/make.out")" "exists: left as it is" "it says it leaves the configuration alone"
expect_in "$(cat "$etc/pagewarden.yaml")" "log_level: debug # the operator's" "an edited file is not overwritten"
[ ! -e "$etc/policies.d/jobs.yaml" ]
ok $? "a removed file is not brought back"
[ -e "$etc/policies.d/mine.yaml" ]
ok $? "the operator's own file stays"

bashdir=$(sed -n 's/^bashcompletiondir = //p' "$top_builddir/Makefile")
zshdir=$(sed -n 's/^zshcompletiondir = //p' "$top_builddir/Makefile")
datadir=$prefix/share
[ -f "$dest${bashdir//\$\{datadir\}/$datadir}/pagewardenctl" ]
ok $? "the bash completion is installed as pagewardenctl in $bashdir"
[ -f "$dest${zshdir//\$\{datadir\}/$datadir}/_pagewardenctl" ]
ok $? "the zsh completion is installed as _pagewardenctl in $zshdir"
# The Ansible role, as documentation, every file of it as it is (no file
# of packaging/ansible forgotten in Makefile.am).
role=$(find "$dest" -type d -path '*/doc/pagewarden/ansible')
[ -n "$role" ] && diff -r "$top_srcdir/packaging/ansible" "$role" >"$TMP/role.diff" 2>&1
ok $? "the Ansible role and its playbook are installed in \$(docdir)/ansible"

mk uninstall
ok $? "make uninstall"
expect_in "$(cat "$TMP/make.out")" "differs from the shipped default: left as it is" "it says what it leaves"
[ -e "$etc/pagewarden.yaml" ] && [ -e "$etc/policies.d/mine.yaml" ]
ok $? "the operator's files stay after uninstall"
[ ! -e "$defaults/pagewarden.yaml" ] && [ ! -e "$dest$prefix/sbin/pagewardend" ]
ok $? "the programs and the defaults are gone"
# A fresh install then uninstall leaves no configuration behind.
rm -rf "$dest"
mk install && mk uninstall
ok $? "install, then uninstall"
[ ! -e "$etc" ]
ok $? "an unchanged configuration goes with the uninstall"
left=$(find "$dest" -type f 2>/dev/null)
expect_eq "no file is left" "$left" ""

done_testing
