# shellcheck shell=bash
# TAP helpers for the guest checks (sourced).  Each check script prints a
# plan, then one "ok"/"not ok" line per test; failures carry diagnostics
# as "# " lines.

TAP_N=0

tap_plan() {
	echo "1..$1"
}

# tap_result STATUS DESC [DIAGNOSTICS]: report one test, ok if STATUS is 0.
tap_result() {
	TAP_N=$((TAP_N + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $TAP_N $2"
	else
		echo "not ok $TAP_N $2"
		[[ -n ${3:-} ]] && printf '%s\n' "$3" | sed 's/^/# /'
	fi
	return 0
}

# tap_check DESC CMD...: ok if CMD succeeds; its output is the diagnostic.
tap_check() {
	local desc=$1 out status
	shift
	out=$("$@" 2>&1)
	status=$?
	tap_result "$status" "$desc" "$out"
}

# tap_skip COUNT REASON: report the next COUNT tests as skipped.
tap_skip() {
	local i
	for ((i = 0; i < $1; i++)); do
		TAP_N=$((TAP_N + 1))
		echo "ok $TAP_N # SKIP $2"
	done
}

# tap_skip_rest TOTAL REASON: report the tests up to TOTAL as skipped.
tap_skip_rest() {
	tap_skip $(($1 - TAP_N)) "$2"
}

# tap_lines DESC FILE EXPECTED...: ok if FILE has, in order, one line
# matching each extended regular expression of EXPECTED, and no other line
# matching the first pattern's event marker given in $TAP_MARKER.
tap_lines() {
	local desc=$1 file=$2 got want i=0
	shift 2
	mapfile -t got < <(grep -E -- "$TAP_MARKER" "$file")
	if ((${#got[@]} != $#)); then
		tap_result 1 "$desc" "expected $# lines matching '$TAP_MARKER', got ${#got[@]}:
$(cat "$file")"
		return
	fi
	for want in "$@"; do
		if ! grep -q -E -- "$want" <<<"${got[i]}"; then
			tap_result 1 "$desc" "line $((i + 1)) does not match: $want
${got[i]}"
			return
		fi
		i=$((i + 1))
	done
	tap_result 0 "$desc"
}
