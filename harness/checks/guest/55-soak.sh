#!/bin/bash
# Random fault injection as a soak: the stress and fuzz selftests run for
# a bounded time (UE_SOAK_SECONDS, default 60, shared between them) with
# a small share of their slab and page allocations failing (failslab and
# fail_page_alloc at UE_SOAK_PERCENT, default 2, for their processes
# only: task-filter and make-it-fail).  Their own verdicts mean nothing
# then; what counts is what they leave: afterwards every user event is
# deletable once disabled, and user_events_status counts none.  The
# kernel log check (harness/lib/test.sh) and, in the debug kernel,
# 60-kmemleak see the rest.  inject_test makes each site fail in turn;
# this finds what only an unlucky mix of failures reaches.  The debug
# kernel runs it: what it finds is KASAN's, lockdep's and kmemleak's.
# flavours: debug
source "$UE_HARNESS/checks/tap.sh"
ksft=${UE_KSELFTEST_DIR:-$UE_CACHE/kselftest}/user_events
secs=${UE_SOAK_SECONDS:-60}
percent=${UE_SOAK_PERCENT:-2}
tracefs=/sys/kernel/tracing
dbg=/sys/kernel/debug
tap_plan 3
# Off unless UE_SOAK is set: the failures it injects into its programs'
# own file handling leave the guest's 9p root file system refusing to
# open and run programs for a while (EINVAL, RESULTS.md, "Every fault
# site of every entry point"), its programs and the checks after it
# included.  Until the guest's root is not on 9p for it, run it alone.
if [[ -z ${UE_SOAK:-} ]]; then
	tap_skip 3 "the soak is run by hand: UE_SOAK=1 (the guest's 9p root)"
	exit 0
fi
if [[ ! -d $dbg/failslab || ! -e /proc/self/make-it-fail ]]; then
	tap_skip 3 "no failslab or make-it-fail (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit 0
fi

# set ATTR VALUE: set a fault attribute, saving it for restore
saved=()
set_attr() {
	saved+=("$1=$(<"$1")")
	echo "$2" > "$1"
}
restore() {
	local i
	for ((i = ${#saved[@]} - 1; i >= 0; i--)); do
		echo "${saved[i]#*=}" > "${saved[i]%%=*}"
	done
}
for kind in failslab fail_page_alloc; do
	d=$dbg/$kind
	[[ -d $d ]] || continue
	set_attr "$d/task-filter" Y
	set_attr "$d/probability" "$percent"
	set_attr "$d/interval" 1
	set_attr "$d/times" -1
	set_attr "$d/verbose" 0
	set_attr "$d/ignore-gfp-wait" N
done
[[ ! -d $dbg/fail_page_alloc ]] || set_attr "$dbg/fail_page_alloc/min-order" 0

# Each program in a session of its own, killed as a whole at its time
# (the kselftest harness puts each case in a process group of its own)
ran=()
for prog in stress_test fuzz_test; do
	[[ -x $ksft/$prog ]] || continue
	(cd "$ksft" && exec setsid bash -c \
		'echo 1 > /proc/self/make-it-fail; exec ./"$0" > /dev/null 2>&1' \
		"$prog") &
	pid=$!
	sleep $((secs / 2))
	pkill -KILL -s "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	ran+=("$prog")
done
sleep 1
restore
tap_result "$((${#ran[@]} == 0))" "soak: ${ran[*]:-nothing} ran ${secs}s with ${percent}% of allocations failing"

# Every user event left: disabled, triggers off, then deleted.  From
# here on bash alone: a failed allocation in the soak may have left the
# guest's 9p root refusing to open files for a while (RESULTS.md, "Every
# fault site of every entry point"), which is not what this checks.
left=()
for dir in "$tracefs"/events/user_events/*/ "$tracefs"/events/user_events_multi/*/; do
	[[ -d $dir ]] && left+=("${dir%/}")
done
out=
for dir in "${left[@]}"; do
	echo 0 > "$dir/enable" 2> /dev/null
	: > "$dir/trigger" 2> /dev/null
	echo 0 > "$dir/filter" 2> /dev/null
	echo "!u:${dir##*/}" >> "$tracefs/dynamic_events" 2> /dev/null
	[[ ! -d $dir ]] || out+="$dir: not deletable"$'\n'
done
tap_result "$([[ -z $out ]]; echo $?)" "soak: the ${#left[@]} events left are deletable" "$out"
status= active=
while IFS= read -r line; do
	status+=$line$'\n'
	[[ $line != 'Active: '* ]] || active=${line#Active: }
done < "$tracefs/user_events_status"
tap_result "$([[ $active == 0 ]]; echo $?)" "soak: user_events_status counts no event (Active: $active)" \
	"$status"
