# shellcheck shell=bash
# harness/ue test: build what changed, boot each kernel flavour once, run
# every check, count.
#
# The checks of the patch files (git am, htmldocs, checkpatch) and the
# W=1/sparse build run once; the guest checks and the kernel log scan run
# in the VM of every flavour tested, their names prefixed "FLAVOUR:" except
# for the plain kernel.  The last line printed is "N passed, N failed",
# the total of all; the exit status is 0 only when nothing failed and at
# least one test passed.

# The flavours "test" builds and boots, in this order (--flavour overrides).
UE_FLAVOURS=${UE_FLAVOURS:-${UE_FLAVOUR:-plain debug}}

# Seconds the test VM of a flavour may take, and the kselftest runner's
# per-program timeout in it; UE_TEST_TIMEOUT and UE_KSELFTEST_TIMEOUT,
# when set, apply to every flavour.  The plain kernel keeps the selftests'
# own settings file.  See RESULTS.md (Test run timings) for what they were sized on.
declare -A FLAVOUR_TEST_TIMEOUT=([plain]=600 [debug]=3000)
declare -A FLAVOUR_KSELFTEST_TIMEOUT=([debug]=1200)

# Results, per check, in the order checks were recorded.
declare -a CHECK_ORDER=()
declare -A CHECK_PASS=() CHECK_FAIL=() CHECK_SKIP=()

# record NAME PASS FAIL SKIP: add to a check's counts.
record() {
	local name=$1
	[[ -v CHECK_PASS[$name] ]] || {
		CHECK_ORDER+=("$name")
		CHECK_PASS[$name]=0 CHECK_FAIL[$name]=0 CHECK_SKIP[$name]=0
	}
	CHECK_PASS[$name]=$((CHECK_PASS[$name] + $2))
	CHECK_FAIL[$name]=$((CHECK_FAIL[$name] + $3))
	CHECK_SKIP[$name]=$((CHECK_SKIP[$name] + $4))
}

# --- TAP -------------------------------------------------------------------

