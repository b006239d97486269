#!/bin/bash
# trace-cmd record on each sample program's event, and trace-cmd report
# decoding every field.  (trace-cmd 3.1 cannot read its own compressed
# files: record with --compression none.)  Then nothing uses the event:
# its status byte is 0, or the automatic event is deleted, while trace-cmd
# report still decodes its records.
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
tests() { echo 3; }
plan=0
for sample in "${SAMPLES[@]}"; do
	plan=$((plan + $(tests "$sample")))
done
tap_plan "$plan"
cd /tmp || exit 1

# trace_cmd_sample SAMPLE: three tests.
trace_cmd_sample() {
	local sample=$1 event=${SAMPLE_EVENT[$1]} dat=/tmp/trace-$1.dat
	sample_built "$sample" "$(tests "$sample")" || return
	sample_hold "$sample"
	tap_check "trace-cmd record -e user_events:$event $sample" \
		trace-cmd record -q --compression none -e "user_events:$event" \
		-o "$dat" "$SAMPLES_DIR/$sample" -n 3 -i 0
	sample_release
	trace-cmd report -i "$dat" > "/tmp/trace-report-$sample.txt" 2>&1
	sample_tap_lines "trace-cmd report decodes all fields of $sample's 3 events" \
		"/tmp/trace-report-$sample.txt" "$sample" 3 "$event:" "$event: +"
	sample_check_detached "$sample" trace-cmd
}

for sample in "${SAMPLES[@]}"; do
	trace_cmd_sample "$sample"
done
