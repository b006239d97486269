#!/bin/bash
# The guest must run on the TSC clocksource: with a jiffies or hpet clock
# under TCG, timing-dependent tests become flaky.  Each VM of a kernel runs it.
# lanes: all
echo "1..1"
if dmesg | grep -q 'Switched to clocksource tsc'; then
	echo "ok 1 clocksource: switched to tsc"
else
	echo "not ok 1 clocksource: switched to tsc"
	dmesg | grep -i -E 'clocksource|tsc' | sed 's/^/# /'
fi
