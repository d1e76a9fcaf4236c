#!/bin/bash
# pagewardenctl: options, exit statuses and messages of `check`.
. "$top_srcdir/tests/cli/lib.sh"
CONF="$top_srcdir/conf"

run "$CTL" --help
expect_status 0 "--help succeeds"
expect_in "$OUT" "Usage: pagewardenctl [OPTIONS] COMMAND [ARGS...]" "--help prints the synopsis"
run "$CTL" --version
expect_status 0 "--version succeeds"
expect_in "$OUT" "pagewarden " "--version names the package"
run "$CTL"
expect_status 2 "no command is a usage error"
expect_in "$ERR" "missing command" "no command says so"
run "$CTL" frobnicate
expect_status 2 "an unknown command is a usage error"
expect_in "$ERR" "unknown command 'frobnicate'" "an unknown command is named"
run "$CTL" check --no-such-option
expect_status 2 "an unknown option is a usage error"
run "$CTL" check --ram 12X "$CONF/policies.d"
expect_status 2 "a bad --ram is a usage error"

# The shipped configuration is valid.
run "$CTL" check --config "$CONF/pagewarden.yaml"
expect_status 0 "the shipped settings and policies are valid"
expect_in "$OUT" "2 sources checked: 2 job classes, 0 protected applications" "check prints a summary"
run "$CTL" check --quiet "$CONF/examples"
expect_status 0 "the shipped examples are valid"
expect_empty "$OUT" "--quiet prints nothing"

# A device that is not there (an unplugged backup disk) is a warning: the
# file is valid, unless --strict.
printf 'jobs:\n  b:\n    io: [{device: /mnt/no-such-disk, write_bps: 10M}]\n' >"$TMP/absent.yaml"
run "$CTL" check "$TMP/absent.yaml"
expect_status 0 "a missing io device is not an error"
expect_in "$ERR" "$TMP/absent.yaml:3:19: warning: device '/mnt/no-such-disk' does not exist: its limits apply once it does" "but a located warning"
expect_in "$ERR" "1 warning" "counted"
expect_in "$OUT" "1 source checked: 1 job class" "and the summary follows"
run "$CTL" check --strict "$TMP/absent.yaml"
expect_status 1 "--strict refuses warnings"
expect_in "$ERR" "1 warning (--strict: invalid)" "--strict says why"
run "$CTL" check --print "$TMP/absent.yaml"
expect_in "$OUT" 'device: "/mnt/no-such-disk"  # not there now: applies once it is' "--print keeps the path of a device not there"

# exe: programs are looked at on this host (issue 25): a rule that cannot
# match is a warning at its entry; scripts, and links to a script that
# several names share (Debian's pg_wrapper), can match and get none.
P=$TMP/progs/bin S=$TMP/progs/share I=$TMP/progs/interp
mkdir -p "$P" "$S" "$I"
cp /bin/true "$I/python3"
cp /bin/true "$I/perl"
cp /bin/true "$S/busybox"
printf '#!%s\nfrom borg.archiver import main\n' "$I/python3" >"$P/borg"
printf '#!%s -w\nuse strict;\n' "$I/perl" >"$S/pg_wrapper"
printf '#!%s\nputs 1\n' "$I/ruby" >"$P/noint" # no such interpreter
printf '#!/bin/sh\n' >"$P/notes"
chmod 0755 "$P/borg" "$S/pg_wrapper" "$P/noint"
chmod 0644 "$P/notes"
for n in pg_dump psql pgbench; do ln -s "$S/pg_wrapper" "$P/$n"; done
for n in bb-ls bb-cat bb-echo; do ln -s "$S/busybox" "$P/$n"; done
cat >"$TMP/progs/rules.yaml" <<YAML
jobs:
  backup:
    match:
      exe:
        - $P/borg
        - $P/pg_dump
        - $P/bb-ls
        - $P/notes
        - $P/borgg
        - $P/noint
        - /bin/true
YAML
F=$TMP/progs/rules.yaml
run "$CTL" check "$F"
expect_status 0 "programs that cannot match are no error (a policy may come before its programs)"
expect_in "$ERR" "$F:9:11: warning: $P/borgg does not exist on this host: the rule matches nothing until it is installed (a typo?)
            - $P/borgg
              ^" "a program that does not exist: a warning at its entry, with the line and a caret"
expect_in "$ERR" "$F:8:11: warning: $P/notes is not an executable file: the rule matches nothing" \
        "a file that is not executable: a warning"
expect_in "$ERR" "$F:10:11: warning: $P/noint is a script for $I/ruby, which is not installed: the rule matches nothing" \
        "a script whose interpreter is missing: a warning"
expect_in "$ERR" "$F:7:11: warning: $P/bb-ls is a symbolic link to $S/busybox, which 2 other names in its directory link to as well (" \
        "a link to a binary that other names share: a warning"
