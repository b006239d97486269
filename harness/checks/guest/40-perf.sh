#!/bin/bash
# perf record on each sample program's event: every write is one sample and
# perf script decodes every field, the __rel_loc and __data_loc strings too.
# perf parses the event's name before it starts the sample, so the event
# must exist then (sample_hold).
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
tap_plan $((3 * ${#SAMPLES[@]}))
cd /tmp || exit 1

# perf_sample SAMPLE: three tests.
perf_sample() {
	local sample=$1 event=${SAMPLE_EVENT[$1]} data=/tmp/perf-$1.data
	sample_built "$sample" 3 || return
	sample_hold "$sample"
	tap_check "perf record -e user_events:$event -- $sample" \
		perf record -q -e "user_events:$event" -o "$data" -- \
		"$SAMPLES_DIR/$sample" -n 3 -i 0
	sample_release
	perf script -i "$data" > "/tmp/perf-script-$sample.txt" 2>&1
	sample_tap_lines "perf script decodes all fields of $sample's 3 samples" \
		"/tmp/perf-script-$sample.txt" "$sample" 3 "user_events:$event:" \
		"user_events:$event: "
	sample_check_detached "$sample" perf
}

for sample in "${SAMPLES[@]}"; do
	perf_sample "$sample"
done
