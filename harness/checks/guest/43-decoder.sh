#!/bin/bash
# The sample libtraceevent decoder reads the event's format file and prints
# the records it finds in trace_pipe_raw, every field by name.
source "$UE_HARNESS/checks/tap.sh"
samples=$UE_CACHE/samples
enable=/sys/kernel/tracing/events/user_events/example_event/enable
tap_plan 1
if [[ ! -x $samples/example || ! -x $samples/decoder ]]; then
	tap_skip_rest 1 "sample programs not built"
	exit 0
fi
cd /tmp || exit 1

"$samples/example" -n 0 > /dev/null
echo > /sys/kernel/tracing/trace
echo 1 > "$enable"
"$samples/example" -n 2 -i 0 > /dev/null
echo 0 > "$enable"
"$samples/decoder" example_event > /tmp/decoder.txt 2>&1
TAP_MARKER="example_event:"
line() {
	echo "example_event: time_ns=[0-9]+ count=$1 pid=[0-9]+ program=\"example\" point=$2 message=\"iteration $(($1 + 1)) of 2\" note=\"from example.c\"$"
}
tap_lines "decoder prints both records field by field" /tmp/decoder.txt \
	"$(line 0 "00 00 00 00 00 00 00 00")" \
	"$(line 1 "01 00 00 00 ff ff ff ff")"