expect_not_in "$ERR" "$F:5:" "no warning for a script whose interpreter is there"
expect_not_in "$ERR" "$F:6:" "no warning for a link to a script that other names share"
expect_not_in "$ERR" "$F:11:" "no warning for a program (/bin/true)"
expect_in "$(printf '%s\n' "$ERR" | tail -n 1)" "4 warnings" "4 warnings, nothing else"
expect_in "$OUT" "1 source checked: 1 job class" "and the summary follows"
run "$CTL" check --strict "$F"
expect_status 1 "--strict refuses programs that cannot match"
expect_in "$ERR" "4 warnings (--strict: invalid)" "--strict says why"
# Whichever way the files are named: a directory, and with --ram.
mkdir "$TMP/progs/policies.d"
cp "$F" "$TMP/progs/policies.d/rules.yaml"
run "$CTL" check --ram 64G "$TMP/progs/policies.d"
expect_in "$ERR" "$TMP/progs/policies.d/rules.yaml:9:11: warning: $P/borgg does not exist" \
        "a policy directory, with --ram, gets the same warnings"

# Errors: file:line:column, the line, a caret; every error of the file; exit 1.
cat >"$TMP/bad.yaml" <<'YAML'
jobs:
  backup:
    memory:
      hihg: 256M
      max: 1Q
  a/b: {}
protect:
  db: {memory: {min: 1G}}
YAML
run "$CTL" check "$TMP/bad.yaml"
expect_status 1 "an invalid policy exits 1"
expect_in "$ERR" "$TMP/bad.yaml:4:7: error: unknown key 'hihg' in job class 'backup'.memory: did you mean 'high'?
          hihg: 256M
          ^" "an error shows file:line:column, the line and a caret"
expect_in "$ERR" "$TMP/bad.yaml:5:12: error: '1Q'" "a second error in the same file is reported"
expect_in "$ERR" "$TMP/bad.yaml:6:3: error: job class 'a/b': name contains '/'" "an unsafe name is reported"
expect_in "$ERR" "$TMP/bad.yaml:8:3: error: protect entry 'db' needs unit:" "a protect entry without a target is reported"
expect_in "$ERR" "4 errors" "the number of errors is given"
expect_empty "$OUT" "nothing is printed on stdout for an invalid policy"

# One bad file among good ones fails the whole check.
mkdir "$TMP/dir"
cp "$CONF/policies.d/jobs.yaml" "$TMP/dir/10-jobs.yaml"
printf 'jobs:\n  backup: {}\n' >"$TMP/dir/20-more.yaml"
run "$CTL" check "$TMP/dir"
expect_status 1 "a duplicate class across files is invalid"
expect_in "$ERR" "20-more.yaml:2:3: error: job class 'backup' is already defined at 10-jobs.yaml:" "the duplicate names the first definition"

run "$CTL" check "$TMP/missing.yaml"
expect_status 1 "a missing file is an error"
expect_in "$ERR" "missing.yaml: error: No such file or directory" "a missing file is named"

printf 'a: &x 1\nb: *x\n' >"$TMP/alias.yaml"
run "$CTL" check "$TMP/alias.yaml"
expect_status 1 "aliases are refused"
expect_in "$ERR" "YAML anchors ('&x') are not allowed" "the anchor is named"

printf 'jobs:\n\tb: {}\n' >"$TMP/tab.yaml"
run "$CTL" check "$TMP/tab.yaml"
expect_status 1 "tabs are refused"

# Percentages against another machine's RAM.
printf 'jobs:\n  b:\n    memory: {high: 25%%}\n' >"$TMP/pct.yaml"
run "$CTL" check --print --ram 8G "$TMP/pct.yaml"
expect_status 0 "--ram resolves percentages"
expect_in "$OUT" "high: 2147483648  # 2 GiB" "25% of 8G is 2 GiB"

# Sizes as status prints them parse; check --print writes them in its one form.
printf 'jobs:\n  b:\n    memory: {high: 256 MiB, max: "1.5GiB", swap_max: 512B}\n' >"$TMP/human.yaml"
run "$CTL" check --print "$TMP/human.yaml"
expect_status 0 "sizes as status prints them are accepted"
expect_in "$OUT" "high: 268435456  # 256 MiB" "256 MiB is 268435456 bytes"
expect_in "$OUT" "max: 1610612736  # 1.5 GiB" "1.5GiB is 1610612736 bytes"
expect_in "$(printf '%s\n' "$OUT" | grep -cx '      swap_max: 512')" 1 "512B is 512 bytes"
printf 'jobs:\n  b:\n    memory: {high: 256MB}\n' >"$TMP/si.yaml"
run "$CTL" check "$TMP/si.yaml"
expect_status 1 "256MB is refused"
expect_in "$ERR" "si.yaml:3:20: error: '256MB': KB, MB, GB and TB are ambiguous" "and the error says why"

