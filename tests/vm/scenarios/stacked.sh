#!/bin/sh
# io limits on stacked block devices: a loop device, LVM's dm-linear, md
# RAID1 and dm-crypt, each over loop devices on the data disk.  io.max
# throttles the bios submitted to the device it is set on, and these four are
# bio-based: the
# limit belongs on the device the job writes to, which is what `device:`
# resolves to (a dm or md device is used as it is, not its legs).  Checked:
# the resolution, the io.max line, and the rate of O_DIRECT writes through
# each: at most 20% over the limit, and (where the device itself, outside
# any job, is faster than the limit in this run) at most 20% under it.
. /lib.sh
S=$CG/pagewarden.slice
CONF=/etc/pw/pagewarden.yaml
LIMIT=8 # MiB/s
MIB=1048576
export MDADM_NO_UDEV=1 # no udev here: mdadm makes /dev/md0 itself

mkdir -p /etc/pw/policies.d /run/mdadm
printf 'log_level: info\n' >$CONF
for i in 0 1 2 3 4; do
	dd if=/dev/zero of=$PW_DATA_MNT/leg$i bs=1M count=0 seek=96 2>/dev/null
	losetup /dev/loop$i $PW_DATA_MNT/leg$i || not_ok "losetup /dev/loop$i"
done
sectors=$((96 * 2048))
dmsetup create --noudevsync lin --table "0 $sectors linear /dev/loop1 0" && dmsetup mknodes
check "dm-linear /dev/mapper/lin over loop1" test -b /dev/mapper/lin
mdadm --create /dev/md0 --run --quiet --level=1 --raid-devices=2 --assume-clean --metadata=1.2 \
	/dev/loop2 /dev/loop3 2>/tmp/mdadm.err
check "md RAID1 /dev/md0 over loop2 and loop3" test -b /dev/md0 || sed 's/^/# /' /tmp/mdadm.err
# dm-crypt with the null cipher: the same target, its work queues and all,
# without a key or cryptsetup.
dmsetup create --noudevsync cr --table "0 $sectors crypt cipher_null-ecb - 0 /dev/loop4 0" && dmsetup mknodes
check "dm-crypt /dev/mapper/cr over loop4" test -b /dev/mapper/cr

cat >/etc/pw/policies.d/10-stacked.yaml <<YAML
jobs:
  onloop: {io: [{device: /dev/loop0, write_bps: ${LIMIT}M}]}
  ondm: {io: [{device: /dev/mapper/lin, write_bps: ${LIMIT}M}]}
  onmd: {io: [{device: /dev/md0, write_bps: ${LIMIT}M}]}
  oncrypt: {io: [{device: /dev/mapper/cr, write_bps: ${LIMIT}M}]}
YAML
majmin() { cat /sys/class/block/$1/dev; }
# dm-N of a device-mapper name (no udev here, so no /dev/mapper symlink to read)
dm_of() { for d in /sys/block/dm-*; do [ "$(cat $d/dm/name)" = "$1" ] && echo ${d##*/}; done; }
DM=$(dm_of lin)
CR=$(dm_of cr)
printed=$(pagewardenctl check --print --config $CONF)
for dev in loop0 "$DM" md0 "$CR"; do
	check "check --print resolves to $dev ($(majmin $dev)) itself, not its legs" \
		sh -c "echo '$printed' | grep -q '\"$(majmin $dev)\"  # $dev, from'"
done

pagewardend --config $CONF 2>>/tmp/daemon.log &
DAEMON=$!
wait_daemon
check "the daemon runs" pw_answers
want=$((LIMIT * MIB))
expect_eq "io.max of onloop" "$(cat $S/onloop/io.max)" "$(majmin loop0) rbps=max wbps=$want riops=max wiops=max"
expect_eq "io.max of ondm" "$(cat $S/ondm/io.max)" "$(majmin "$DM") rbps=max wbps=$want riops=max wiops=max"
expect_eq "io.max of onmd" "$(cat $S/onmd/io.max)" "$(majmin md0) rbps=max wbps=$want riops=max wiops=max"
expect_eq "io.max of oncrypt" "$(cat $S/oncrypt/io.max)" "$(majmin "$CR") rbps=max wbps=$want riops=max wiops=max"

# rate CLASS DEVICE WHAT: 32 MiB of O_DIRECT writes in a job, then outside any.
rate() {
	out=$(pagewardenctl run --job "$1" -- pwload write-direct "$2" 32)
	diag "$3 in class $1: $out (limit $LIMIT MiB/s)"
	in_job=$(kv "$out" mib_per_s)
	out=$(pwload write-direct "$2" 32)
	diag "$3 outside any job: $out"
	free=$(kv "$out" mib_per_s)
	expect_le "$3: the rate is held to the limit, 20% over at most (MiB/s)" "$in_job" \
		"$(awk -v l=$LIMIT 'BEGIN { print l * 1.2 }')"
	if awk -v f="$free" -v l=$LIMIT 'BEGIN { exit !(f >= l * 1.5) }'; then
		expect_ge "$3: and not held below it by more than 20%, the device itself being faster (MiB/s)" "$in_job" \
			"$(awk -v l=$LIMIT 'BEGIN { print l * 0.8 }')"
	else
		diag "$3 itself wrote at $free MiB/s this run, not faster than the limit: no lower bound this run"
	fi
}
rate onloop /dev/loop0 "loop device"
rate ondm /dev/mapper/lin "dm-linear"
rate onmd /dev/md0 "md RAID1"
rate oncrypt /dev/mapper/cr "dm-crypt"

kill $DAEMON
wait $DAEMON
mdadm --stop /dev/md0 >/dev/null 2>&1
dmsetup remove lin
dmsetup remove cr
for i in 0 1 2 3 4; do losetup -d /dev/loop$i; done
rm -f $PW_DATA_MNT/leg*
if grep -E "ERROR: (Address|Leak)Sanitizer|runtime error:" /tmp/daemon.log >/dev/null; then
	not_ok "no sanitizer report"
else
	ok "no sanitizer report"
fi
[ "$T_FAILED" = 0 ] || tail -20 /tmp/daemon.log | sed 's/^/# daemon: /'
done_testing
