#!/bin/bash
# Shell completion of pagewardenctl (packaging/completion): bash's function
# called as bash-completion calls it (COMP_WORDS, COMP_CWORD, COMP_LINE), and
# zsh's typed into an interactive zsh (its zsh/zpty module: a pty) with a TAB.
# Commands, options, option arguments, and the job classes and jobs of a
# daemon (tests/cli/fake-pagewardend answering with a recorded response), or
# the job classes of the policy files when no daemon answers, quickly.
# shellcheck disable=SC2154 # top_srcdir and top_builddir: from make check
. "$top_srcdir/tests/cli/lib.sh"

COMPDIR="$top_srcdir/packaging/completion"
GOLDEN="$top_srcdir/tests/golden/ctl"
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
SOCK="$TMP/control.sock"
export BASH_COMPLETION COMPDIR TMP # for the shells that complete
NONE="$TMP/none.sock" # nothing there: no daemon
# The completions run the pagewardenctl of this build.
export PATH="$top_builddir/src:$PATH"
unset PAGEWARDEN_SOCKET COLUMNS
# answer FILE: the fake daemon answers every request with FILE from now on.
answer() { fake_answer "$SOCK" "$1"; }

# For what the machine lacks: a failure in CI, else a skip.
need() { # need COND-STATUS WHAT
        [ "$1" -eq 0 ] && return 0
        if [ "${CI:-}" = true ]; then
                ok 1 "$2"
        else
                TAP_N=$((TAP_N + 1))
                echo "ok $TAP_N - $2 # SKIP not installed"
        fi
        return 1
}

# A policy for when no daemon answers: a settings file and its policy_dir.
mkdir -p "$TMP/conf/policies.d" "$TMP/files/sub"
printf 'policy_dir: policies.d\n' >"$TMP/conf/pagewarden.yaml"
cat >"$TMP/conf/policies.d/jobs.yaml" <<'EOF'
jobs:
  nightly-dump:
    memory:
      high: 256M
  bulk-copy:
    memory:
      high: 128M
EOF
touch "$TMP/files/a.yaml" "$TMP/files/b.txt"
# A response with a frozen job and one that is not.
cat >"$TMP/frozen.json" <<'EOF'
{ "ok": true, "jobs": [
  { "id": 3, "name": "nightly", "class": "backup", "state": "running" },
  { "id": 9, "name": "paused", "class": "backup", "state": "frozen" },
  { "id": 11, "name": null, "class": "backup", "state": "frozen" } ] }
EOF

# ---- bash --------------------------------------------------------------------

# What the candidates of each shell are compared with: sorted, on one line.
words() { sort -u | tr '\n' ' ' | sed 's/ $//'; }

cat >"$TMP/complete.bash" <<'EOF'
# bash complete.bash LINE: the completion of LINE (the cursor at its end), one
# candidate a line; how long it took (ms) in $TMP/elapsed.
. "$BASH_COMPLETION"
. "$COMPDIR/pagewardenctl.bash"
# The words as readline splits them: at blanks, and each "=" a word.
COMP_WORDS=()
for w in $1; do
        while [[ $w == *=* ]]; do
                [[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
                COMP_WORDS+=("=")
                w=${w#*=}
        done
        [[ -n $w ]] && COMP_WORDS+=("$w")
done
[[ $1 == *' ' ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$1
COMP_POINT=${#1}
COMPREPLY=()
start=$EPOCHREALTIME
_pagewardenctl pagewardenctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
end=$EPOCHREALTIME
echo $(((${end/./} - ${start/./}) / 1000)) >"$TMP/elapsed"
[[ ${#COMPREPLY[@]} -gt 0 ]] && printf '%s\n' "${COMPREPLY[@]}"
EOF
# expect_quick MS DESCRIPTION: the last bash_complete took less than MS milliseconds.
expect_quick() {
        local ms s=1
        ms=$(cat "$TMP/elapsed" 2>/dev/null)
        [[ $ms =~ ^[0-9]+$ ]] && [ "$ms" -lt "$1" ] && s=0
        ok $s "$2 ($ms ms)"
}
bash_complete() { # bash_complete LINE: the candidates, sorted, on one line
        rm -f "$TMP/elapsed"
        bash "$TMP/complete.bash" "$1" | words
}

# The options of an option list, each with an argument if it takes one.
with_arg() { # with_arg OPTION
        case $1 in
        --socket) echo "$1 $NONE" ;;
        -c | --config) echo "$1 $TMP/conf/pagewarden.yaml" ;;
        --job | --name) echo "$1 x" ;;
        -p | --property) echo "$1 MemoryHigh=1M" ;;
        -s | --signal) echo "$1 TERM" ;;
        -d | --delay | -n | --iterations) echo "$1 1" ;;
        -r | --ram) echo "$1 1G" ;;
        -o | --output) echo "$1 $TMP/metrics.prom" ;;
        *) echo "$1" ;;
        esac
}