# Bounds (pagewarden.yaml(5), LIMITS): any file is checked at once, and at most 100 errors of a file are shown.
head -c 100000 /dev/zero | tr '\0' '[' >"$TMP/deep.yaml"
run timeout 5 "$CTL" check "$TMP/deep.yaml"
expect_status 1 "100,000 nested lists are refused at once (they took 88 s)"
expect_in "$ERR" "$TMP/deep.yaml:1:33: error: nesting is too deep: at most 32 levels of mappings and lists (reading stops here)" \
        "the nesting error says where"
# That, and that a policy is not a list: nothing about the rest (which ends without its ']').
expect_in "$(printf '%s\n' "$ERR" | tail -n 1)" "2 errors" "reading stops at the first level too deep"

{ echo 'jobs:'; echo '  c:'; seq 5000 | sed 's/.*/    k&: 1/'; } >"$TMP/many.yaml"
run "$CTL" check "$TMP/many.yaml"
expect_status 1 "a file with 5,000 errors is invalid"
expect_in "$ERR" "$TMP/many.yaml: ... and 4900 more errors (at most 100 are shown per file)
5000 errors" "after 100 errors, the others are counted"
[ "$(printf '%s\n' "$ERR" | wc -l)" -le 302 ]
ok $? "100 errors of 3 lines each, and 2 lines more"
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
        # LeakSanitizer cannot work under ptrace, and says so in writes of its own.
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                strace -f -e trace=write -o "$TMP/strace" "$CTL" check "$TMP/many.yaml" 2>/dev/null
        writes=$(grep -c '^[0-9]* *write(' "$TMP/strace")
        [ "$writes" -le 4 ]
        ok $? "the errors are written at once, not a character at a time ($writes writes)"
else
        TAP_N=$((TAP_N + 1))
        echo "ok $TAP_N - the errors are written at once # SKIP strace is not usable here"
fi

