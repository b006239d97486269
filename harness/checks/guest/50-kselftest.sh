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
order=()
while read -r t _; do
	[[ $t == \#* || -z $t ]] && continue
	[[ " ${all[*]} " == *" $t "* ]] && order+=("$t")
done < "$UE_HARNESS/checks/kselftest-order"
for t in "${all[@]}"; do
	[[ " ${order[*]} " == *" $t "* ]] || order=("$t" "${order[@]}")
done

queue=
if [[ -n ${UE_SHARED:-} ]]; then
	queue=$UE_SHARED/kselftest
	mkdir -p "$queue"
fi
for t in "${order[@]}"; do
	# mkdir is atomic on the host's file system: one VM gets each program.
	[[ -z $queue ]] || mkdir "$queue/$t" 2>/dev/null || continue
	start=$(date +%s)
	run_many "$t"
	echo "# ue-time: $t $(($(date +%s) - start))"
done
