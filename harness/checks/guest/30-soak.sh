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
# It runs in the first VM before the kselftests, which the second VM
# starts meanwhile (they share the programs), so both end together.
# flavours: debug
source "$UE_HARNESS/checks/tap.sh"
ksft=${UE_KSELFTEST_DIR:-$UE_CACHE/kselftest}/user_events
secs=${UE_SOAK_SECONDS:-60}
percent=${UE_SOAK_PERCENT:-2}
tracefs=/sys/kernel/tracing
dbg=/sys/kernel/debug
tap_plan 3
if [[ ! -d $dbg/failslab || ! -e /proc/self/make-it-fail ]]; then
	tap_skip 3 "no failslab or make-it-fail (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit 0
fi

# The programs and their libraries run from a tmpfs copy: the guest's
# root is 9p, whose client forgets a file whose clunk (close) failed
# while the host keeps it open; every later lookup that reuses the
# file's number then fails with EINVAL.  Failures in a program's own
# file handling must not reach that.
bin=$(mktemp -d /tmp/soak.XXXXXX)
trap 'rm -rf "$bin"' EXIT
interp=
declare -A copy=()
for prog in stress_test fuzz_test; do
	[[ -x $ksft/$prog ]] || continue
	copy[$ksft/$prog]=1
	# What ldd prints, with one program start instead of its several
	while read -r lib arrow path _; do
		if [[ $arrow == '=>' && $path == /* ]]; then
			copy[$path]=1
		elif [[ $lib == /* ]]; then
			interp=$lib
			copy[$lib]=1
		fi
	done < <(LD_TRACE_LOADED_OBJECTS=1 "$ksft/$prog")
done
if [[ -z $interp ]]; then
	tap_skip 3 "no dynamically linked stress_test or fuzz_test in $ksft"
	exit 0
fi
cp -L "${!copy[@]}" "$bin/"
interp=${interp##*/}

# fail_session SID: make-it-fail on every task of session SID (bash
# alone: a program start takes a second in the debug kernel)
fail_session() {
	local stat line t
	local -a f
	for stat in /proc/[0-9]*/stat; do
		read -r line 2> /dev/null < "$stat" || continue
		# state ppid pgrp session..., after the command's name
		read -ra f <<< "${line##*) }"
		[[ ${f[3]} == "$1" ]] || continue
		for t in "${stat%/stat}"/task/*; do
			echo 1 > "$t/make-it-fail" 2> /dev/null
		done
	done
}

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

# A second's wait without starting a program: a pipe nothing writes to
exec {nap}<> <(:)

# Each program in a session of its own (the kselftest harness puts each
# case in a process group of its own), its tasks marked to fail once it
# runs, again each second for the processes it forks, and killed as a
# whole at its time
ran=()
for prog in stress_test fuzz_test; do
	[[ -x $bin/$prog ]] || continue
	(cd "$bin" && exec setsid "./$interp" --library-path . "./$prog" \
		> /dev/null 2>&1) &
	pid=$!
	end=$((EPOCHSECONDS + secs / 2))
	while ((EPOCHSECONDS < end)); do
		fail_session "$pid"
		read -rt 1 -u "$nap"
	done
	pkill -KILL -s "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	ran+=("$prog")
done
sleep 1
restore
tap_result "$((${#ran[@]} == 0))" "soak: ${ran[*]:-nothing} ran ${secs}s with ${percent}% of allocations failing"

# Every user event left, disabled, triggers off, then deleted.  The
# programs' instances go first (their events are enabled there), and the
# names come from user_events_status as well as the directories: a
# registration that met a failed allocation in the tracing core's file
# creation has no directory, or not all its files (the core makes them
# best effort, as for every event it adds, and logs what it could not).
for inst in "$tracefs"/instances/ue_*/; do
	[[ ! -d $inst ]] || rmdir "$inst"
done
# At the top level an event without a directory can still be enabled,
# through its system's enable file (stress_test's enable thread writes
# it) or set_event: truncating set_event disables every event there.
: > "$tracefs/set_event"
declare -A names=()
while IFS= read -r line; do
	[[ ! $line =~ ^[0-9]+:([^ ]+) ]] || names[${BASH_REMATCH[1]}]=1
done < "$tracefs/user_events_status"
for dir in "$tracefs"/events/user_events/*/ "$tracefs"/events/user_events_multi/*/; do
	[[ -d $dir ]] || continue
	dir=${dir%/}
	names[${dir##*/}]=1
	[[ ! -e $dir/enable ]] || echo 0 > "$dir/enable"
	[[ ! -e $dir/trigger ]] || : > "$dir/trigger"
	[[ ! -e $dir/filter ]] || echo 0 > "$dir/filter"
done
out=
for name in "${!names[@]}"; do
	echo "!u:$name" >> "$tracefs/dynamic_events" 2> /dev/null
done
for dir in "$tracefs"/events/user_events/*/ "$tracefs"/events/user_events_multi/*/; do
	[[ ! -d $dir ]] || out+="${dir%/}: not deletable"$'\n'
done
tap_result "$([[ -z $out ]]; echo $?)" "soak: the ${#names[@]} events left are deletable" "$out"
status='' active=''
while IFS= read -r line; do
	status+=$line$'\n'
	[[ $line != 'Active: '* ]] || active=${line#Active: }
done < "$tracefs/user_events_status"
tap_result "$([[ $active == 0 ]]; echo $?)" "soak: user_events_status counts no event (Active: $active)" \
	"$status"