awk 'BEGIN { printf "jobs: {c: {"; for (i = 0; i < 16000; i++) printf "a: 1, "; print "a: 1}}" }' >"$TMP/line.yaml"
run "$CTL" check "$TMP/line.yaml"
expect_status 1 "a line of 99 KB with 16,000 errors is invalid"
expect_in "$ERR" "$TMP/line.yaml:1:18: error: duplicate key 'a' (first given at line 1)
    jobs: {c: {a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: 1, a: ...
                     ^
$TMP/line.yaml:1:24: error: duplicate key 'a' (first given at line 1)" "a long line is quoted as 80 characters around the column"
longest=$(printf '%s\n' "$ERR" | awk '{ if (length > m) m = length } END { print m }')
[ "$longest" -le 200 ]
ok $? "no line of the report is long ($longest characters)"

head -c 1048577 /dev/zero | tr '\0' '#' >"$TMP/huge.yaml"
run "$CTL" check "$TMP/huge.yaml"
expect_status 1 "a file larger than 1 MiB is refused"
expect_in "$ERR" "$TMP/huge.yaml: error: file is larger than 1 MiB (1048576 bytes)" "the size is the reason given"

{ echo 'jobs:'; seq 0 256 | sed 's/.*/  c&: {}/'; } >"$TMP/classes.yaml"
run "$CTL" check "$TMP/classes.yaml"
expect_status 1 "257 job classes are too many"
expect_in "$ERR" "$TMP/classes.yaml:258:3: error: more than 256 job classes in the policy (the rest of jobs: is not read)" \
        "the class past the limit is named"

# Ownership, like sudoers: only enforced for root, on what the daemon loads.
# A file named on the command line is being validated: a warning.
if need_root "a policy file writable by others is refused"; then
        mkdir -p "$TMP/own/policies.d"
        cp "$CONF/policies.d/jobs.yaml" "$TMP/own/policies.d/jobs.yaml"
        printf 'policy_dir: policies.d\n' >"$TMP/own/pagewarden.yaml"
        chmod 0666 "$TMP/own/policies.d/jobs.yaml"
        run "$CTL" check --config "$TMP/own/pagewarden.yaml"
        expect_status 1 "a policy file writable by others is refused"
        expect_in "$ERR" "file is writable by others (mode 0666): refusing it (chmod go-w)" "the refusal says why and what to do"
        chmod 0644 "$TMP/own/policies.d/jobs.yaml"
        chown nobody "$TMP/own/policies.d/jobs.yaml"
        run "$CTL" check --config "$TMP/own/pagewarden.yaml"
        expect_status 1 "a policy file not owned by root is refused"
        expect_in "$ERR" "not root: refusing it (chown root)" "the owner refusal says what to do"
        run "$CTL" check "$TMP/own/policies.d/jobs.yaml"
        expect_status 0 "the same file named to be validated is valid"
        expect_in "$ERR" "warning: file is owned by uid $(id -u nobody), not root: the daemon would refuse it (chown root)" \
                "with a warning that the daemon would refuse it"
        run "$CTL" check --strict "$TMP/own/policies.d/jobs.yaml"
        expect_status 1 "--strict makes the warning an error"
        chown root "$TMP/own/policies.d/jobs.yaml"
        # A root-owned file in a root-owned directory below a user's directory is the user's.
        mkdir -p "$TMP/user/policies.d"
        cp "$CONF/policies.d/jobs.yaml" "$TMP/user/policies.d/jobs.yaml"
        printf 'policy_dir: policies.d\n' >"$TMP/user/pagewarden.yaml"
        chown nobody "$TMP/user"
        run "$CTL" check --config "$TMP/user/pagewarden.yaml"
        expect_status 1 "a policy below a directory owned by a user is refused"
        expect_in "$ERR" "directory $TMP/user above it is not owned by root" "the refusal names the directory"
        chown root "$TMP/user"
        chmod 0777 "$TMP/user"
        run "$CTL" check --config "$TMP/user/pagewarden.yaml"
        expect_status 1 "a policy below a directory others may write is refused"
        chmod 1777 "$TMP/user"
        run "$CTL" check --config "$TMP/user/pagewarden.yaml"
        expect_status 0 "a sticky directory above it (like /tmp) is safe"

        # The recipes of pagewardenctl(8), their commands as written there.
        text=$(MANWIDTH=200 man -l "$top_builddir/man/pagewardenctl.8" 2>/dev/null)
        ansible=$(sed -n 's/^ *validate: //p' <<<"$text")
        puppet=$(sed -n "s/^ *validate_cmd => '\(.*\)',\$/\1/p" <<<"$text")
        expect_eq "the man page has the Ansible recipe" "$ansible" "pagewardenctl check %s"
        expect_in "$puppet" "/pagewardenctl check %" "the man page has the Puppet recipe"
        # Ansible (become: root) validates ~connecting-user/.ansible/tmp/ansible-tmp-*/source,
        # a root-owned copy in the user's directory, running the command without a shell.
        tmpdir="$TMP/home/.ansible/tmp/ansible-tmp-1733112000.1-42-1"
        mkdir -p "$tmpdir"
        chown -R nobody "$TMP/home"
        cp "$CONF/policies.d/jobs.yaml" "$tmpdir/source"
        chmod 0600 "$tmpdir/source"
        # shellcheck disable=SC2086 # split into words like Ansible does
        set -- ${ansible//%s/$tmpdir/source}
        run env PATH="$(dirname "$CTL"):$PATH" "$@"
        expect_status 0 "Ansible's validate accepts a valid file in the connecting user's tmp directory"
        expect_in "$ERR" "the daemon would refuse it" "and warns that the daemon would refuse it there"
        printf 'jobs:\n  b: {memory: {high: 5%%%%}}\n' >"$tmpdir/source"
        run env PATH="$(dirname "$CTL"):$PATH" "$@"
        expect_status 1 "Ansible's validate rejects an invalid file"
        # The settings file the same way, as the Ansible role validates it:
        # --config with the policy directory as operand.
        cp "$CONF/pagewarden.yaml" "$tmpdir/source"
        chmod 0600 "$tmpdir/source"
        run "$CTL" check --config "$tmpdir/source" "$CONF/policies.d"
        expect_status 0 "a settings file's copy there validates with --config and the policy directory"
        expect_in "$ERR" "the daemon would refuse it" "with the same warning"
        run "$CTL" check --config "$tmpdir/source"
        expect_status 1 "without operands, --config FILE is loaded as the daemon would: refused there"
        expect_in "$ERR" "not owned by root (mode 0755, uid $(id -u nobody)): refusing it" "and says why"
        # Puppet validates a copy it owns (root) in its own directory; the
        # connecting user there is root, the file may be 0600.
        mkdir -p "$TMP/puppet"
        cp "$CONF/policies.d/jobs.yaml" "$TMP/puppet/jobs.yaml20261202-1-abc"
        chmod 0600 "$TMP/puppet/jobs.yaml20261202-1-abc"
        puppet_cmd=${puppet//%/$TMP/puppet/jobs.yaml20261202-1-abc}
        puppet_cmd=${puppet_cmd/#*\/pagewardenctl/$CTL}
        # shellcheck disable=SC2086
        run $puppet_cmd
        expect_status 0 "Puppet's validate_cmd accepts a valid file"
        expect_empty "$ERR" "with nothing to say about a root-owned copy"
        echo 'jobs: [' >"$TMP/puppet/jobs.yaml20261202-1-abc"
        # shellcheck disable=SC2086
        run $puppet_cmd
        expect_status 1 "Puppet's validate_cmd rejects an invalid file"
fi

done_testing
