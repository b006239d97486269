#!/bin/bash
# bpftrace on a user event prints the values a program writes: its BPF
# program runs on every write with the record as context.  bpftrace 0.17
# cannot parse __rel_loc fields, so this event has fixed fields and a
# __data_loc string only; and it lays out the record as a C struct, so the
# fields are ordered to sit at naturally aligned offsets.
source "$UE_HARNESS/checks/tap.sh"
tracefs=/sys/kernel/tracing
write=$UE_HARNESS/checks/ue-write.py
event="bt_e2e s64 delta; u32 count; __data_loc char[] msg"
tap_plan 3
cd /tmp || exit 1

echo "u:$event" >> "$tracefs/dynamic_events"
timeout 300 bpftrace -e 'tracepoint:user_events:bt_e2e {
	printf("count=%u delta=%lld msg=%s\n", args->count, args->delta, str(args->msg));
}' > /tmp/bpftrace.txt 2>&1 &
bt=$!

# Attached once the status says perf uses the event (bpftrace goes through
# perf_event_open); give it time to start under emulation.
for _ in $(seq 600); do
	grep -q 'bt_e2e # Used by perf$' "$tracefs/user_events_status" && break
	sleep 0.2
done
tap_check "bpftrace attached (status: # Used by perf)" \
	grep 'bt_e2e # Used by perf$' "$tracefs/user_events_status"

python3 "$write" "$event" count=1,delta=-5,msg=first count=2,delta=7,msg=second \
	count=4000000000,delta=-9000000000,msg= > /dev/null
sleep 2
kill -INT "$bt"
wait "$bt"
TAP_MARKER="^count="
tap_lines "bpftrace printed every written value" /tmp/bpftrace.txt \
	"^count=1 delta=-5 msg=first$" \
	"^count=2 delta=7 msg=second$" \
	"^count=4000000000 delta=-9000000000 msg=$"
echo "!u:bt_e2e" >> "$tracefs/dynamic_events"
tap_check "event deletable after bpftrace exited" \
	test ! -e "$tracefs/events/user_events/bt_e2e"
