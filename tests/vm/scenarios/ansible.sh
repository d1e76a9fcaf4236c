#!/bin/sh
# shellcheck disable=SC2016  # single-quoted code for sh -c
# ansible.sh: the Ansible role of packaging/ansible on a systemd machine,
# run by ansible-playbook on the guest itself (-i localhost, -c local).
# vm-test passes the role as /root/ansible and the .deb that `make deb`
# built as /root/pagewarden_VERSION_ARCH.deb; the root tree has
# ansible-core and python3-apt (vm-run --package).
# The first run installs the .deb and starts the daemon with the files of
# the variables; a second run changes nothing; a changed variable changes
# its file and the daemon reloads; an invalid policy fails the run at
# validation and leaves the previous file and the running daemon as they
# were.
. /lib.sh

deb=$(ls /root/pagewarden_*.deb 2>/dev/null | head -n 1)
check "the package to install is there ($deb)" test -f "$deb"
check "the role is there" test -f /root/ansible/roles/pagewarden/tasks/main.yml
check "ansible-playbook is installed" sh -c 'command -v ansible-playbook >/dev/null'
timeout 120 systemctl is-system-running --wait >/dev/null 2>&1

export HOME=/root LC_ALL=C.UTF-8 ANSIBLE_ROLES_PATH=/root/ansible/roles ANSIBLE_NOCOLOR=1 \
	ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_LOCALHOST_WARNING=0 \
	ANSIBLE_PIPELINING=1
cat >/root/site.yml <<'YAML'
- name: pagewarden on this machine
  hosts: all
  gather_facts: false
  roles:
    - pagewarden
YAML
check "the example playbook's syntax" sh -c 'cd /root/ansible && ansible-playbook -i localhost, --syntax-check playbook.yml >/tmp/syntax.log 2>&1'

# play N VARS-FILE: ansible-playbook with these variables; its output in
# /tmp/play-N.log, its exit status in $rc, the recap's changed= in $changed.
play() {
	_t0=$(uptime_ms)
	ansible-playbook -i localhost, -c local -e "@$2" /root/site.yml >"/tmp/play-$1.log" 2>&1
	rc=$?
	changed=$(sed -n 's/^localhost *: ok=[0-9]* *changed=\([0-9]*\) .*/\1/p' "/tmp/play-$1.log")
	diag "run $1: exit $rc, changed=$changed, $(($(uptime_ms) - _t0)) ms"
}
show_log() { tail -n "${2:-25}" "/tmp/play-$1.log" | while IFS= read -r line; do diag "$line"; done; }
classes() { pagewardenctl status --json 2>/dev/null | jq -r '[.classes[] | select(.in_policy) | .name] | sort | join(" ")'; }
# wait_classes WANT: until status shows these classes (a reload is a SIGHUP:
# systemctl reload returns before the daemon has read the files).
wait_classes() {
	_i=0
	while [ $_i -lt 100 ] && [ "$(classes)" != "$1" ]; do
		sleep 0.2
		_i=$((_i + 1))
	done
}
mainpid() { systemctl show -P MainPID pagewarden.service; }
P=/etc/pagewarden/policies.d

# A protected application, and the role's variables: a job class as a
# mapping, a protected application as a file's text.
systemd-run --unit=pw-app.service sleep 100000 >/dev/null 2>&1
cat >/root/vars-1.yml <<YAML
pagewarden_package_file: $deb
pagewarden_settings:
  log_level: debug
  history_jobs: 20
pagewarden_policies:
  fleet:
    jobs:
      nightly:
        memory: {high: 96M}
        match:
          units: [nightly-backup.service]
  app: |
    protect:
      app:
        unit: pw-app.service
        memory: {min: 32M}
YAML

# --- the first run: install, files, service ----------------------------------

play 1 /root/vars-1.yml
if [ "$rc" = 0 ]; then ok "the first run succeeds"; else not_ok "the first run fails (exit $rc)"; show_log 1 40; fi
expect_ge "and changes things" "${changed:-0}" 3
expect_eq "pagewarden is installed" "$(dpkg-query -W -f='${Status}' pagewarden 2>&1)" "install ok installed"
expect_eq "pagewarden.service is enabled" "$(systemctl is-enabled pagewarden.service 2>&1)" enabled
expect_eq "pagewarden.socket is enabled" "$(systemctl is-enabled pagewarden.socket 2>&1)" enabled
expect_eq "pagewarden.socket is active" "$(systemctl is-active pagewarden.socket 2>&1)" active
wait_classes "backup copy nightly"
expect_eq "pagewarden.service is active" "$(systemctl is-active pagewarden.service 2>&1)" active
expect_eq "the daemon has the role's class and the package's (the role removes no file by default)" \
	"$(classes)" "backup copy nightly"