# tap_count FILE: print "PASS|FAIL|SKIP<TAB>description" per counted test.
# Nested results ("# ok N", any depth) count each; a top-level result counts
# only if it had no nested results, or is "not ok" with no nested failure.
# Each failure is followed by its output (the lines since the previous
# result, at most 30) as "CTX<TAB>line".
tap_count() {
	awk '
	function verdict(notok, rest) {
		if (notok) return "FAIL"
		if (rest ~ /#[ \t]*[Ss][Kk][Ii][Pp]/) return "SKIP"
		return "PASS"
	}
	function report(v, desc,   i) {
		print v "\t" desc
		if (v == "FAIL")
			for (i = (nbuf > 30 ? nbuf - 30 : 0); i < nbuf; i++)
				printf "CTX\t%s\n", buf[i]
	}
	/^(#[ \t]*)+(not )?ok [0-9]+/ {
		notok = ($0 ~ /^(#[ \t]*)+not ok/)
		desc = $0; sub(/^(#[ \t]*)+(not )?ok [0-9]+[ \t]*/, "", desc)
		v = verdict(notok, desc)
		report(v, desc)
		nested++
		if (v == "FAIL") nested_fail++
		nbuf = 0
		next
	}
	/^(not )?ok [0-9]+/ {
		notok = ($0 ~ /^not ok/)
		desc = $0; sub(/^(not )?ok [0-9]+[ \t]*/, "", desc)
		if (nested == 0 || (notok && nested_fail == 0))
			report(verdict(notok, desc), desc)
		nested = 0; nested_fail = 0; nbuf = 0
		next
	}
	{ buf[nbuf++] = $0 }
	' "$1"
}

# check_tap NAME FILE: count a TAP file as check NAME, printing failures.
# A check the VM stopped in (guest-run's FILE.tmp is left) counts what it
# reported, and one failure showing where it stopped.
check_tap() {
	local name=$1 file=$2 p=0 f=0 s=0 kind desc
	if [[ ! -f $file && -f $file.tmp ]]; then
		printf '  FAIL %s: did not finish (the VM stopped); its last output:\n' "$name"
		tail -n 15 "$file.tmp" | sed 's/^/       | /'
		record "$name" 0 1 0
		file=$file.tmp
	elif [[ ! -f $file ]]; then
		warn "test: $name: no results (the check did not run)"
		record "$name" 0 1 0
		return
	fi
	while IFS=$'\t' read -r kind desc; do
		case $kind in
		PASS) p=$((p + 1)) ;;
		SKIP) s=$((s + 1)) ;;
		FAIL) f=$((f + 1)); printf '  FAIL %s: %s\n' "$name" "$desc" ;;
		CTX) printf '       | %s\n' "$desc" ;;
		esac
	done < <(tap_count "$file")
	if ((p + f + s == 0)); then
		warn "test: $name: no test result in $file"
		f=1
	fi
	record "$name" "$p" "$f" "$s"
}

# --- Kernel log --------------------------------------------------------------

# KLOG_PATTERN: lines that start a report of a kernel problem.  KFENCE's
# reports start with "BUG: KFENCE:", DEBUG_OBJECTS' with "ODEBUG:" (some
# without a WARNING), RCU stalls with "... detected stall(s)".
KLOG_PATTERN='WARNING:|BUG:|KASAN|UBSAN|ODEBUG:|INFO: lockdep|INFO: possible|possible circular locking|unreferenced object|detected stall|Oops|general protection fault|Kernel panic|Call Trace'

# klog_reports FILE: print each report, separated by lines "@@@".  A report
# runs from its first line until "---[ end trace", a "=====" line (KASAN,
# UBSAN), a blank line or 60 lines;
# matching lines inside a report (its "Call Trace:") do not start another.
klog_reports() {
	awk -v pat="$KLOG_PATTERN" '
	function close_report() { if (open) print "@@@"; open = 0 }
	open && (/---\[ end trace/ || /^(\[[^]]*\] *)?=====+$/ || /^[ \t]*$/ || ++len > 60) {
		print; close_report(); next
	}
	open { print; next }
	$0 ~ pat { open = 1; len = 0; print }
	END { close_report() }
	' "$1"
}

# check_kernel_log SCRATCH NAME: count the reports in a VM's kernel log as
# check NAME.
check_kernel_log() {
	local scratch=$1 name=$2 log=$1/dmesg n=0 report='' line
	[[ -s $log ]] || { log=$scratch/console.log; warn "test: no dmesg saved, scanning the console log"; }
	if [[ ! -s $log ]]; then
		record "$name" 0 1 0
		return
	fi
	while IFS= read -r line; do
		if [[ $line == @@@ ]]; then
			n=$((n + 1))
			printf '  FAIL %s: report %d:\n%s\n' "$name" "$n" "$report"
			report=
		else
			report+="       | $line"$'\n'
		fi
	done < <(klog_reports "$log")
	if ((n)); then
		record "$name" 0 "$n" 0
	else
		record "$name" 1 0 0
	fi
}

# --- checkpatch ------------------------------------------------------------

check_checkpatch() {
	local dir=$1 patch out ignore=()
	# The series lists its new files in MAINTAINERS in its last patch; the
	# earlier patches would each get "does MAINTAINERS need updating?".
	if grep -lq '^+++ b/MAINTAINERS' "$dir"/[0-9]*.patch 2>/dev/null; then
		ignore=(--ignore FILE_PATH_CHANGES)
	fi
	for patch in "$dir"/[0-9]*.patch; do
		[[ $patch == */0000-cover-letter.patch ]] && continue
		# Debian's python3 first: scripts/spdxcheck.py needs its ply and git.
		if out=$(cd "$TREE" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --color=never \
			"${ignore[@]}" "$patch" 2>&1); then
			record checkpatch 1 0 0
		else
			printf '  FAIL checkpatch: %s\n' "$(basename "$patch")"
			printf '%s\n' "$out" | sed 's/^/       | /'
			record checkpatch 0 1 0
		fi
	done
	[[ -v CHECK_PASS[checkpatch] ]] || record checkpatch 0 1 0
}

# --- Compiler and sparse warnings ---------------------------------------------

# The series' C files in the kernel, checked with W=1 and sparse.
WARN_CHECK_OBJS=(kernel/trace/trace_events_user)

# check_warnings: no W=1 or sparse warning in our kernel files.  W=1 builds
# the .s (not the .o), and C=2 runs sparse on the existing .o, so neither
# makes the next incremental build recompile anything.
check_warnings() {
	local obj out
	for obj in "${WARN_CHECK_OBJS[@]}"; do
		if out=$(kmake -s W=1 "$obj.s" 2>&1 && kmake -s C=2 "$obj.o" 2>&1) &&
			! grep -q -E 'warning:|error:' <<<"$out"; then
			record warnings 1 0 0
		else
			printf '  FAIL warnings: %s.c (W=1, sparse)\n' "$obj"
			printf '%s\n' "$out" | sed 's/^/       | /'
			record warnings 0 1 0
		fi
	done
}

# --- Main -----------------------------------------------------------------

# test_summary: per-check table, then the final count line.
test_summary() {
	local name tp=0 tf=0 ts=0
	echo
	echo "=== Summary ==="
	for name in "${CHECK_ORDER[@]}"; do
		printf '  %-18s pass %4d   fail %4d   skip %4d\n' "$name" \
			"${CHECK_PASS[$name]}" "${CHECK_FAIL[$name]}" "${CHECK_SKIP[$name]}"
		tp=$((tp + CHECK_PASS[$name])) tf=$((tf + CHECK_FAIL[$name]))
		ts=$((ts + CHECK_SKIP[$name]))
	done
	((ts == 0)) || echo "  ($ts skipped)"
	echo "$tp passed, $tf failed"
	((tf == 0 && tp > 0))
}

# check_prefix: what the current flavour's check names start with.
check_prefix() {
	[[ -z $UE_FLAVOUR ]] || printf '%s:\n' "$UE_FLAVOUR"
}

# test_build: build the current flavour; a failure is one failed check
# "build" (the other flavours and the patches are still checked).  The
# build runs as its own process so that "set -e" holds inside it.
test_build() {
	UE_LOCK_HELD=1 "$HARNESS_DIR/ue" build && return 0
	echo "  FAIL $(check_prefix)build: see the errors above and $BUILD_LOG"
	record "$(check_prefix)build" 0 1 0
	return 1
}

# test_vm_timeout: the seconds a test VM of the current flavour may take.
test_vm_timeout() {
	printf '%s\n' "${UE_TEST_TIMEOUT:-${FLAVOUR_TEST_TIMEOUT[$(flavour_name)]:-900}}"
}

# short_list MAX ITEM...: the first MAX items, comma-separated, and how many
# more there are.
short_list() {
	local max=$1 out
	shift
	out=$(printf '%s, ' "${@:1:max}")
	out=${out%, }
	(($# <= max)) || out+=" (+$(($# - max)) more)"
	printf '%s\n' "$out"
}

# vm_selftests TESTS: boot $BZIMAGE and run the kselftest programs TESTS
# of $KSFT_DIR (empty: all) and the kmemleak check.  Sets VM_SCRATCH,
# VM_RC (0: the VM completed), VM_PASS (passed test cases) and VM_FAILS:
# a VM that did not complete, the first line of each kernel log report,
# the failed test cases.  For mutants and build-each.
vm_selftests() {
	# Seen by the guest checks: scratch_cmd exports every UE_* variable.
	# shellcheck disable=SC2034
	local UE_KSELFTEST_DIR=$KSFT_DIR UE_KSELFTEST_TESTS=$1
	local UE_GUEST_CHECKS="50-kselftest 60-kmemleak"
	local scratch vmrc=0 check kind desc line klog first=1
	scratch=$(scratch_new)
	scratch_cmd "$scratch" run "$HARNESS_DIR/checks/guest-run"
	# The output is in $scratch/output; only the harness's messages show.
	vm_boot "$scratch" run "$(test_vm_timeout)" > /dev/null || vmrc=$?
	VM_SCRATCH=$scratch VM_RC=$vmrc VM_PASS=0 VM_FAILS=()
	((vmrc == 0)) || VM_FAILS+=("vm: did not complete (status $vmrc)")

	klog=$scratch/dmesg
	[[ -s $klog ]] || klog=$scratch/console.log
	if [[ -s $klog ]]; then
		while IFS= read -r line; do
			if [[ $line == @@@ ]]; then
				first=1
			elif ((first)); then
				first=0
				line=${line#\[*\] }       # the timestamp
				VM_FAILS+=("kernel-log: ${line:0:70}")
			fi
		done < <(klog_reports "$klog")
	fi

	for check in $UE_GUEST_CHECKS; do
		if [[ ! -f $scratch/checks/$check.tap ]]; then
			# A VM that died took the results with it: said above
			((vmrc)) || VM_FAILS+=("$check: no results")
			continue
		fi
		while IFS=$'\t' read -r kind desc; do
			case $kind in
			PASS) VM_PASS=$((VM_PASS + 1)) ;;
			FAIL) VM_FAILS+=("$desc") ;;
			esac
		done < <(tap_count "$scratch/checks/$check.tap")
	done
}

# test_in_vm: boot the current flavour once, run harness/checks/guest-run,
# count its results and the kernel log.
test_in_vm() {
	local scratch vmrc=0 check name prefix flavour
	local timeout
	timeout=$(test_vm_timeout)
	# Seen by the guest (scratch_cmd passes every UE_ variable).
	local UE_KSELFTEST_TIMEOUT=${UE_KSELFTEST_TIMEOUT:-${FLAVOUR_KSELFTEST_TIMEOUT[$(flavour_name)]:-}}
	flavour=$(flavour_name) prefix=$(check_prefix)
	lock_cache shared           # let others boot, not rebuild, meanwhile
	scratch=$(scratch_new)
	scratch_cmd "$scratch" run "$HARNESS_DIR/checks/guest-run"
	log "test: running the checks in the $flavour kernel (timeout ${timeout}s)"
	vm_boot "$scratch" run "$timeout" || vmrc=$?

	echo
	echo "=== Results of the $flavour kernel (run directory: $scratch) ==="
	if ((vmrc == 124)); then
		printf '  FAIL %svm: the test VM was stopped after its timeout of %ds\n' "$prefix" "$timeout"
		record "${prefix}vm" 0 1 0
	elif ((vmrc)); then
		printf '  FAIL %svm: the test VM did not complete (status %d)\n' "$prefix" "$vmrc"
		record "${prefix}vm" 0 1 0
	fi
	for check in "$HARNESS_DIR"/checks/guest/*.sh; do
		name=$(basename "$check" .sh)
		check_tap "$prefix${name#[0-9][0-9]-}" "$scratch/checks/$name.tap"
	done
	check_kernel_log "$scratch" "${prefix}kernel-log"
}

cmd_test() {
	local t0 f first=1 host flavours=() built=()
	while (($#)); do
		case $1 in
		--flavour) (($# > 1)) || die "test: --flavour needs a name"; flavours+=("$2"); shift 2 ;;
		--flavour=*) flavours+=("${1#*=}"); shift ;;
		*) die "test: unknown argument '$1' (see harness/ue help)" ;;
		esac
	done
	((${#flavours[@]})) || flavours=("$UE_FLAVOURS")
	# Names may be separated by spaces or commas.
	read -ra flavours <<<"$(printf '%s ' "${flavours[@]}" | tr ',' ' ')"
	((${#flavours[@]})) || die "test: no kernel flavour to test"
	for f in "${flavours[@]}"; do
		flavour_use "$f"            # dies on an unknown flavour
	done
	t0=$(now)
	once cmd_deps
	# The patch files, once.
	check_patch_files
	# Every kernel is built before any VM boots: the builds hold the cache
	# lock exclusively, the VMs only share it.
	for f in "${flavours[@]}"; do
		flavour_use "$f"
		test_build || continue
		built+=("$f")
		# Compiler and sparse warnings and the installed UAPI header
		# (harness/lib/headerabi.sh), once: with the first kernel built.
		if ((first)); then
			check_warnings
			check_headers
			first=0
		fi
	done
	for f in "${built[@]}"; do
		flavour_use "$f"
		test_in_vm
	done
	log "test: done in $(($(now) - t0))s"
	# Recorded for the cover letter, which is rewritten with it.  The
	# checks of the patch files go with the plain kernel's results, or
	# with the first flavour's when the plain kernel was not tested.
	host=${flavours[0]}
	[[ " ${flavours[*]} " != *" plain "* ]] || host=plain
	for f in "${flavours[@]}"; do
		flavour_use "$f"
		test_result_save "$(($(now) - t0))" "$([[ $f == "$host" ]] && echo 1 || echo 0)"
	done
	if [[ -n $(sender_ident) ]]; then
		cmd_series "$SERIES_OUT"
	else
		warn "test: no git identity to sign the series off with: $SERIES_OUT not rewritten ('harness/ue series' writes it with these results)"
	fi
	test_summary
}
