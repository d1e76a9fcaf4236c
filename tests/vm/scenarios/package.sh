#!/bin/sh
# shellcheck disable=SC2016  # single-quoted code for sh -c
# package.sh: the Debian package on a systemd machine (vm-test passes the
# .deb that `make deb` built as /root/pagewarden_VERSION_ARCH.deb).
# apt-get install enables and starts the service with the shipped
# configuration; a job runs in its class and the journal has its fields;
# the operator's edit of a conffile survives a reinstall; remove stops the
# service and gives a protected unit its own values back; purge leaves
# nothing of pagewarden's: no unit, no cgroup, no runtime property, no file.
. /lib.sh

deb=$(ls /root/pagewarden_*.deb 2>/dev/null | head -n 1)
check "the package to install is there ($deb)" test -f "$deb"
check "pagewarden is not installed before" sh -c '! systemctl cat pagewarden.service >/dev/null 2>&1'
timeout 120 systemctl is-system-running --wait >/dev/null 2>&1

# --- install ----------------------------------------------------------------

# The guest has no network: apt resolves the dependencies from what is
# installed (or dpkg -i, which the issue allows as well).
if out=$(timeout 300 apt-get install -y "$deb" 2>&1); then
	ok "apt-get install $deb"
elif out2=$(timeout 300 dpkg -i "$deb" 2>&1); then
	ok "dpkg -i ${deb#/root/} (apt-get could not: $(echo "$out" | tail -n 1))"
else
	not_ok "neither apt-get install nor dpkg -i installs it"
	echo "$out" "$out2" | tail -n 20 | while read -r line; do diag "$line"; done
fi
expect_eq "dpkg says it is installed" "$(dpkg-query -W -f='${Status}' pagewarden 2>&1)" "install ok installed"
dpkg-query -L pagewarden | while read -r f; do [ -d "$f" ] || diag "file: $f"; done
expect_eq "pagewarden.service is enabled" "$(systemctl is-enabled pagewarden.service 2>&1)" enabled
expect_eq "pagewarden.socket is enabled" "$(systemctl is-enabled pagewarden.socket 2>&1)" enabled
i=0
while [ $i -lt 150 ] && ! pw_answers 2>/dev/null; do sleep 0.2; i=$((i + 1)); done
expect_eq "pagewarden.service is active" "$(systemctl is-active pagewarden.service 2>&1)" active
# Issue 30: the socket was started after its service and refused ("Socket service pagewarden.service already
# active, refusing"), and the install printed "Could not execute systemctl".
expect_eq "pagewarden.socket is active (listening)" "$(systemctl is-active pagewarden.socket 2>&1)" active
bad_lines() { echo "$1" | grep -E 'Could not execute|[Ff]ailed|refusing|[Ee]rror' | head -n 5; }
expect_eq "the install printed no error" "$(bad_lines "$out${out2:+ $out2}")" ""
expect_eq "the metrics timer is shipped disabled" "$(systemctl is-enabled pagewarden-metrics.timer 2>&1)" disabled
conffiles=$(dpkg-query -W -f='${Conffiles}' pagewarden | awk '{ print $1 }' | sort | tr '\n' ' ')
expect_eq "the configuration files are conffiles" "$conffiles" \
	"/etc/pagewarden/pagewarden.yaml /etc/pagewarden/policies.d/jobs.yaml "
check "it runs with the shipped configuration" sh -c 'pagewardenctl status --json | jq -e ".classes | map(.name) | sort == [\"backup\", \"copy\"]" >/dev/null'
check "the bash completion is installed" test -f /usr/share/bash-completion/completions/pagewardenctl
check "the zsh completion is installed" test -f /usr/share/zsh/vendor-completions/_pagewardenctl
check "the manual pages are installed" test -f /usr/share/man/man8/pagewardenctl.8.gz
metrics=$(pagewardenctl metrics 2>&1)
expect_eq "pagewardenctl metrics: the daemon is up" "$(echo "$metrics" | awk '$1 == "pagewarden_up" { print $2 }')" 1
expect_eq "and has the shipped classes" \
	"$(echo "$metrics" | sed -n 's/^pagewarden_class_jobs{class="\([a-z]*\)"} 0$/\1/p' | tr '\n' ' ')" "backup copy "
# The shipped metrics unit, as node_exporter's textfile collector would have it.
mkdir -p /var/lib/prometheus/node-exporter
check "pagewarden-metrics.service runs" systemctl start pagewarden-metrics.service
check "and writes pagewarden.prom for node_exporter" \
	grep -qx 'pagewarden_up 1' /var/lib/prometheus/node-exporter/pagewarden.prom
rm -rf /var/lib/prometheus

# --- a job, and the journal's fields ----------------------------------------------

