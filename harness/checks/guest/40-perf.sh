#!/bin/bash
# perf record on the sample program's event: every write is one sample and
# perf script decodes every field, the __rel_loc and __data_loc strings too.
source "$UE_HARNESS/checks/tap.sh"
example=$UE_CACHE/samples/example
tap_plan 3
if [[ ! -x $example ]]; then
	tap_skip_rest 3 "sample program not built"
	exit 0
fi
cd /tmp || exit 1

# The event must exist before perf parses its name; it outlives the program.
"$example" -n 0 > /dev/null
tap_check "perf record -e user_events:example_event -- example" \
	perf record -q -e user_events:example_event -o /tmp/perf.data -- \
	"$example" -n 3 -i 0
perf script -i /tmp/perf.data > /tmp/perf-script.txt 2>&1
TAP_MARKER="user_events:example_event:"
line() {
	echo "user_events:example_event: time_ns=[0-9]+ count=$1 pid=[0-9]+ program=example point=$2 message=iteration $(($1 + 1)) of 3 note=from example.c$"
}
tap_lines "perf script decodes all fields of the 3 samples" /tmp/perf-script.txt \
	"$(line 0 "00 00 00 00 00 00 00 00")" \
	"$(line 1 "01 00 00 00 ff ff ff ff")" \
	"$(line 2 "02 00 00 00 fe ff ff ff")"
tap_check "perf detached: status byte back to 0" \
	grep -q -x '[0-9]*:example_event' /sys/kernel/tracing/user_events_status
