#!/bin/bash
# trace-cmd record on the sample program's event, and trace-cmd report
# decoding every field.  (trace-cmd 3.1 cannot read its own compressed
# files: record with --compression none.)
source "$UE_HARNESS/checks/tap.sh"
example=$UE_CACHE/samples/example
tap_plan 2
if [[ ! -x $example ]]; then
	tap_skip_rest 2 "sample program not built"
	exit 0
fi
cd /tmp || exit 1

"$example" -n 0 > /dev/null
tap_check "trace-cmd record -e user_events:example_event example" \
	trace-cmd record -q --compression none -e user_events:example_event \
	-o /tmp/trace.dat "$example" -n 3 -i 0
trace-cmd report -i /tmp/trace.dat > /tmp/trace-report.txt 2>&1
TAP_MARKER="example_event:"
line() {
	echo "example_event: +time_ns=[0-9]+ count=$1 pid=[0-9]+ program=example point=$2 message=iteration $(($1 + 1)) of 3 note=from example.c$"
}
tap_lines "trace-cmd report decodes all fields of the 3 events" /tmp/trace-report.txt \
	"$(line 0 "00 00 00 00 00 00 00 00")" \
	"$(line 1 "01 00 00 00 ff ff ff ff")" \
	"$(line 2 "02 00 00 00 fe ff ff ff")"