if need "$([ -r "$BASH_COMPLETION" ]; echo $?)" "bash completion: bash-completion is installed ($BASH_COMPLETION)"; then
        # Commands.
        got=$(bash_complete "pagewardenctl ")
        commands=$got
        expect_eq "bash: the commands" "$got" \
                "check freeze help kill list metrics move reload run show status stop suggest thaw top version"
        bad=
        for cmd in $got; do
                "$CTL" --socket "$NONE" "$cmd" --help >/dev/null 2>&1 || bad="$bad $cmd"
        done
        expect_eq "bash: pagewardenctl takes every command completed" "$bad" ""
        missing=
        for cmd in $("$CTL" --help | sed -n '/^Commands:/,/^Options:/s/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p'); do
                case " $got " in *" $cmd "*) ;; *) missing="$missing $cmd" ;; esac
        done
        expect_eq "bash: every command of --help is completed" "$missing" ""
        expect_eq "bash: st completes to status and stop" "$(bash_complete "pagewardenctl st")" "status stop"
        expect_eq "bash: after a global option with its argument, the commands still" \
                "$(bash_complete "pagewardenctl --socket $NONE -l re")" "reload"

        # Options: the ones pagewardenctl takes, where it takes them.
        got=$(bash_complete "pagewardenctl -")
        expect_eq "bash: the global options" "$got" \
                "--config --full --help --json --no-legend --no-pager --socket --version -V -c -h -l"
        bad=
        for o in $got; do
                # shellcheck disable=SC2046
                "$CTL" $(with_arg "$o") help >/dev/null 2>&1 || bad="$bad $o"
        done
        expect_eq "bash: pagewardenctl takes every global option completed" "$bad" ""
        missing=
        for o in $("$CTL" --help | sed -n '/^Options:/,/^Options of run:/s/^ *\(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p'); do
                case " $got " in *" $o "*) ;; *) missing="$missing $o" ;; esac
        done
        expect_eq "bash: every global option of --help is completed" "$missing" ""
        expect_eq "bash: run's options" "$(bash_complete "pagewardenctl run --")" \
                "--fallback --help --job --name --no-fallback --property --verbose"
        missing=
        for o in $("$CTL" --help | sed -n '/^Options of run:/,/^$/s/^ *\(-., \)\{0,1\}\(--[a-z-]*\).*/\2/p'); do
                case " $(bash_complete "pagewardenctl run --") " in *" $o "*) ;; *) missing="$missing $o" ;; esac
        done
        expect_eq "bash: every option of run in --help is completed" "$missing" ""
        expect_eq "bash: status's options" "$(bash_complete "pagewardenctl status --")" \
                "--full --help --json --no-legend --no-pager --quiet"
        expect_eq "bash: top takes no --json" "$(bash_complete "pagewardenctl top --j")" ""
        expect_eq "bash: check's options" "$(bash_complete "pagewardenctl check -")" \
                "--config --help --print --quiet --ram --strict -c -h -p -q -r"
        expect_eq "bash: help has none" "$(bash_complete "pagewardenctl help -")" ""
        bad=
        for cmd in $commands; do
                for o in $(bash_complete "pagewardenctl $cmd -"); do
                        # shellcheck disable=SC2046
                        "$CTL" --socket "$NONE" "$cmd" $(with_arg "$o") --help >/dev/null 2>&1 || bad="$bad $cmd:$o"
                done
        done
        expect_eq "bash: each command takes every option completed for it (with --help after it)" "$bad" ""

        # Option arguments.
        got=$(bash_complete "pagewardenctl kill --signal ")
        expect_in " $got " " HUP " "bash: kill --signal completes signal names"
        expect_eq "bash: all that kill sends (10)" "$(wc -w <<<"$got")" 10
        bad=
        for sig in $got $(bash_complete "pagewardenctl kill --signal SIG"); do
                "$CTL" --socket "$NONE" kill --signal "$sig" x >/dev/null 2>&1
                [ $? -eq 3 ] || bad="$bad $sig"
        done
        expect_eq "bash: kill takes every signal completed, with and without SIG (exit 3: no daemon)" "$bad" ""
        expect_eq "bash: --signal US" "$(bash_complete "pagewardenctl kill --signal US")" "USR1 USR2"
        expect_eq "bash: --signal=SIGH (one word with =)" "$(bash_complete "pagewardenctl kill --signal=SIGH")" "SIGHUP"
        expect_eq "bash: -s after a display option" "$(bash_complete "pagewardenctl kill --json -s ST")" "STOP"
        "$CTL" --socket "$NONE" kill --signal SEGV x >/dev/null 2>&1
        expect_eq "kill refuses a signal it does not send (SEGV: exit 2)" "$?" 2
        got=$(bash_complete "pagewardenctl run -p ")
        expect_eq "bash: run -p completes the properties" "$got" "MemoryHigh= MemoryMax= MemorySwapMax="
        expect_eq "bash: and their names in the policy's words" "$(bash_complete "pagewardenctl run --property m")" \
                "memory.high= memory.max= memory.swap_max="
        expect_eq "bash: -vp, the argument of a cluster" "$(bash_complete "pagewardenctl run -vp MemoryS")" "MemorySwapMax="
        bad=
        for p in $got memory.high= memory.max= memory.swap_max=; do
                "$CTL" run --job x -p "${p}1M" --help >/dev/null 2>&1 || bad="$bad $p"
        done
        expect_eq "bash: run takes every property completed" "$bad" ""
        expect_eq "bash: check completes .yaml files and directories" \
                "$(bash_complete "pagewardenctl check $TMP/files/")" "$TMP/files/a.yaml $TMP/files/sub"
        expect_eq "bash: and so does --config" "$(bash_complete "pagewardenctl --config $TMP/files/")" \
                "$TMP/files/a.yaml $TMP/files/sub"
        expect_eq "bash: check's own -c too" "$(bash_complete "pagewardenctl check -p -c $TMP/files/")" \
                "$TMP/files/a.yaml $TMP/files/sub"
        expect_eq "bash: nothing to list for --ram" "$(bash_complete "pagewardenctl check --ram ")" ""
        expect_eq "bash: metrics -o: any file" "$(bash_complete "pagewardenctl metrics -o $TMP/files/")" \
                "$TMP/files/a.yaml $TMP/files/b.txt $TMP/files/sub"

        # run's COMMAND and its arguments; move's processes.
        expect_in " $(bash_complete "pagewardenctl run --job x --fallback tru") " " true " \
                "bash: run completes COMMAND from PATH"
        expect_in " $(bash_complete "pagewardenctl run --job x -- tru") " " true " "bash: after --, too"
        expect_not_in " $(bash_complete "pagewardenctl run --job x true --") " " --fallback " \
                "bash: the options after COMMAND are COMMAND's, not run's"
        sleep 30 &
        pid=$!
        expect_in " $(bash_complete "pagewardenctl move --job x --tree $pid") " " $pid " \
                "bash: move completes process IDs"
        kill $pid
        wait $pid 2>/dev/null

        # Job classes and jobs from the daemon.
        answer "$GOLDEN/status-jobs.json"
        expect_eq "bash: run --job: the daemon's job classes (--socket PATH)" \
                "$(bash_complete "pagewardenctl --socket $SOCK run --job ")" "backup batch scratch"
        expect_eq "bash: --socket=PATH, move --job b" \
                "$(bash_complete "pagewardenctl --socket=$SOCK move --job b")" "backup batch"
        expect_eq "bash: an abbreviated --sock PATH, --job=" \
                "$(bash_complete "pagewardenctl --sock $SOCK run --job=s")" "scratch"
        expect_eq "bash: \$PAGEWARDEN_SOCKET" \
                "$(PAGEWARDEN_SOCKET=$SOCK bash_complete "pagewardenctl run --job ")" "backup batch scratch"
        expect_eq "bash: the line's --socket before \$PAGEWARDEN_SOCKET" \
                "$(PAGEWARDEN_SOCKET=$NONE bash_complete "pagewardenctl --socket $SOCK run --job ")" "backup batch scratch"
        # (-c names a missing settings file: the machine's own policy, if
        # pagewarden is installed here, must not stand in for the daemon.)
        expect_eq "bash: without the line's socket, no daemon: nothing from it" \
                "$(PAGEWARDEN_SOCKET=$NONE bash_complete "pagewardenctl -c $TMP/missing.yaml run --job ")" ""
        expect_eq "bash: show: the names and IDs of the jobs" \
                "$(bash_complete "pagewardenctl --socket $SOCK show ")" "3 4 5 nightly reindex restic-daily"
        expect_eq "bash: stop n" "$(bash_complete "pagewardenctl --socket $SOCK stop n")" "nightly"
        expect_eq "bash: kill -s HUP r" "$(bash_complete "pagewardenctl --socket $SOCK kill -s HUP r")" \
                "reindex restic-daily"
        expect_eq "bash: one JOB only" "$(bash_complete "pagewardenctl --socket $SOCK stop nightly ")" ""
        expect_eq "bash: jobs are not classes" "$(bash_complete "pagewardenctl --socket $SOCK run --name ")" ""
        answer "$GOLDEN/list-all.json"
        expect_eq "bash: show: the ended jobs too" "$(bash_complete "pagewardenctl --socket $SOCK show ")" \
                "12 13 14 3 4 7 cleanup job-4 nightly pg-dump restic"
        expect_eq "bash: stop: only the running ones" "$(bash_complete "pagewardenctl --socket $SOCK stop ")" \
                "3 4 7 cleanup job-4 nightly"
        answer "$TMP/frozen.json"
        expect_eq "bash: freeze: the jobs not frozen" "$(bash_complete "pagewardenctl --socket $SOCK freeze ")" "3 nightly"
        expect_eq "bash: thaw: the frozen ones (11 has no name)" \
                "$(bash_complete "pagewardenctl --socket $SOCK thaw ")" "11 9 paused"
        answer "$GOLDEN/status-left-policy.json"
        expect_eq "bash: run --job: not the classes that left the policy" \
                "$(bash_complete "pagewardenctl --socket $SOCK run --job ")" "backup"
        answer "$GOLDEN/status-odd.json"
        expect_eq "bash: of an odd answer, only valid names" \
                "$(bash_complete "pagewardenctl --socket $SOCK run --job ")" "x"

        # No daemon: the policy files, quickly.
        expect_eq "bash: no daemon: the job classes of the policy files (-c FILE)" \
                "$(bash_complete "pagewardenctl --socket $NONE -c $TMP/conf/pagewarden.yaml run --job ")" \
                "bulk-copy nightly-dump"
        expect_quick 2000 "bash: in under 2 s"
        expect_eq "bash: --config=FILE, and the classes as the policy files name them" \
                "$(bash_complete "pagewardenctl --socket=$NONE --config=$TMP/conf/pagewarden.yaml move --job nig")" \
                "nightly-dump"
        expect_eq "bash: -lcFILE" \
                "$(bash_complete "pagewardenctl --socket $NONE -lc$TMP/conf/pagewarden.yaml run --job ")" \
                "bulk-copy nightly-dump"
        expect_eq "bash: no daemon: no jobs, and quickly" \
                "$(bash_complete "pagewardenctl --socket $NONE show ")" ""
        expect_quick 2000 "bash: in under 2 s"
        # A daemon that does not answer: given up on after 2 s, for the policy files.
        answer "$GOLDEN/status-jobs.json"
        kill -STOP "$FAKE_PID"
        expect_eq "bash: a daemon that does not answer: the policy files'" \
                "$(bash_complete "pagewardenctl --socket $SOCK -c $TMP/conf/pagewarden.yaml run --job ")" \
                "bulk-copy nightly-dump"
        expect_quick 3000 "bash: in under 3 s"
        kill -CONT "$FAKE_PID"
