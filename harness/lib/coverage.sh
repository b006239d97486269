# shellcheck shell=bash
# harness/ue coverage: choose the kselftest cases the debug kernel runs.
#
# The debug kernel (KASAN, lockdep, kmemleak...) finds what only it finds
# on the code it runs, at ten to forty times the plain kernel's time:
# running every case there runs the same lines many times over, and was
# most of a cold "harness/ue test".  So it runs the cases that together
# run every line that the whole suite runs of the tracing code (all of
# kernel/trace/: the series' core and what reads its events, filters,
# triggers, hist, eprobes, perf and eBPF glue, the ring buffer) and of
# what the series adds elsewhere (its hooks in mm/ and kernel/), and
# every case of the programs whose worth is not in lines:
# COVERAGE_ALWAYS, the races, the stress and the fuzzing (interleavings
# and inputs, which a line count does not see).
#
# This builds the test kernel with gcov counters for those files
# (flavour "gcov", $UE_CACHE/build-gcov), runs each kselftest case alone
# in it (harness/guest-coverage), takes the lines each runs, and writes
# COVERAGE_OUT: each case left out, with the kept cases that run its
# lines (harness/lib/coverage.py).  50-kselftest gives the debug kernel
# a program's cases of that file in UE_SKIP_CASES.  A case the file does
# not name runs: a new case runs in the debug kernel until the next
# "harness/ue coverage" says otherwise.  Run it again when the tests or
# the series' code paths change; it takes about 15 minutes.

COVERAGE_OUT=$HARNESS_DIR/checks/debug-skip
COVERAGE_ALWAYS="race_test stress_test fuzz_test"

# cmd_coverage [--from RUN]: build, run every case, choose.  With --from,
# choose again from the counters of an earlier run (its scratch
# directory; the gcov build must be the one it ran), for instance with
# the debug kernel's times of a newer "harness/ue test".
cmd_coverage() {
	local scratch='' files=() objs=() f
	case ${1:-} in
	--from) (($# == 2)) || die "coverage: --from RUN"; scratch=$2 ;;
	'') ;;
	*) die "coverage: unknown argument '$1'" ;;
	esac
	flavour_use gcov
	if [[ -z $scratch ]]; then
		once cmd_config
		rotate_log
		# The files counted: kernel/trace/ and the C files the series
		# changes (make's command line wins over each Makefile's
		# GCOV_PROFILE)
		mapfile -t files < <({
			tgit ls-files 'kernel/trace/*.c'
			tgit diff --name-only base series -- 'kernel/*.c' 'mm/*.c'
		} | sort -u)
		for f in "${files[@]}"; do
			f=${f##*/}
			objs+=("GCOV_PROFILE_${f%.c}.o=y")
		done
		KMAKE_ARGS+=("${objs[@]}")
		build_kernel
		build_headers
		build_selftests
		scratch=$(scratch_new)
		scratch_cmd "$scratch" run "$HARNESS_DIR/guest-coverage"
		# One program at a time, each case alone: the timeout only
		# catches a hang
		vm_boot "$scratch" run 7200 || die "coverage: the VM did not complete ($scratch)"
	fi
	coverage_choose "$scratch"
}

# coverage_choose RUN: write $COVERAGE_OUT from the counters of RUN.
coverage_choose() {
	local scratch=$1 results=$1/results added=$1/added times=() d
	grep -E '^[a-z_0-9]+ [^ ]+ (pass|skip|fail) [0-9]+$' "$scratch/output" > "$results" ||
		die "coverage: no case ran ($scratch/output)"
	# The lines the series adds, "PATH LINE", from the diff without context
	tgit diff -U0 base series -- 'kernel/*' 'mm/*' 'include/linux/*' |
		awk '
			/^\+\+\+ b\// { path = substr($2, 3); next }
			/^@@/ {
				split($3, n, ",")
				start = substr(n[1], 2) + 0
				count = (2 in n) ? n[2] + 0 : 1
				for (i = 0; i < count; i++)
					print path, start + i
			}' > "$added"
	# What each case took in the debug kernel, from the runs of it kept
	for d in "$RUNS_DIR"/*/; do
		[[ -f $d/vm-name && $(<"$d/vm-name") == *debug* && -f $d/checks/50-kselftest.cases ]] &&
			times+=("$d/checks/50-kselftest.cases")
	done
	python3 "$HARNESS_DIR/lib/coverage.py" --build "$BUILD_DIR" --tree "$TREE" \
		--data "$scratch/coverage" --results "$results" --added "$added" \
		--whole kernel/trace/ --times "${times[@]}" --always "$COVERAGE_ALWAYS" \
		--out "$COVERAGE_OUT" --header "$(printf '%s\n' \
			'# The kselftest cases the debug kernel leaves out (checks/guest/50-kselftest.sh),' \
			'# one per line: "PROGRAM CASE<TAB>the kept cases that run its lines".' \
			'# The lines that count: all of kernel/trace/, and what the series adds' \
			'# elsewhere; every case of the programs whose worth is not in lines' \
			"# runs: ${COVERAGE_ALWAYS// /, }.  Written by \"harness/ue coverage\"" \
			"# (harness/lib/coverage.sh), $(date -u '+%Y-%m-%d %H:%M UTC'), series tree $(tgit rev-parse --short 'series^{tree}')," \
			"# debug times from ${#times[@]} runs.")
"
	log "coverage: written $COVERAGE_OUT"
}