i=0
while [ $i -lt 50 ] && [ "$(systemctl show -P MemoryMin pw-app.service)" != 33554432 ]; do sleep 0.2; i=$((i + 1)); done
expect_eq "the protected application has MemoryMin=32M" "$(systemctl show -P MemoryMin pw-app.service)" 33554432
expect_eq "the policy files are root's, mode 0644" "$(stat -c '%U:%G %a' $P/fleet.yaml $P/app.yaml | sort -u)" "root:root 644"
expect_eq "the settings file too" "$(stat -c '%U:%G %a' /etc/pagewarden/pagewarden.yaml)" "root:root 644"
check "the settings file has the variable's settings" grep -qx 'log_level: debug' /etc/pagewarden/pagewarden.yaml
check "the text of a policy is written as it is" grep -qx '    memory: {min: 32M}' $P/app.yaml
check "pagewardenctl check: the whole configuration is valid" pagewardenctl check --quiet
pid1=$(mainpid)

# --- the same again: nothing to do ------------------------------------------------

play 2 /root/vars-1.yml
expect_eq "a second run succeeds" "$rc" 0
if [ "$changed" = 0 ]; then ok "and reports changed=0"; else not_ok "the second run reports changed=$changed"; show_log 2 60; fi
expect_eq "the daemon was neither restarted nor stopped" "$(mainpid)" "$pid1"

# --- a changed variable -----------------------------------------------------------

# nightly's limit changes, a class is added; and the directory becomes the
# role's alone: the package's jobs.yaml goes.
sed -e 's/high: 96M/high: 64M/' -e 's/^  app: |$/  more:\n    jobs: {weekly: {memory: {high: 48M}}}\n  app: |/' \
	/root/vars-1.yml >/root/vars-2.yml
echo 'pagewarden_policies_exclusive: true' >>/root/vars-2.yml
play 3 /root/vars-2.yml
if [ "$rc" = 0 ]; then ok "a run with changed variables succeeds"; else not_ok "the run with changed variables fails (exit $rc)"; show_log 3 40; fi
expect_ge "and reports changes" "${changed:-0}" 3
check "the policy file has the new limit" grep -qx '      high: 64M' $P/fleet.yaml
check "the new file is there" test -f $P/more.yaml
check "the package's jobs.yaml is removed" test ! -e $P/jobs.yaml
wait_classes "nightly weekly"
expect_eq "the daemon reloaded: status shows the new classes, and not the removed ones" "$(classes)" "nightly weekly"
expect_eq "nightly's new memory.high is in force" \
	"$(pagewardenctl status --json | jq -r '.classes[] | select(.name == "nightly") | .configured.memory_high')" 67108864
expect_eq "a reload, not a restart" "$(mainpid)" "$pid1"
sum_before=$(md5sum $P/fleet.yaml)

# --- an invalid policy ----------------------------------------------------------

sed -e 's/high: 64M/high: 64Q/' /root/vars-2.yml >/root/vars-3.yml
play 4 /root/vars-3.yml
if [ "$rc" != 0 ]; then ok "a run with an invalid policy fails (exit $rc)"; else not_ok "a run with an invalid policy succeeds"; show_log 4 40; fi
check "at validation" grep -q 'failed to validate' /tmp/play-4.log
check "with pagewardenctl check's error (file:line:column)" \
	grep -q '/source:[0-9]*:[0-9]*: error: .*64Q' /tmp/play-4.log
grep -o '"stderr": "[^"]*' /tmp/play-4.log | head -n 1 | while IFS= read -r line; do diag "$line"; done
expect_eq "the previous file stays in place" "$(md5sum $P/fleet.yaml)" "$sum_before"
expect_eq "the daemon still runs" "$(systemctl is-active pagewarden.service 2>&1)" active
expect_eq "the same daemon" "$(mainpid)" "$pid1"
expect_eq "with the previous policy" "$(classes)" "nightly weekly"
expect_eq "and nightly's previous memory.high" \
	"$(pagewardenctl status --json | jq -r '.classes[] | select(.name == "nightly") | .configured.memory_high')" 67108864

# --- the role the package installs --------------------------------------------

check "the package installs this role in its documentation" \
	diff -r /root/ansible /usr/share/doc/pagewarden/ansible

done_testing
