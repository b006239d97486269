#!/bin/bash
# bpftrace on a user event prints the values a program writes: its BPF
# program runs on every write with the record as context.  Two events: one
# made through dynamic_events and written by ue-write.py, and the
# enable_bit sample's, registered through the enable bit layout.  bpftrace
# 0.17 cannot parse __rel_loc fields, so both have fixed fields and
# __data_loc strings only; and it lays out the record as a C struct, so
# the fields are ordered to sit at naturally aligned offsets.
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
# shellcheck source-path=SCRIPTDIR/.. source=tap.sh
source "$UE_HARNESS/checks/tap.sh"
# shellcheck source=samples.sh
source "$UE_HARNESS/checks/samples.sh"
write=$UE_HARNESS/checks/ue-write.py
event="bt_e2e s64 delta; u32 count; __data_loc char[] msg"
tap_plan 6
cd /tmp || exit 1

# One bpftrace for both events, as it takes seconds to start: a probe per
# event, each printing the event's name first.  BEGIN runs once every
# probe is attached.
echo "u:$event" >> "$TRACEFS/dynamic_events"
probes='tracepoint:user_events:bt_e2e {
	printf("bt_e2e count=%u delta=%lld msg=%s\n", args->count, args->delta, str(args->msg));
}'
# The enable_bit sample's event exists while a first enable_bit waits for
# its enable bit (sample_hold); bpftrace setting the bit ends the wait.
eb=
if [[ -x $SAMPLES_DIR/enable_bit ]] && sample_hold enable_bit; then
	eb=1
	probes+='
tracepoint:user_events:enable_bit_event {
	printf("enable_bit_event count=%u message=%s\n", args->count, str(args->message));
}'
fi
# bpftrace starts its LLVM first: two minutes and more on a slow machine.
# Its timeout, and the wait of sample_hold's holder, only catch a hang.
timeout 1200 bpftrace -e "BEGIN { printf(\"attached\\n\"); } $probes" > /tmp/bpftrace.txt 2>&1 &
bt=$!
until grep -q '^attached$' /tmp/bpftrace.txt; do
	kill -0 "$bt" 2> /dev/null || break
	sleep 0.2
done

tap_check "bpftrace attached (status: # Used by perf)" \
	grep 'bt_e2e # Used by perf$' "$TRACEFS/user_events_status"
[[ -z $eb ]] || tap_check "bpftrace attached (it set the waiting enable_bit's enable bit)" \
	sample_holder_done 60
python3 "$write" "$event" count=1,delta=-5,msg=first count=2,delta=7,msg=second \
	count=4000000000,delta=-9000000000,msg= > /dev/null
[[ -z $eb ]] || "$SAMPLES_DIR/enable_bit" -n 3 -i 0 > /dev/null
sample_release
sleep 2
# bpftrace once sat out SIGINT until its timeout: SIGTERM after 20 s
kill -INT "$bt"
for _ in $(seq 100); do
	kill -0 "$bt" 2> /dev/null || break
	sleep 0.2
done
if kill -0 "$bt" 2> /dev/null; then
	echo "# bpftrace still running 20 s after SIGINT: SIGTERM"
	kill -TERM "$bt"
fi
wait "$bt"

TAP_MARKER="^bt_e2e "
tap_lines "bpftrace printed every written value" /tmp/bpftrace.txt \
	"^bt_e2e count=1 delta=-5 msg=first$" \
	"^bt_e2e count=2 delta=7 msg=second$" \
	"^bt_e2e count=4000000000 delta=-9000000000 msg=$"
echo "!u:bt_e2e" >> "$TRACEFS/dynamic_events"
tap_check "event deletable after bpftrace exited" \
	test ! -e "$TRACEFS/events/user_events/bt_e2e"

if [[ -n $eb ]]; then
	sample_tap_lines "bpftrace printed every value enable_bit wrote" \
		/tmp/bpftrace.txt enable_bit 3 "^enable_bit_event " '^enable_bit_event '
	sample_check_detached enable_bit bpftrace
elif [[ -x $SAMPLES_DIR/enable_bit ]]; then
	tap_result 1 "enable_bit registers enable_bit_event for bpftrace"
	tap_skip_rest 6 "enable_bit did not register its event"
else
	sample_built enable_bit 3
fi