fi

# ---- zsh ---------------------------------------------------------------------

# zsh -f zsh-complete.zsh WORK-DIR LINE...: types each LINE and a TAB into an
# interactive zsh (zsh/zpty) with compinit and packaging/completion in its
# fpath, and prints for each "BUFFER:" the line after the TAB, "MATCH:" each
# candidate offered, "DESCRIPTION:" each line describing them, then "END".
# What both pty drivers below share: a shell in zsh's pty named $pty, read
# until idle, and a wait for a file that shell writes.
cat >"$TMP/zpty-lib.zsh" <<'EOF'
zmodload zsh/zpty || exit 2
drain() { local junk; while zpty -r -t $pty junk; do :; done }
wait_for() { # wait_for FILE: at most 10 s
        local n
        for n in {1..200}; do
                [[ -e $1 ]] && return 0
                drain
                sleep 0.05
        done
        return 1
}
EOF

cat >"$TMP/zsh-complete.zsh" <<'EOF'
pty=pw
source $TMP/zpty-lib.zsh
work=$1
shift
cat >$work/setup.zsh <<SETUP
PS1='' RPS1='' PROMPT_EOL_MARK=''
LISTMAX=100000
unsetopt beep
bindkey -e
fpath=(${(q)COMPDIR} \$fpath)
autoload -Uz compinit
compinit -u -D
zstyle ':completion:*' list-prompt ''
# Each candidate added (the builtin matches them) and its description, to files.
compadd() {
        local a
        for a; do
                [[ \$a == -- ]] && break
                [[ \$a == -[OAD]* ]] && { builtin compadd "\$@"; return; }
        done
        builtin compadd "\$@"
        local r=\$? i
        i=\${@[(i)-d]}
        (( i < \$# )) && [[ \${@[i+1]} != \\(* ]] && print -rl -- "\${(@P)\${@[i+1]}}" >>${(q)work}/descriptions
        local -a pw_m
        builtin compadd -O pw_m "\$@"
        (( \$#pw_m )) && print -rl -- \$pw_m >>${(q)work}/matches
        return r
}
# ^T: the line as it is, to a file.
pw-dump() { print -r -- "\$BUFFER" >${(q)work}/buffer.tmp && mv ${(q)work}/buffer.tmp ${(q)work}/buffer }
zle -N pw-dump
bindkey '^T' pw-dump
print ready >${(q)work}/ready
SETUP
zpty -b pw zsh -f -i || exit 2
zpty -w pw "source ${(q)work}/setup.zsh"
wait_for $work/ready || { print -u2 "zsh did not start"; exit 2 }
for line; do
        rm -f $work/matches $work/descriptions $work/buffer
        zpty -n -w pw "$line"$'\t\x14'
        wait_for $work/buffer || { print -u2 "no answer to: $line"; exit 2 }
        print -r -- "BUFFER:$(<$work/buffer)"
        [[ -e $work/matches ]] && sort -u $work/matches | sed 's/^/MATCH:/'
        [[ -e $work/descriptions ]] && sed 's/^/DESCRIPTION:/' $work/descriptions
        print END
        zpty -n -w pw $'\x15'
done
zpty -d pw
EOF
# zsh_complete LINE...: all the lines typed into one zsh, its output in $ZOUT.
zsh_complete() {
        mkdir -p "$TMP/zsh"
        ZOUT=$(timeout 60 zsh -f "$TMP/zsh-complete.zsh" "$TMP/zsh" "$@" 2>"$TMP/zsh.err")
        ZSTATUS=$?
}
zsh_case() { # zsh_case N KIND: the BUFFER, MATCH or DESCRIPTION lines of the Nth line typed
        awk -v n="$1" -v kind="$2:" '
                $0 == "END" { i++; next }
                i == n - 1 && index($0, kind) == 1 { print substr($0, length(kind) + 1) }' <<<"$ZOUT"
}
zsh_matches() { zsh_case "$1" MATCH | words; }

if need "$(zsh -fc 'zmodload zsh/zpty' 2>/dev/null; echo $?)" "zsh completion: zsh and its zsh/zpty module are installed"; then
        answer "$GOLDEN/status-jobs.json"
        zsh_complete "pagewardenctl st" \
                "pagewardenctl sta" \
                "pagewardenctl -" \
                "pagewardenctl status --" \
                "pagewardenctl --socket $SOCK run --job " \
                "pagewardenctl --socket=$SOCK show n" \
                "pagewardenctl --socket $SOCK -l stop " \
                "pagewardenctl --socket $NONE -c $TMP/conf/pagewarden.yaml run --job " \
                "pagewardenctl --socket $NONE --config=$TMP/conf/pagewarden.yaml move --job b" \
                "pagewardenctl kill --signal SIGUS" \
                "pagewardenctl run -p Mem" \
                "pagewardenctl check $TMP/files/" \
                "pagewardenctl run --job x --fallback tru" \
                "pagewardenctl top --j" \
                "pagewardenctl --socket $SOCK thaw " \
                "pagewardenctl "
        expect_eq "zsh: the completion ran (exit $ZSTATUS: $(cat "$TMP/zsh.err"))" "$ZSTATUS" 0
        expect_eq "zsh: st<TAB>: status and stop" "$(zsh_matches 1)" "status stop"
        expect_in "$(zsh_case 1 DESCRIPTION)" "status  -- show job classes, jobs, protected applications" \
                "zsh: with a description of each command"
        expect_eq "zsh: sta<TAB> completes the line to status" "$(zsh_case 2 BUFFER)" "pagewardenctl status "
        expect_eq "zsh: the global options" "$(zsh_matches 3)" \
                "--config --full --help --json --no-legend --no-pager --socket --version -V -c -h -l"
        expect_eq "zsh: status's options" "$(zsh_matches 4)" "--full --help --json --no-legend --no-pager --quiet"
        expect_eq "zsh: run --job: the daemon's job classes" "$(zsh_matches 5)" "backup batch scratch"
        expect_in "$(zsh_case 5 DESCRIPTION)" "backup   -- job class, 2 jobs" "zsh: described with their jobs"
        expect_eq "zsh: show n<TAB> completes the line to the job nightly (--socket=PATH)" "$(zsh_case 6 BUFFER)" \
                "pagewardenctl --socket=$SOCK show nightly "
        expect_eq "zsh: stop: the jobs" "$(zsh_matches 7)" "3 4 5 nightly reindex restic-daily"
        expect_eq "zsh: no daemon: the job classes of the policy files (-c FILE)" "$(zsh_matches 8)" \
                "bulk-copy nightly-dump"
        expect_eq "zsh: --config=FILE" "$(zsh_matches 9)" "bulk-copy"
        expect_eq "zsh: kill --signal SIGUS" "$(zsh_matches 10)" "USR1 USR2"
        expect_eq "zsh: run -p Mem" "$(zsh_matches 11)" "MemoryHigh MemoryMax MemorySwapMax"
        expect_eq "zsh: check completes .yaml files and directories" "$(zsh_matches 12)" "a.yaml sub"
        expect_in " $(zsh_matches 13) " " true " "zsh: run completes COMMAND"
        expect_eq "zsh: top takes no --json" "$(zsh_matches 14)" ""
        expect_eq "zsh: thaw: no job is frozen" "$(zsh_matches 15)" ""
        expect_eq "zsh: the commands, as bash's" "$(zsh_matches 16)" \
                "check freeze help kill list metrics move reload run show status stop suggest thaw top version"
        answer "$TMP/frozen.json"
        zsh_complete "pagewardenctl --socket $SOCK thaw " "pagewardenctl --socket $SOCK freeze "
        expect_eq "zsh: thaw: the frozen jobs" "$(zsh_matches 1)" "11 9 paused"
        expect_eq "zsh: freeze: the others" "$(zsh_matches 2)" "3 nightly"
fi

# The same lines typed into bash's readline (an interactive bash in zsh's
# pty): what COMPREPLY cannot show, as "=" with no space after it.
cat >"$TMP/bash-readline.zsh" <<'EOF'
pty=rl
source $TMP/zpty-lib.zsh
work=$1
shift
cat >$work/setup.bash <<SETUP
unset HISTFILE
. ${(q)BASH_COMPLETION}
. ${(q)COMPDIR}/pagewardenctl.bash
bind 'set bell-style none'
pw_dump() { printf '%s\n' "\$READLINE_LINE" >${(q)work}/line.tmp && mv ${(q)work}/line.tmp ${(q)work}/line; }
bind -x '"\C-t": pw_dump'
echo ready >${(q)work}/ready
SETUP
zpty -b rl bash --norc --noprofile -i || exit 2
zpty -w rl "source ${(q)work}/setup.bash"
wait_for $work/ready || { print -u2 "bash did not start"; exit 2 }
for line; do
        rm -f $work/line
        zpty -n -w rl "$line"$'\t\x14'
        wait_for $work/line || { print -u2 "no answer to: $line"; exit 2 }
        print -r -- "[$(<$work/line)]"
        zpty -n -w rl $'\x15'
done
zpty -d rl
EOF
if [ -r "$BASH_COMPLETION" ] && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
        mkdir -p "$TMP/readline"
        out=$(INPUTRC=/dev/null timeout 60 zsh -f "$TMP/bash-readline.zsh" "$TMP/readline" "pagewardenctl sta" \
                "pagewardenctl kill --signal=SIGH" "pagewardenctl run -p MemoryH" "pagewardenctl check $TMP/fil" \
                2>"$TMP/readline.err")
        expect_eq "bash's readline: the lines completed (exit $?: $(cat "$TMP/readline.err"))" "$out" \
                "$(printf '%s\n' "[pagewardenctl status ]" "[pagewardenctl kill --signal=SIGHUP ]" \
                        "[pagewardenctl run -p MemoryHigh=]" "[pagewardenctl check $TMP/files/]")"
fi

# The two read the daemon's answers with the same awk program.
diff <(sed -n '/^_pagewardenctl_parse() {/,/^}/p' "$COMPDIR/pagewardenctl.bash") \
        <(sed -n '/^_pagewardenctl_parse() {/,/^}/p' "$COMPDIR/_pagewardenctl") >"$TMP/parse.diff"
s=$?
grep -q '^_pagewardenctl_parse() {' "$COMPDIR/_pagewardenctl" || s=1
ok $s "bash and zsh parse the daemon's answers with the same program"
[ -s "$TMP/parse.diff" ] && sed 's/^/# /' "$TMP/parse.diff"

done_testing