where=$(pagewardenctl run --job backup --name nightly -- sh -c 'sed -n "s/^0:://p" /proc/self/cgroup' 2>&1)
case $where in
/pagewarden.slice/pagewarden-backup.slice/*) ok "a job runs in its class's slice ($where)" ;;
*) not_ok "the job ran in '$where', want below /pagewarden.slice/pagewarden-backup.slice" ;;
esac
i=0
while [ $i -lt 50 ] && [ -z "$(journalctl -q -u pagewarden PAGEWARDEN_JOB=nightly PAGEWARDEN_ACTION=end -o cat 2>/dev/null)" ]; do
	sleep 0.2
	i=$((i + 1))
done
started=$(journalctl -q -u pagewarden PAGEWARDEN_CLASS=backup PAGEWARDEN_ACTION=start -o cat 2>&1)
diag "journalctl -u pagewarden PAGEWARDEN_CLASS=backup PAGEWARDEN_ACTION=start: $started"
case $started in
*"(nightly) of class backup started"*) ok "journalctl PAGEWARDEN_CLASS=backup finds the job's start" ;;
*) not_ok "journalctl PAGEWARDEN_CLASS=backup PAGEWARDEN_ACTION=start: '$started'" ;;
esac
ended=$(journalctl -q -u pagewarden PAGEWARDEN_JOB=nightly PAGEWARDEN_ACTION=end -o cat 2>&1)
case $ended in
*"(nightly) of class backup"*) ok "journalctl PAGEWARDEN_JOB=nightly finds its end" ;;
*) not_ok "journalctl PAGEWARDEN_JOB=nightly PAGEWARDEN_ACTION=end: '$ended'" ;;
esac
expect_eq "no other class's line has PAGEWARDEN_CLASS=backup" \
	"$(journalctl -q -u pagewarden PAGEWARDEN_CLASS=backup -o cat | grep -c 'of class copy')" 0
prio=$(journalctl -q -u pagewarden PAGEWARDEN_ACTION=start -o json | head -n 1 | jq -r .PRIORITY)
expect_eq "a job's start is logged at priority info" "$prio" 6

# --- an operator's edit, and a protected unit ---------------------------------

printf '# edited by the operator\n' >>/etc/pagewarden/pagewarden.yaml
systemd-run --unit=pw-app.service sleep 100000 >/dev/null 2>&1
cat >/etc/pagewarden/policies.d/app.yaml <<'YAML'
protect:
  app:
    unit: pw-app.service
    memory: {min: 64M}
YAML
check "systemctl reload pagewarden" systemctl reload pagewarden.service
i=0
while [ $i -lt 50 ] && [ "$(systemctl show -P MemoryMin pw-app.service)" != 67108864 ]; do sleep 0.2; i=$((i + 1)); done
expect_eq "the protected unit has MemoryMin=64M" "$(systemctl show -P MemoryMin pw-app.service)" 67108864
check "a reinstall of the package" sh -c "dpkg -i '$deb' >/tmp/reinstall.log 2>&1"
check "keeps the operator's edited conffile" grep -q '^# edited by the operator' /etc/pagewarden/pagewarden.yaml
i=0
while [ $i -lt 100 ] && ! pw_answers; do sleep 0.2; i=$((i + 1)); done
check "and the service answers after it" pw_answers
expect_eq "the reinstall printed no error" "$(bad_lines "$(cat /tmp/reinstall.log)")" ""
expect_eq "and its socket is still active" "$(systemctl is-active pagewarden.socket 2>&1)" active

# --- remove, then purge ------------------------------------------------------------

check "apt-get remove pagewarden" sh -c 'apt-get remove -y pagewarden >/tmp/remove.log 2>&1'
expect_eq "the service is stopped" "$(systemctl is-active pagewarden.service 2>&1)" inactive
check "the programs are gone" sh -c '! test -e /usr/sbin/pagewardend && ! test -e /usr/bin/pagewardenctl'
check "the unit files are gone" sh -c '! ls /lib/systemd/system/pagewarden* /usr/lib/systemd/system/pagewarden* 2>/dev/null | grep -q .'
expect_eq "the protected unit has its own MemoryMin back" "$(systemctl show -P MemoryMin pw-app.service)" 0
check "the conffiles stay until purge" test -f /etc/pagewarden/pagewarden.yaml
systemctl stop pw-app.service
rm -f /etc/pagewarden/policies.d/app.yaml # the operator's own file
check "apt-get purge pagewarden" sh -c 'apt-get purge -y pagewarden >/tmp/purge.log 2>&1'
expect_eq "dpkg no longer knows it" "$(dpkg-query -W -f='${Status}' pagewarden 2>/dev/null)" ""
systemctl daemon-reload
expect_eq "no pagewarden unit is loaded" "$(systemctl list-units --all --no-legend --plain 'pagewarden*' | wc -l)" 0
check "no pagewarden cgroup is left" sh -c '! find /sys/fs/cgroup -name "pagewarden*" | grep -q .'
left=$(find /etc /var /run /usr /lib -xdev -name '*pagewarden*' 2>/dev/null; find /run -name '*pagewarden*' 2>/dev/null)
expect_eq "no file of pagewarden's is left (units, drop-ins, runtime properties, state, configuration)" "$left" ""
[ -z "$left" ] || echo "$left" | while read -r line; do diag "left: $line"; done

done_testing
