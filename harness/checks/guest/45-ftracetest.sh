#!/bin/bash
# The ftrace selftest cases of the series (the tracing core fixes at its
# front), each run on its own by the kernel's ftracetest from the tree
# the kernel was built from.  A case that is unsupported or unresolved
# counts as failed: every one of them applies to the test kernels.
# UE_FTRACE_TREE is that tree (default $UE_CACHE/linux).  They run in
# the plain kernel only: ftracetest resets every event's trigger and
# filter before each case, one process per file, which takes the debug
# kernel minutes per case, and what the cases check is behaviour (the
# user_events selftests open, use and delete event files under KASAN).
# flavours: plain
tree=${UE_FTRACE_TREE:-$UE_CACHE/linux}
ftracetest=$tree/tools/testing/selftests/ftrace/ftracetest
# The cases the series adds on this base (a base may drop the fix of one),
# or UE_FTRACE_REF (harness/ue fixes: the fixes at its front)
mapfile -t cases < <(git -C "$tree" diff --name-only --diff-filter=A \
	base "${UE_FTRACE_REF:-series}" -- 'tools/testing/selftests/ftrace/*.tc' | sort)
# UE_FTRACE_CASES: only these of them (names below test.d/)
if [[ -n ${UE_FTRACE_CASES:-} ]]; then
	read -ra want <<<"$UE_FTRACE_CASES"
	mapfile -t cases < <(printf '%s\n' "${cases[@]}" |
		grep -xF -f <(printf 'tools/testing/selftests/ftrace/test.d/%s\n' "${want[@]}"))
fi
if ((${#cases[@]} == 0)); then
	echo "1..0 # SKIP no ftrace selftest case in the series"
	exit 0
fi
echo "1..${#cases[@]}"
n=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	desc="ftracetest: ${c#tools/testing/selftests/ftrace/test.d/}"
	log=/tmp/ftracetest-logs/$n
	if out=$("$ftracetest" --fail-unsupported --fail-unresolved \
		-l "$log" "$tree/$c" 2>&1); then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		# The summary, and the end of the case's log (its commands
		# traced by set -x; the reset at its start lists every event)
		{
			printf '%s\n' "$out" | grep -v '^$'
			tail -n 25 "$log"/[0-9]*-log.* 2>/dev/null | cut -c1-200
		} | sed 's/^/# /'
	fi
done
