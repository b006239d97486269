#!/bin/bash
# The sample libtraceevent decoder reads the event's format file and prints
# the records it finds in trace_pipe_raw, every field by name: for the
# event of each sample program, enabled in ftrace while the sample writes.
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
tap_plan ${#SAMPLES[@]}
if [[ ! -x $SAMPLES_DIR/decoder ]]; then
	tap_skip_rest ${#SAMPLES[@]} "sample decoder not built (no $SAMPLES_DIR/decoder)"
	exit 0
fi
cd /tmp || exit 1

# decoder_sample SAMPLE: one test.
decoder_sample() {
	local sample=$1 event=${SAMPLE_EVENT[$1]} enable lines
	enable=$(sample_event_dir "$sample")/enable
	sample_built "$sample" 1 || return
	sample_hold "$sample"
	echo > "$TRACEFS/trace"
	echo 1 > "$enable"
	# On one CPU: the decoder reads the CPUs' buffers one after the other,
	# so two records written on two CPUs would print out of order
	taskset -c 0 "$SAMPLES_DIR/$sample" -n 2 -i 0 > /dev/null
	# While enabled: an automatic event, and its format, go when disabled
	"$SAMPLES_DIR/decoder" "$event" > "/tmp/decoder-$sample.txt" 2>&1
	echo 0 > "$enable"
	sample_release
	TAP_MARKER="$event:"
	mapfile -t lines < <(sample_lines "$sample" 2 "$event: " '"')
	tap_lines "decoder prints $sample's 2 records field by field" \
		"/tmp/decoder-$sample.txt" "${lines[@]}"
}

for sample in "${SAMPLES[@]}"; do
	decoder_sample "$sample"
done
