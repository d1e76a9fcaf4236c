# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for pagewardenctl(8), for bash-completion (installed as
# pagewardenctl in its completionsdir).
#
# Commands, their options and the arguments that can be listed: job classes
# and jobs as the running daemon reports them (status --json, list --json),
# else the job classes of the policy (check --print), signal names, run's
# properties, files.  The daemon is asked through the --socket of the line
# being completed, or $PAGEWARDEN_SOCKET, for at most 2 seconds; the JSON is
# read with awk, without jq.

# The candidates in a response of the daemon (one line of JSON on stdin), one
# "CANDIDATE:DESCRIPTION" a line, for MODE (-v mode=):
#   classes   the names of .classes[] still in the policy
#   show      names and IDs of .jobs[] and .ended[]
#   jobs      names and IDs of .jobs[]
#   frozen    of those, the jobs frozen (state "frozen")
#   unfrozen  the jobs not frozen
# Only names that pagewardenctl accepts are printed, so that nothing odd in an
# answer reaches the command line.  Kept identical in _pagewardenctl (zsh).
_pagewardenctl_parse() {
        awk -v mode="$1" '
        function value(v, isstr) {
                if (d == 3 && arr != "" && t[3] == "{") {
                        f[k[3]] = v
                        fs[k[3]] = isstr
                }
        }
        function name_ok(key) {
                return fs[key] && length(f[key]) <= 64 && f[key] ~ /^[A-Za-z0-9][A-Za-z0-9_-]*$/
        }
        function out(cand, desc) {
                if (!(cand in seen)) {
                        seen[cand] = 1
                        print cand ":" desc
                }
        }
        function flush(   id, cls, what) {
                if (arr == "classes") {
                        if (f["in_policy"] != "false" && name_ok("name"))
                                out(f["name"], "job class" (f["jobs"] ~ /^[0-9]+$/ ? \
                                    ", " f["jobs"] (f["jobs"] == 1 ? " job" : " jobs") : ""))
                        return
                }
                if (mode == "frozen" && f["state"] != "frozen")
                        return
                if (mode == "unfrozen" && f["state"] == "frozen")
                        return
                id = (!fs["id"] && f["id"] ~ /^[0-9]+$/) ? f["id"] : ""
                cls = name_ok("class") ? ", class " f["class"] : ""
                what = arr == "ended" ? "ended job" : "job"
                if (name_ok("name") && f["name"] !~ /^[0-9]+$/)
                        out(f["name"], what (id != "" ? " " id : "") cls)
                if (id != "")
                        out(id, what (name_ok("name") ? " " f["name"] : "") cls)
        }
        BEGIN {
                if (mode == "classes")
                        want["classes"] = 1
                else
                        want["jobs"] = 1
                if (mode == "show")
                        want["ended"] = 1
                ws = " \t\r\n"
        }
        { s = s $0 "\n" }
        END {
                n = length(s)
                for (i = 1; i <= n; i++) {
                        c = substr(s, i, 1)
                        if (c == "{" || c == "[") {
                                d++
                                t[d] = c
                                k[d] = ""
                                if (d == 3 && c == "{" && t[2] == "[" && t[1] == "{" && (k[1] in want)) {
                                        arr = k[1]
                                        split("", f)
                                        split("", fs)
                                }
                        } else if (c == "}" || c == "]") {
                                if (d == 3 && c == "}" && arr != "") {
                                        flush()
                                        arr = ""
                                }
                                d--
                        } else if (c == "\"") {
                                for (j = i + 1; j <= n; j++) {
                                        e = substr(s, j, 1)
                                        if (e == "\\")
                                                j++
                                        else if (e == "\"")
                                                break
                                }
                                v = substr(s, i + 1, j - i - 1)
                                i = j
                                for (j = i + 1; j <= n && index(ws, substr(s, j, 1)); j++)
                                        ;
                                if (j <= n && substr(s, j, 1) == ":" && t[d] == "{") {
                                        k[d] = v
                                        i = j
                                } else
                                        value(v, 1)
                        } else if (!index(ws ",:", c)) {
                                for (j = i; j <= n && !index(ws ",:{}[]\"", substr(s, j, 1)); j++)
                                        ;
                                value(substr(s, i, j - i), 0)
                                i = j - 1
                        }
                }
        }'
}

