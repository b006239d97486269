# shellcheck shell=bash
# harness/ue mutants [NAME...]: do the tests catch planted bugs?
#
# Each harness/mutants/NN-name.patch plants one bug in the kernel side of
# the series.  For each, the series is built with the patch applied, booted,
# and the user_events kselftests run, then the kmemleak check (which only
# does something in the debug flavour).  The mutant is CAUGHT when a test
# case fails, the kernel log has a report (klog_reports) or the VM does not
# complete; MISSED otherwise.  The unmutated series runs first, the same
# way: it must pass cleanly, so that a failure means the planted bug.
#
# Trees and locking: the exclusive cache lock is taken only to apply the
# series (cmd_apply, as every build does) and to check its commit out in a
# worktree of $TREE, $MUT_SRC; then the lock is downgraded to shared, as
# for "run".  Nothing after that writes to $TREE or $UE_CACHE/build*: the
# kernel is built in $MUT_OUT (the test VM's configuration, through
# config_make) and the VMs keep their run directories in $MUT_DIR/runs,
# so other harness/ue commands build and boot meanwhile, and a later
# "apply" does not change what is tested.  After the first cold build
# each mutant recompiles one file and relinks.
#
# Header of a mutant (the lines before its diff):
#   Bug: what the patch plants, in one line
#   Caught-by: PROGRAM [CASE...]  a kselftest program and its test cases
#                               that must fail (a program alone: run it,
#                               no case in particular); or "kmemleak" or
#                               "kernel-log", which must report.  One line
#                               per program.
#   Flavour: debug              only visible to the debug flavour's
#                               checkers: skipped unless UE_FLAVOUR=debug
# and free text.  The patches are applied with patch --fuzz=0, which
# tolerates moved lines but not changed ones.
#
# UE_MUTANT_TESTS: "all" (the default) runs every kselftest program for
# every mutant; "expected" only the programs of the mutant's Caught-by
# lines (the baseline runs all of those); anything else is a list of
# programs to run for all.

MUT_OUT=$MUT_DIR/build${UE_FLAVOUR:+-$UE_FLAVOUR}   # kernel O= directory
MUT_LOG=$LOG_DIR/mutants${UE_FLAVOUR:+-$UE_FLAVOUR}.log
MUT_RESULT=$MUT_DIR/last-result${UE_FLAVOUR:+-$UE_FLAVOUR}.md
MUTANTS_DIR=$HARNESS_DIR/mutants
UE_MUTANT_TESTS=${UE_MUTANT_TESTS:-all}

# mut_field FILE KEY: the values of the header lines "KEY: value".
mut_field() {
	awk -v key="$2:" '
		/^(--- |diff )/ { exit }
		$1 == key { sub(/^[^:]*:[ \t]*/, ""); print }
	' "$1"
}

