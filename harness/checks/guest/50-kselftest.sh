#!/bin/bash
# The user_events kselftests, through the kselftest runner (the run_many
# of kselftest/runner.sh, which run_kselftest.sh calls), one program at a
# time, each followed by a line "# ue-time: PROGRAM SECONDS" for the
# host's table of phase times.  The installed tests are linked from /tmp,
# where the runner's settings file can change: the host root is read-only
# in the guest.  UE_KSELFTEST_DIR
# (default $UE_CACHE/kselftest) is where they are installed,
# UE_KSELFTEST_TESTS a subset of the programs to run (harness/ue mutants
# uses both).
#
# The programs run longest first (kselftest-order).  When several VMs of
# one kernel share the work ($UE_SHARED, a directory all of them write),
# each takes the next program nobody has taken yet: whoever creates
# $UE_SHARED/kselftest/PROGRAM first runs it.  The runner is loaded once:
# in the debug kernel every program started costs about half a second,
# and run_kselftest.sh starts a dozen before it runs a test.
# lanes: all
ksft=${UE_KSELFTEST_DIR:-$UE_CACHE/kselftest}
if [[ ! -x $ksft/run_kselftest.sh ]]; then
	echo "1..1"
	echo "not ok 1 kselftest: user_events selftests not built"
	exit 0
fi
# Links to the programs (a copy would read them all first), and a
# settings file of our own
rm -rf /tmp/kselftest
cp -rs "$(realpath "$ksft")" /tmp/kselftest
settings=/tmp/kselftest/user_events/settings
rm -f "$settings"
cp "$ksft/user_events/settings" "$settings"
if [[ -n ${UE_KSELFTEST_TIMEOUT:-} ]]; then
	sed -i '/^timeout=/d' "$settings" 2>/dev/null
	echo "timeout=$UE_KSELFTEST_TIMEOUT" >> "$settings"
fi
BASE_DIR=/tmp/kselftest
# shellcheck source=/dev/null
. "$BASE_DIR/kselftest/runner.sh" || exit 0
cd "$BASE_DIR/user_events" || exit 0

# The programs, in the order to run them: those kselftest-order lists
# first, in its order, then any it does not know (new ones, likely long).
mapfile -t all < <(sed -n 's/^user_events://p' "$BASE_DIR/kselftest-list.txt")
if [[ -n ${UE_KSELFTEST_TESTS:-} ]]; then
	read -ra all <<<"$UE_KSELFTEST_TESTS"
fi
# While the host builds beside this VM ($UE_SCRATCH/hold), the programs
# that time the kernel ("timing" in kselftest-order) come last.
order=() timing=()
while read -r t _ kind; do
	[[ $t == \#* || -z $t ]] && continue
	[[ " ${all[*]} " == *" $t "* ]] || continue
	if [[ $kind == timing && -e $UE_SCRATCH/hold ]]; then
		timing+=("$t")
	else
		order+=("$t")
	fi
done < "$UE_HARNESS/checks/kselftest-order"
for t in "${all[@]}"; do
	[[ " ${order[*]} ${timing[*]} " == *" $t "* ]] || order=("$t" "${order[@]}")
done
order+=("${timing[@]}")

# wait_quiet: a program that times the kernel waits until the host says
# the build is done ($UE_SCRATCH/quiet), saying so every minute.
wait_quiet() {
	local waited=0
	until [[ -e $UE_SCRATCH/quiet ]]; do
		((waited % 60)) || echo "# $1 waits for the host's build to end (${waited}s)"
		sleep 5
		waited=$((waited + 5))
	done
}

# case_times PROGRAM: copy the runner's output, and add a line "PROGRAM
# CASE MS" to $cases for each test case that ended without skipping,
# with how long it ran (from the harness's "RUN" line to its "OK" or
# "FAIL"): the host's table of the slowest cases, which says how close
# each came to its timeout, and what "harness/ue coverage" weighs cases
# by.
cases=$UE_SCRATCH/checks/50-kselftest.cases
mkdir -p "${cases%/*}"
case_times() {
	local line start=0 now
	local run='^(# )*#  RUN +([^ ]+) \.\.\.$' end='^(# )*# +(OK|FAIL) +([^ ]+)$'
	local skip='^(# )*# +SKIP '
	while IFS= read -r line; do
		printf '%s\n' "$line"
		now=${EPOCHREALTIME//[!0-9]/}
		if [[ $line =~ $run ]]; then
			start=$now
		elif [[ $line =~ $skip ]]; then
			start=0
		elif [[ $line =~ $end ]] && ((start)); then
			printf '%s %s %d\n' "$1" "${BASH_REMATCH[3]}" \
				$(((now - start) / 1000)) >> "$cases"
			start=0
		fi
	done
}

# run_direct PROGRAM: what run_many prints for one program, without the
# runner's helper programs.  The runner starts about twenty of them around
# each program (tr, cut, grep, two timeouts, perl for the "# " prefix),
# which cost the debug kernel 12 to 14 s a program, more than most
# programs run there: every fork and exec there allocates hundreds of
# objects, each saved with its stack by KASAN and kmemleak.  So the debug
# kernel runs each program under one timeout, with the runner's TAP (the
# plain kernel runs them through the runner itself: the programs work
# with it).
run_direct() {
	local t=$1 limit=45 rc line
	while IFS= read -r line; do
		[[ $line != timeout=* ]] || limit=${line#timeout=}
	done < "$settings"
	echo "TAP version 13"
	echo "1..1"
	echo "# selftests: user_events: $t"
	(cd "$BASE_DIR/user_events" && export UE_SKIP_CASES="${skip[$t]:-}" &&
		exec /usr/bin/timeout "$limit" "./$t" 2>&1) |
		while IFS= read -r line; do printf '# %s\n' "$line"; done
	rc=${PIPESTATUS[0]}
	case $rc in
	0) echo "ok 1 selftests: user_events: $t" ;;
	4) echo "ok 1 selftests: user_events: $t # SKIP" ;;
	124) echo "#"; echo "not ok 1 selftests: user_events: $t # TIMEOUT $limit seconds" ;;
	*) echo "not ok 1 selftests: user_events: $t # exit=$rc" ;;
	esac
}
run_program=run_many
[[ ${UE_FLAVOUR:-} != debug ]] || run_program=run_direct

# In the debug kernel, the cases of checks/debug-skip are left out: the
# cases it keeps run every line of kernel/trace/ (and of the series
# elsewhere) that those run ("harness/ue coverage" chose them; README.md,
# "What runs where").  UE_DEBUG_SKIP names another such file, or none
# when empty.
declare -A skip=()
debug_skip=${UE_DEBUG_SKIP-$UE_HARNESS/checks/debug-skip}
if [[ ${UE_FLAVOUR:-} == debug && -n $debug_skip ]]; then
	while read -r prog name _; do
		[[ $prog == \#* || -z $name ]] || skip[$prog]+="$name "
	done < "$debug_skip"
fi

queue=
if [[ -n ${UE_SHARED:-} ]]; then
	queue=$UE_SHARED/kselftest
	mkdir -p "$queue"
fi
for t in "${order[@]}"; do
	# mkdir is atomic on the host's file system: one VM gets each program.
	[[ -z $queue ]] || mkdir "$queue/$t" 2>/dev/null || continue
	[[ " ${timing[*]} " != *" $t "* ]] || wait_quiet "$t"
	start=$EPOCHSECONDS
	$run_program "$t" | case_times "$t"
	echo "# ue-time: $t $((EPOCHSECONDS - start))"
done