# _pagewardenctl_ctl ARGS...: runs the pagewardenctl being completed (the one
# on the line if it is given as a path) with ARGS, for at most 2 seconds, with
# no input and no error messages.
_pagewardenctl_ctl() {
        local ctl=pagewardenctl
        if [[ $_pwc_cmd == */* && -x ${_pwc_cmd/#\~\//$HOME/} ]]; then
                ctl=${_pwc_cmd/#\~\//$HOME/}
        fi
        if type -P timeout >/dev/null; then
                timeout 2 "$ctl" "$@" </dev/null 2>/dev/null
        else
                "$ctl" "$@" </dev/null 2>/dev/null
        fi
}

# The daemon's answer to COMMAND... --json, through the line's --socket.
_pagewardenctl_ask() {
        if [[ -n $_pwc_socket ]]; then
                _pagewardenctl_ctl --socket "$_pwc_socket" "$@" --json
        else
                _pagewardenctl_ctl "$@" --json
        fi
}

# The job classes: the daemon's, else those of the policy files (the settings
# file of the line's --config, else the default one, and its policy_dir).
_pagewardenctl_classes() {
        local json rc
        json=$(_pagewardenctl_ask status)
        rc=$?
        # 4: the daemon answered, and something is not in force.
        if [[ $rc == 0 || $rc == 4 ]]; then
                _pagewardenctl_parse classes <<<"$json"
                return
        fi
        if [[ -n $_pwc_config ]]; then
                _pagewardenctl_ctl --config "$_pwc_config" check --print
        else
                _pagewardenctl_ctl check --print
        fi | awk '
                /^jobs:/ { j = 1; next }
                /^[^ #]/ { j = 0 }
                j && /^  [A-Za-z0-9][A-Za-z0-9_-]*:/ {
                        sub(/^  /, "")
                        sub(/:.*/, "")
                        print $0 ":job class (policy files)"
                }'
}

# The jobs for MODE (see _pagewardenctl_parse).
_pagewardenctl_jobs() {
        if [[ $1 == show ]]; then
                _pagewardenctl_ask list --all
        else
                _pagewardenctl_ask list
        fi | _pagewardenctl_parse "$1"
}

# _pagewardenctl_words CANDIDATES: COMPREPLY from "CANDIDATE:DESCRIPTION" lines.
_pagewardenctl_words() {
        local line list=''
        while IFS= read -r line; do
                list+=" ${line%%:*}"
        done <<<"$1"
        mapfile -t COMPREPLY < <(compgen -W "$list" -- "$cur")
}

# _pagewardenctl_long WORD OPTION...: prints the long OPTION that WORD names,
# in full or abbreviated as getopt_long takes it; fails if none or ambiguous.
_pagewardenctl_long() {
        local w=${1%%=*} o found=''
        shift
        [[ $w == --?* ]] || return 1
        for o; do
                [[ $o == "$w" ]] && { echo "$o"; return 0; }
                if [[ $o == "$w"* ]]; then
                        [[ -n $found ]] && return 1
                        found=$o
                fi
        done
        [[ -n $found ]] && echo "$found"
}

