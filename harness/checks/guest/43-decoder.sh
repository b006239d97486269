#!/bin/bash
# The sample libtraceevent decoder reads the event's format file and prints
# the records it finds in trace_pipe_raw, every field by name: for the
# event of each sample program, enabled in ftrace while the sample writes;
# and records written on two CPUs in the order they were written, whichever
# CPU's buffer it reads first.
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
tap_plan $((${#SAMPLES[@]} + 1))
if [[ ! -x $SAMPLES_DIR/decoder ]]; then
	tap_skip_rest $((${#SAMPLES[@]} + 1)) "sample decoder not built (no $SAMPLES_DIR/decoder)"
	exit 0
fi
cd /tmp || exit 1

# decoder_sample SAMPLE: one test.
decoder_sample() {
	local sample=$1 event=${SAMPLE_EVENT[$1]}
	sample_built "$sample" 1 || return
	sample_ftrace "$sample" 1
	"$SAMPLES_DIR/$sample" -n 2 -i 0 > /dev/null
	# While enabled: an automatic event, and its format, go when disabled
	"$SAMPLES_DIR/decoder" "$event" > "/tmp/decoder-$sample.txt" 2>&1
	sample_ftrace "$sample" 0
	sample_release
	sample_tap_lines "decoder prints $sample's 2 records field by field" \
		"/tmp/decoder-$sample.txt" "$sample" 2 "$event:" "$event: " '"'
}

# decoder_order: records of CPU 1 then CPU 0 print in that order, though
# the decoder reads CPU 0's buffer first.
decoder_order() {
	local write=$UE_HARNESS/checks/ue-write.py dir=$TRACEFS/events/user_events/decoder_order
	local desc="decoder prints the records of two CPUs in time order"
	if (($(nproc) < 2)); then
		tap_skip 1 "one CPU only"
		return
	fi
	echo 'u:decoder_order u32 n' >> "$TRACEFS/dynamic_events"
	echo > "$TRACEFS/trace"
	echo 1 > "$dir/enable"
	taskset -c 1 python3 "$write" 'decoder_order u32 n' n=1 n=2 > /dev/null
	taskset -c 0 python3 "$write" 'decoder_order u32 n' n=3 > /dev/null
	taskset -c 1 python3 "$write" 'decoder_order u32 n' n=4 > /dev/null
	"$SAMPLES_DIR/decoder" decoder_order > /tmp/decoder-order.txt 2>&1
	echo 0 > "$dir/enable"
	echo '!u:decoder_order' >> "$TRACEFS/dynamic_events"
	TAP_MARKER="decoder_order:"
	tap_lines "$desc" /tmp/decoder-order.txt \
		'cpu 1 .*decoder_order: n=1$' 'cpu 1 .*decoder_order: n=2$' \
		'cpu 0 .*decoder_order: n=3$' 'cpu 1 .*decoder_order: n=4$'
}

for sample in "${SAMPLES[@]}"; do
	decoder_sample "$sample"
done
decoder_order