# mut_select [NAME...]: the mutant files, all of them without NAME.  A NAME
# is a file's "NN-name", its "NN" or its "name".
mut_select() {
	local all=() f b name found
	for f in "$MUTANTS_DIR"/[0-9]*.patch; do
		[[ -f $f ]] && all+=("$f")
	done
	((${#all[@]})) || die "mutants: no mutant in $MUTANTS_DIR"
	(($#)) || { printf '%s\n' "${all[@]}"; return 0; }
	for name; do
		found=
		for f in "${all[@]}"; do
			b=$(basename "$f" .patch)
			[[ $name == "$b" || $name == "${b%%-*}" || $name == "${b#*-}" ]] && found=$f
		done
		[[ -n $found ]] || die "mutants: no mutant '$name' in $MUTANTS_DIR"
		printf '%s\n' "$found"
	done
}

# mut_tests FILE...: the kselftest programs to run for these mutants, on
# one line; empty for the whole suite (see UE_MUTANT_TESTS).
mut_tests() {
	local f progs=() p
	case $UE_MUTANT_TESTS in
	all) return 0 ;;
	expected) ;;
	*) echo "$UE_MUTANT_TESTS"; return 0 ;;
	esac
	for f; do
		mapfile -t p < <(mut_field "$f" Caught-by | awk '$1 ~ /_test$/ { print $1 }')
		# A bug only kmemleak or the kernel log sees: any test may show it
		((${#p[@]})) || return 0
		progs+=("${p[@]}")
	done
	printf '%s\n' "${progs[@]}" | sort -u | paste -sd ' '
}

# mut_unmet FILE: what the Caught-by lines of FILE expect and VM_FAILS
# lacks: a listed test case that did not fail, "kmemleak" or "kernel-log"
# with no report.  A program alone expects nothing of its own.
mut_unmet() {
	local prog cases c f hit
	while read -r prog cases; do
		[[ $prog == *_test && -z $cases ]] && continue
		[[ -n $cases ]] || cases=$prog
		for c in $cases; do
			hit=
			for f in "${VM_FAILS[@]}"; do
				[[ $f == "$c" || $f == "$c:"* ]] && hit=1
			done
			[[ -n $hit ]] || printf '%s\n' "$c"
		done
	done < <(mut_field "$1" Caught-by)
}

# mut_reset COMMIT: the worktree back at the series, any mutant undone.
mut_reset() {
	if ! git -C "$MUT_SRC" checkout -q -f --detach "$1" ||
		! git -C "$MUT_SRC" clean -q -ffdx; then
		die "mutants: cannot reset $MUT_SRC to the series"
	fi
}

# mut_run T0 COMMIT FILE...: the baseline, then each mutant, in the trees
# of this command (set here for all the helpers, by dynamic scoping).
mut_run() {
	local t0=$1 commit=$2
	shift 2
	# shellcheck disable=SC2034 # used by the build, config and vm helpers
	local TREE=$MUT_SRC BUILD_DIR=$MUT_OUT BZIMAGE=$MUT_OUT/arch/x86/boot/bzImage \
		HDR_DIR=$MUT_DIR/headers KSFT_DIR=$MUT_DIR/kselftest \
		BUILD_LOG=$MUT_LOG CONFIG_LOG=$MUT_LOG RUNS_DIR=$MUT_DIR/runs RUNS_KEEP=40
	local files=() skipped=() f name tm status fails unmet caught=0 missed=0 errors=0
	local rows=()

	for f; do
		if [[ $(mut_field "$f" Flavour) == debug && $UE_FLAVOUR != debug ]]; then
			skipped+=("$(basename "$f" .patch)")
		else
			files+=("$f")
		fi
	done
	((${#skipped[@]} == 0)) ||
		log "mutants: skipping ${skipped[*]}: only the debug flavour sees them (UE_FLAVOUR=debug)"
	((${#files[@]})) || die "mutants: nothing to run"

	config_make
	log "mutants: baseline (the series without a mutant)"
	build_kernel
	build_headers
	build_selftests
	vm_selftests "$(mut_tests "${files[@]}")"
	if ((${#VM_FAILS[@]} || VM_PASS == 0)); then
		printf '  %s\n' "${VM_FAILS[@]}" "$VM_PASS test cases passed"
		die "mutants: the series itself does not pass cleanly (run: $VM_SCRATCH): nothing could be told from the mutants"
	fi
	echo "baseline: $VM_PASS test cases passed, kernel log clean"

	for f in "${files[@]}"; do
		name=$(basename "$f" .patch) tm=$(now)
		log "mutants: $name: $(mut_field "$f" Bug)"
		mut_reset "$commit"
		if ! run_logged "$MUT_LOG" patch -p1 -N --batch --fuzz=0 \
			--no-backup-if-mismatch -r - -d "$MUT_SRC" -i "$f"; then
			status=ERROR fails="does not apply to the series: update the mutant"
		elif ! (build_kernel); then
			status=ERROR fails="does not build (see $MUT_LOG)"
		else
			vm_selftests "$(mut_tests "$f")"
			if ((${#VM_FAILS[@]})); then
				status=caught fails=$(short_list 4 "${VM_FAILS[@]}")
			else
				status=MISSED fails="all $VM_PASS test cases passed"
			fi
		fi
		case $status in
		caught) caught=$((caught + 1)) ;;
		MISSED) missed=$((missed + 1)) ;;
		*) errors=$((errors + 1)) ;;
		esac
		printf '  %-7s %-30s %s  (%ss)\n' "$status" "$name" "$fails" "$(($(now) - tm))"
		# Unless the VM died before the tests could tell
		if [[ $status == caught ]] && ((VM_RC == 0)); then
			mapfile -t unmet < <(mut_unmet "$f")
			((${#unmet[@]} == 0)) ||
				printf '          expected to fail, did not: %s\n' "${unmet[*]}"
		fi
		[[ $status != caught ]] || fails=$(short_list 8 "${VM_FAILS[@]}")
		rows+=("| $name | $status | $fails |")
	done
	mut_reset "$commit"
	for name in "${skipped[@]}"; do
		printf '  %-7s %-30s %s\n' skipped "$name" "debug flavour only"
		rows+=("| $name | skipped | debug flavour only (UE_FLAVOUR=debug) |")
	done

	{
		printf '# harness/ue mutants, %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'Series %s, flavour %s, tests %s, %s min.\n\n' \
			"$(git -C "$MUT_SRC" log -1 --format=%h "$commit")" \
			"${UE_FLAVOUR:-default}" "$UE_MUTANT_TESTS" "$((($(now) - t0 + 30) / 60))"
		echo '| mutant | result | failed test cases, kernel log reports |'
		echo '|---|---|---|'
		printf '%s\n' "${rows[@]}"
	} > "$MUT_RESULT"
	log "mutants: done in $(($(now) - t0))s (table: $MUT_RESULT)"
	((errors == 0)) || echo "$errors mutant(s) could not be applied or built"
	echo "$caught caught, $missed missed"
	((missed == 0 && errors == 0))
}

cmd_mutants() {
	local t0 list commit
	t0=$(now)
	list=$(mut_select "$@")
	mkdir -p "$MUT_DIR"
	# One mutants run per cache: the worktree and build are ours alone.
	exec {_UE_MUT_LOCK_FD}>>"$MUT_DIR/.lock"
	flock -n -x "$_UE_MUT_LOCK_FD" ||
		die "mutants: another 'harness/ue mutants' is running in $MUT_DIR"

	# Exclusively, as any build: the series, and its commit checked out
	# for our own use.  Then shared, as a VM run.
	lock_cache exclusive
	once cmd_apply
	commit=$(tgit rev-parse series)
	worktree_at "$MUT_SRC" "$commit"
	lock_cache shared
	log "mutants: series $(tgit log -1 --format=%h "$commit") in $MUT_SRC, O=$MUT_OUT (log: $MUT_LOG)"

	local files=()
	mapfile -t files <<<"$list"
	mut_run "$t0" "$commit" "${files[@]}"
}
