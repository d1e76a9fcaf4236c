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

# Ownership, like sudoers: only enforced for root.
if need_root "a policy file writable by others is refused"; then
        cp "$CONF/policies.d/jobs.yaml" "$TMP/open.yaml"
        chmod 0666 "$TMP/open.yaml"
        run "$CTL" check "$TMP/open.yaml"
        expect_status 1 "a policy file writable by others is refused"
        expect_in "$ERR" "file is writable by others (mode 0666): refusing it (chmod go-w)" "the refusal says why and what to do"
        chmod 0644 "$TMP/open.yaml"
        chown nobody "$TMP/open.yaml"
        run "$CTL" check "$TMP/open.yaml"
        expect_status 1 "a policy file not owned by root is refused"
        expect_in "$ERR" "not root: refusing it (chown root)" "the owner refusal says what to do"
        # A root-owned file in a root-owned directory below a user's directory is the user's.
        mkdir -p "$TMP/user/policies.d"
        cp "$CONF/policies.d/jobs.yaml" "$TMP/user/policies.d/jobs.yaml"
        chown nobody "$TMP/user"
        run "$CTL" check "$TMP/user/policies.d/jobs.yaml"
        expect_status 1 "a policy below a directory owned by a user is refused"
        expect_in "$ERR" "directory $TMP/user above it is not owned by root" "the refusal names the directory"
        chown root "$TMP/user"
        chmod 0777 "$TMP/user"
        run "$CTL" check "$TMP/user/policies.d/jobs.yaml"
        expect_status 1 "a policy below a directory others may write is refused"
        chmod 1777 "$TMP/user"
        run "$CTL" check "$TMP/user/policies.d/jobs.yaml"
        expect_status 0 "a sticky directory above it (like /tmp) is safe"
fi

done_testing
