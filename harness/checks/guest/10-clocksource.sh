#!/bin/bash
# The guest must run on the TSC clocksource, at the host's pace: with a
# jiffies or hpet clock under TCG, timing-dependent tests become flaky,
# and a TSC frequency the guest got wrong (harness/lib/vm.sh,
# host_tsc_khz) makes every timeout and timing case in it wrong by as
# much.  The host's pace is read off the modification times the host
# gives a file of the scratch directory that the guest writes to.
# Each VM of a kernel runs it.
# lanes: all
echo "1..2"
if dmesg | grep -q 'Switched to clocksource tsc'; then
	echo "ok 1 clocksource: switched to tsc"
else
	echo "not ok 1 clocksource: switched to tsc"
	dmesg | grep -i -E 'clocksource|tsc' | sed 's/^/# /'
fi

# host_now: the host's time, as the mtime it gives a file written now
clock_file=$UE_SCRATCH/clock.${UE_LANE:-1}
host_now() {
	echo > "$clock_file"
	stat -c %.6Y "$clock_file"
}
g0=$EPOCHREALTIME h0=$(host_now)
sleep 3
g1=$EPOCHREALTIME h1=$(host_now)
rm -f "$clock_file"
ratio=$(awk -v g0="$g0" -v g1="$g1" -v h0="$h0" -v h1="$h1" \
	'BEGIN { printf "%.3f", (g1 - g0) / (h1 - h0) }')
desc="clock: the guest's clock keeps the host's pace ($ratio guest seconds a host second)"
if awk -v r="$ratio" 'BEGIN { exit !(r > 0.95 && r < 1.05) }'; then
	echo "ok 2 $desc"
else
	echo "not ok 2 $desc"
	dmesg | grep -i -E 'tsc|calibrat' | sed 's/^/# /'
fi
