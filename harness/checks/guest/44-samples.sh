#!/bin/bash
# Each sample program's event through ftrace alone, as a guest without
# perf, trace-cmd or bpftrace has it (harness/ue test --arch): enabled in
# tracefs while the sample writes, every field of each record read back
# from the trace file, and the event idle again once disabled.
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
tap_plan $((2 * ${#SAMPLES[@]} + 2))
cd /tmp || exit 1

# ftrace_sample SAMPLE: two tests.
ftrace_sample() {
	local sample=$1 event=${SAMPLE_EVENT[$1]}
	sample_built "$sample" 2 || return
	sample_ftrace "$sample" 1
	sample_release
	"$SAMPLES_DIR/$sample" -n 3 -i 0 > /dev/null
	sample_ftrace "$sample" 0
	cat "$TRACEFS/trace" > "/tmp/ftrace-$sample.txt"
	sample_tap_lines "ftrace records all fields of $sample's 3 writes" \
		"/tmp/ftrace-$sample.txt" "$sample" 3 "$event:" "$event: "
	sample_check_detached "$sample" ftrace
}

# burst_sample: two tests, that example -b writes its bursts as batches,
# and that ftrace records each event of them, in order.
burst_sample() {
	local i lines=() out=/tmp/ftrace-burst.txt
	sample_built example 2 || return
	sample_ftrace example 1
	"$SAMPLES_DIR/example" -n 3 -b 40 -i 0 > /tmp/example-burst.txt
	sample_ftrace example 0
	tap_check "example writes its bursts in batched writes" \
		grep -q "in batched writes" /tmp/example-burst.txt
	cat "$TRACEFS/trace" > "$out"
	for ((i = 0; i < 120; i++)); do
		lines+=("example_event: $(sample_fields example "$i" 3 '' 40)\$")
	done
	TAP_MARKER="example_event:"
	tap_lines "ftrace records the 120 events of example's 3 bursts of 40" \
		"$out" "${lines[@]}"
}

for sample in "${SAMPLES[@]}"; do
	ftrace_sample "$sample"
done
burst_sample