_pagewardenctl() {
        local cur prev words cword split
        _init_completion -s || return

        local -r display="--json --no-pager --no-legend -l --full"
        local -r global="--socket $display -c --config -h --help -V --version"
        local -r global_long="--socket --json --no-pager --no-legend --full --config --help --version"
        local -r commands="run move status list top show stop kill freeze thaw metrics suggest reload check version help"
        local -r signals="HUP INT QUIT KILL USR1 USR2 TERM CONT STOP TSTP"
        local _pwc_cmd=${words[0]} _pwc_socket='' _pwc_config=''
        local cmd='' opts='' long='' short_arg='' long_arg='' arg_of='' i w o n_operands=0

        # The global options, up to the command: the socket, the settings
        # file, and the option whose argument the word being completed is.
        for ((i = 1; i < cword; i++)); do
                w=${words[i]}
                if [[ $w != -* ]]; then
                        cmd=$w
                        break
                fi
                # shellcheck disable=SC2086
                o=$(_pagewardenctl_long "$w" $global_long)
                case $o,$w in
                --socket,*=*) _pwc_socket=${w#*=} ;;
                --config,*=*) _pwc_config=${w#*=} ;;
                --socket,* | --config,*) arg_of=$o ;;
                ,-c | ,-[!-]*c) arg_of=--config ;;
                ,-c?* | ,-[!-]*c?*) _pwc_config=${w#*c} ;;
                esac
                if [[ -n $arg_of ]]; then
                        ((i++))
                        [[ $i == "$cword" ]] && break
                        [[ $arg_of == --socket ]] && _pwc_socket=${words[i]} || _pwc_config=${words[i]}
                        arg_of=
                fi
        done
        _pwc_socket=${_pwc_socket/#\~\//$HOME/}
        _pwc_config=${_pwc_config/#\~\//$HOME/}

        if [[ -z $cmd ]]; then
                # shellcheck disable=SC2086
                [[ $split == true ]] && arg_of=$(_pagewardenctl_long "$prev" $global_long)
                case $arg_of in
                --socket) _filedir ;;
                --config) _filedir yaml ;;
                *)
                        if [[ $cur == -* ]]; then
                                mapfile -t COMPREPLY < <(compgen -W "$global" -- "$cur")
                        else
                                mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
                        fi ;;
                esac
                return
        fi

        # The command's options: all of them, then those that take an argument.
        case $cmd in
        run)
                opts="--job --name -p --property --fallback --no-fallback -v --verbose -h --help"
                short_arg=p long_arg="--job --name --property" ;;
        move)
                opts="--job --name --tree $display -h --help"
                long_arg="--job --name" ;;
        status) opts="-q --quiet $display -h --help" ;;
        list) opts="-a --all $display -h --help" ;;
        top)
                opts="-d --delay -n --iterations --no-pager --no-legend -l --full -h --help"
                short_arg=dn long_arg="--delay --iterations" ;;
        show | stop | freeze | thaw | reload | version) opts="$display -h --help" ;;
        kill)
                opts="-s --signal $display -h --help"
                short_arg=s long_arg="--signal" ;;
        metrics)
                opts="-o --output -h --help"
                short_arg=o long_arg="--output" ;;
        suggest) opts="--policy $display -h --help" ;;
        check)
                opts="-p --print -r --ram -c --config -q --quiet --strict -h --help"
                short_arg=rc long_arg="--ram --config" ;;
        *) return ;;
        esac
        for o in $opts; do
                [[ $o == --* ]] && long+=" $o"
        done

        # The words between the command and the one being completed: the
        # option whose argument this is, if any, and the operands.
        for ((i++; i < cword; i++)); do
                w=${words[i]}
                case $w in
                --)
                        if [[ $cmd == run ]]; then
                                # COMMAND follows.
                                _command_offset $((i + 1))
                                return
                        fi
                        # Only operands follow.
                        n_operands=$((n_operands + cword - i - 1))
                        arg_of=--
                        break ;;
                --*)
                        # shellcheck disable=SC2086
                        o=$(_pagewardenctl_long "$w" $long)
                        [[ $w != *=* && " $long_arg " == *" $o "* ]] && arg_of=$o ;;
                -?*)
                        # A cluster of short options: the first that takes an
                        # argument takes the rest, or else the next word.
                        w=${w#-}
                        while [[ -n $w ]]; do
                                if [[ $short_arg == *"${w:0:1}"* ]]; then
                                        [[ ${#w} == 1 ]] && arg_of=-$w
                                        break
                                fi
                                w=${w:1}
                        done ;;
                *)
                        if [[ $cmd == run ]]; then
                                # COMMAND: complete it and its own arguments.
                                _command_offset "$i"
                                return
                        fi
                        n_operands=$((n_operands + 1)) ;;
                esac
                if [[ -n $arg_of ]]; then
                        ((i++))
                        [[ $i == "$cword" ]] && break
                        [[ $arg_of == -c || $arg_of == --config ]] && _pwc_config=${words[i]}
                        arg_of=
                fi
        done
        # shellcheck disable=SC2086
        [[ $split == true ]] && arg_of=$(_pagewardenctl_long "$prev" $long)

        case $arg_of in
        --job)
                _pagewardenctl_words "$(_pagewardenctl_classes)"
                return ;;
        --name | -d | --delay | -n | --iterations | -r | --ram)
                # A new name, seconds, a count, a size: nothing to list.
                return ;;
        -p | --property)
                case $cur in
                *=*) ;;
                m*) mapfile -t COMPREPLY < <(compgen -W "memory.high= memory.max= memory.swap_max=" -- "$cur") ;;
                *) mapfile -t COMPREPLY < <(compgen -W "MemoryHigh= MemoryMax= MemorySwapMax=" -- "$cur") ;;
                esac
                compopt -o nospace
                return ;;
        -s | --signal)
                if [[ $cur == SI* ]]; then
                        # shellcheck disable=SC2086
                        mapfile -t COMPREPLY < <(compgen -W "$(printf 'SIG%s ' $signals)" -- "$cur")
                else
                        mapfile -t COMPREPLY < <(compgen -W "$signals" -- "$cur")
                fi
                return ;;
        -c | --config)
                _filedir yaml
                return ;;
        -o | --output)
                _filedir
                return ;;
        --) ;;
        *)
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
                        return
                fi ;;
        esac

        case $cmd in
        run) _command_offset "$cword" ;; # the first operand is COMMAND
        move) _pids ;;
        show) ((n_operands == 0)) && _pagewardenctl_words "$(_pagewardenctl_jobs show)" ;;
        stop | kill) ((n_operands == 0)) && _pagewardenctl_words "$(_pagewardenctl_jobs jobs)" ;;
        freeze) ((n_operands == 0)) && _pagewardenctl_words "$(_pagewardenctl_jobs unfrozen)" ;;
        thaw) ((n_operands == 0)) && _pagewardenctl_words "$(_pagewardenctl_jobs frozen)" ;;
        check) _filedir yaml ;;
        esac
} &&
        complete -F _pagewardenctl pagewardenctl
