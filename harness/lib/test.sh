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

# The kernels "test" builds and boots, in this order (--flavour overrides):
# FLAVOUR on the base of the command line, FLAVOUR@BASE on BASE.  Both
# flavours of one base by default: a second base does not fit into the
# time bound of a cold run (README.md, "Two base trees").
UE_FLAVOURS=${UE_FLAVOURS:-${UE_FLAVOUR:-plain debug}}

# The bounds of a test VM only catch hangs, on any machine of this kind
# and slower: none is sized on a run's time (RESULTS.md, "The test
# command on a slower machine").  A VM that printed nothing for
# UE_TEST_SILENCE seconds is stopped as hung (a slow one keeps printing,
# and the longest TEST_F_TIMEOUT of a case is shorter); the seconds a
# test VM may take in all (UE_TEST_TIMEOUT) are a last resort, and the
# kselftest runner's per-program timeout (UE_KSELFTEST_TIMEOUT) as well:
# the plain kernel keeps the selftests' own settings file (600).  Each
# variable, when set, applies to every flavour.
UE_TEST_SILENCE=${UE_TEST_SILENCE:-1200}
declare -A FLAVOUR_TEST_TIMEOUT=([plain]=3600 [debug]=5400)
declare -A FLAVOUR_KSELFTEST_TIMEOUT=([debug]=3600)

# Results, per check, in the order checks were recorded.
declare -a CHECK_ORDER=()
declare -A CHECK_PASS=() CHECK_FAIL=() CHECK_SKIP=()

# record NAME PASS FAIL SKIP: add to a check's counts.  In a job run in
# the background (RECORD_TO set), the counts go to the file RECORD_TO, for
# record_replay to add once the job is done.
record() {
	local name=$1
	if [[ -n ${RECORD_TO:-} ]]; then
		printf '%s\t%s\t%s\t%s\n' "$@" >> "$RECORD_TO"
		return
	fi
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

# record_replay FILE: add the counts a background job recorded.
record_replay() {
	local name p f s
	[[ -f $1 ]] || return 0
	while IFS=$'\t' read -r name p f s; do
		record "$name" "$p" "$f" "$s"
	done < "$1"
}

# check_tap NAME FILE [EMPTY_OK]: count a TAP file as check NAME, printing
# failures.  A check the VM stopped in (guest-run's FILE.tmp is left) counts
# what it reported, and one failure showing where it stopped.  A file
# without any result is a failure, unless EMPTY_OK is 1 (a VM that found
# nothing left to do in a queue it shared with others).
check_tap() {
	local name=$1 file=$2 empty_ok=${3:-0} p=0 f=0 s=0 kind desc
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
	if ((p + f + s == 0 && !empty_ok)); then
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
	local dir=$1 patch out n=0
	# The base tree is Debian's source tarball, imported as one commit:
	# the upstream commits that Fixes: tags name cannot be looked up in
	# it (the tags' format is still checked), nor found for the fixes
	# whose tag would need them: checkpatch of 6.12 asks for a Fixes:
	# beside each Cc: stable (MISSING_FIXES_TAG), and a guessed commit
	# would be worse than none.
	local ignore=(--ignore UNKNOWN_COMMIT_ID --ignore MISSING_FIXES_TAG)
	# The series lists its new files in MAINTAINERS in its last patch; the
	# earlier patches would each get "does MAINTAINERS need updating?".
	if grep -lq '^+++ b/MAINTAINERS' "$dir"/[0-9]*.patch 2>/dev/null; then
		ignore+=(--ignore FILE_PATH_CHANGES)
	fi
	for patch in "$dir"/[0-9]*.patch; do
		[[ $patch == */0000-cover-letter.patch ]] && continue
		n=$((n + 1))
		# Debian's python3 first: scripts/spdxcheck.py needs its ply and git.
		if out=$(cd "$TREE" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --color=never \
			"${ignore[@]}" "$patch" 2>&1); then
			record "$(base_prefix)checkpatch" 1 0 0
		else
			printf '  FAIL %scheckpatch: %s\n' "$(base_prefix)" "$(basename "$patch")"
			printf '%s\n' "$out" | sed 's/^/       | /'
			record "$(base_prefix)checkpatch" 0 1 0
		fi
	done
	# No patch at all is a failure.  (Counted here: in the background,
	# record writes to RECORD_TO, not to CHECK_PASS.)
	((n)) || record "$(base_prefix)checkpatch" 0 1 0
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
			record "$(base_prefix)warnings" 1 0 0
		else
			printf '  FAIL %swarnings: %s.c (W=1, sparse)\n' "$(base_prefix)" "$obj"
			printf '%s\n' "$out" | sed 's/^/       | /'
			record "$(base_prefix)warnings" 0 1 0
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
		printf '  %-26s pass %4d   fail %4d   skip %4d\n' "$name" \
			"${CHECK_PASS[$name]}" "${CHECK_FAIL[$name]}" "${CHECK_SKIP[$name]}"
		tp=$((tp + CHECK_PASS[$name])) tf=$((tf + CHECK_FAIL[$name]))
		ts=$((ts + CHECK_SKIP[$name]))
	done
	((ts == 0)) || echo "  ($ts skipped)"
	echo "$tp passed, $tf failed"
	((tf == 0 && tp > 0))
}

# check_prefix: what the check names of the current base and flavour start
# with: "BASE:" on a base other than 6.1, then "FLAVOUR:" for a flavour
# other than plain.
check_prefix() {
	printf '%s%s\n' "$(base_prefix)" "${UE_FLAVOUR:+$UE_FLAVOUR:}"
}

# base_suffix: " BASE" on a base other than 6.1, for phase names.
base_suffix() {
	local b
	b=$(base_prefix)
	printf '%s\n' "${b:+ ${b%:}}"
}

# kernel_use KERNEL: make KERNEL of the test's list the kernel the
# following steps work on: a flavour of the base the command line named
# (TEST_BASE), or FLAVOUR@BASE.
kernel_use() {
	local base=$TEST_BASE
	[[ $1 != *@* ]] || base=${1#*@}
	[[ $base == "$UE_BASE" ]] || base_use "$base"
	flavour_use "${1%@*}"
}

# kernel_name: the current kernel as kernel_use takes it, FLAVOUR@BASE.
kernel_name() { printf '%s@%s\n' "$(flavour_name)" "$UE_BASE"; }

# vm_name: what names the current kernel's VMs (and its phases): the check
# prefix without the last colon ("plain" for the plain kernel of 6.1).
vm_name() {
	local name
	name=$(check_prefix)
	name=${name%:}
	[[ -z $UE_FLAVOUR ]] && name+=${name:+:}plain
	printf '%s\n' "$name"
}

# test_build [--nice] [--kernel-only]: build the current flavour (only its
# kernel with --kernel-only: the headers, selftests and samples are the
# same for every flavour), at the lowest CPU priority with --nice; a
# failure is one failed check "build" (the other flavours and the patches
# are still checked).  The build runs as its own process so that "set -e"
# holds inside it.
test_build() {
	local nice=()
	[[ ${1:-} != --nice ]] || { nice=(nice -n 19); shift; }
	UE_LOCK_HELD=1 "${nice[@]}" "$HARNESS_DIR/ue" build "$@" && return 0
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
	# Every case, in the debug kernel too: a mutant names the cases that
	# must fail
	# shellcheck disable=SC2034
	local UE_DEBUG_SKIP=
	local UE_GUEST_CHECKS="50-kselftest 60-kmemleak"
	local scratch vmrc=0 check kind desc line klog first=1
	scratch=$(scratch_new)
	scratch_cmd "$scratch" run "$HARNESS_DIR/checks/guest-run"
	# The output is in $scratch/output; only the harness's messages show.
	VM_SILENCE=$UE_TEST_SILENCE vm_boot "$scratch" run "$(test_vm_timeout)" > /dev/null || vmrc=$?
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

# The test VMs a flavour's checks are shared by, booted side by side:
# 50-kselftest of each takes the next program from a queue they share
# (harness/checks/guest-run).  The debug kernel's checks take over twice
# as long as its build, run mostly on one vCPU and so leave a host core
# idle: two VMs do them in about half the time (RESULTS.md, Test run
# timings).  UE_VM_LANES, when set, applies to every flavour.
declare -A FLAVOUR_VM_LANES=([debug]=2)

test_vm_lanes() {
	printf '%s\n' "${UE_VM_LANES:-${FLAVOUR_VM_LANES[$(flavour_name)]:-1}}"
}

# Each VM of the current test: its scratch directory, in start order, and
# its kernel (kernel_name).
declare -a TEST_VMS=() TEST_VM_PIDS=()
declare -A TEST_VM_KERNEL=()

# lane_runs_check SCRIPT LANE: does the guest check SCRIPT run in VM LANE
# of the current flavour and base (guest-run's rules)?
lane_runs_check() {
	local flavours bases
	flavours=$(sed -n 's/^# flavours: //p' "$1")
	[[ -z $flavours || " $flavours " == *" $(flavour_name) "* ]] || return 1
	bases=$(sed -n 's/^# bases: //p' "$1")
	[[ -z $bases || " $bases " == *" $UE_BASE "* ]] || return 1
	(($2 == 1)) || grep -qx '# lanes: all' "$1"
}

# test_vms_start [--hold]: boot the test VMs of the current flavour in the
# background, each running harness/checks/guest-run; their output is
# shown as it comes, each line headed by the VM's name.  With --hold, the
# next build runs beside them: they hold back the selftest programs that
# time the kernel (harness/checks/kselftest-order) until test_vms_quiet.
test_vms_start() {
	local hold=0
	[[ ${1:-} != --hold ]] || hold=1
	local flavour lanes lane scratch name timeout shared=
	# Seen by the guest (scratch_cmd passes every UE_ variable).
	local UE_KSELFTEST_TIMEOUT=${UE_KSELFTEST_TIMEOUT:-${FLAVOUR_KSELFTEST_TIMEOUT[$(flavour_name)]:-}}
	local UE_LANES UE_LANE VM_SHARED=
	flavour=$(vm_name) lanes=$(test_vm_lanes) timeout=$(test_vm_timeout)
	UE_LANES=$lanes
	need_kernel
	initramfs_build             # once, before the VMs look at it
	for ((lane = 1; lane <= lanes; lane++)); do
		scratch=$(scratch_new)
		if ((lanes > 1 && lane == 1)); then
			shared=$scratch/vm-shared
			mkdir -p "$shared"
		fi
		VM_SHARED=$shared UE_LANE=$lane
		name=$flavour$( ((lanes == 1)) || echo "#$lane")
		printf '%s\n' "$name" > "$scratch/vm-name"
		printf '%s\n' "$lane" > "$scratch/vm-lane"
		((!hold)) || : > "$scratch/hold"
		scratch_cmd "$scratch" run "$HARNESS_DIR/checks/guest-run"
		log "test: running the checks in the $name kernel VM (timeout ${timeout}s, scratch $scratch)"
		(
			# shellcheck disable=SC2034 # read by vm_boot
			rc=0 t0=$(now) VM_SILENCE=$UE_TEST_SILENCE
			vm_boot "$scratch" run "$timeout" || rc=$?
			printf '%s %s %s\n' "$rc" "$t0" "$(now)" > "$scratch/vm-result"
		) 2>&1 | sed -u "s/^/[$name] /" &
		TEST_VM_PIDS+=("$!")
		TEST_VMS+=("$scratch")
		TEST_VM_KERNEL[$scratch]=$(kernel_name)
	done
}

# test_vms_quiet: tell the VMs started that nothing runs beside them any
# more: the programs they held back may run (guest/50-kselftest.sh).
test_vms_quiet() {
	local scratch
	for scratch in "${TEST_VMS[@]}"; do
		: > "$scratch/quiet"
	done
}

# test_vms_wait: wait for the VMs started, count the results of each
# (the current kernel stays).
test_vms_wait() {
	local scratch rc t0 t1 name kernel
	kernel=$(kernel_name)
	wait "${TEST_VM_PIDS[@]}" || true
	for scratch in "${TEST_VMS[@]}"; do
		kernel_use "${TEST_VM_KERNEL[$scratch]}"
		name=$(<"$scratch/vm-name")
		rc=125 t0=$(now) t1=$t0
		[[ ! -f $scratch/vm-result ]] || read -r rc t0 t1 < "$scratch/vm-result"
		phase_add "VM $name" "$t0" "$t1"
		test_vm_count "$scratch" "$rc"
	done
	TEST_VMS=() TEST_VM_PIDS=()
	test_kselftest_empty_check
	kernel_use "$kernel"
}

# test_vm_count SCRATCH STATUS: count the results of the test VM that ran
# in SCRATCH and ended with STATUS (vm_boot's), and its phase times.
test_vm_count() {
	local scratch=$1 vmrc=$2 check name prefix lane timeout
	prefix=$(check_prefix) lane=$(<"$scratch/vm-lane") timeout=$(test_vm_timeout)
	echo
	echo "=== Results of the $(<"$scratch/vm-name") kernel VM (run directory: $scratch) ==="
	if ((vmrc == 124)); then
		printf '  FAIL %svm: the test VM was stopped after its timeout of %ds\n' "$prefix" "$timeout"
		record "${prefix}vm" 0 1 0
	elif ((vmrc)); then
		printf '  FAIL %svm: the test VM did not complete (status %d)\n' "$prefix" "$vmrc"
		record "${prefix}vm" 0 1 0
	fi
	for check in "$HARNESS_DIR"/checks/guest/*.sh; do
		lane_runs_check "$check" "$lane" || continue
		name=$(basename "$check" .sh)
		# The VMs of a flavour share its selftests: one may get none.
		check_tap "$prefix${name#[0-9][0-9]-}" "$scratch/checks/$name.tap" \
			"$([[ $name == 50-kselftest && -f $scratch/shared ]] && echo 1 || echo 0)"
	done
	check_kernel_log "$scratch" "${prefix}kernel-log"
	test_vm_phases "$scratch"
}

# test_kselftest_empty_check: the VMs that shared a queue of selftests
# ran at least one of them between them.
test_kselftest_empty_check() {
	local name
	for name in "${CHECK_ORDER[@]}"; do
		[[ $name == *kselftest ]] || continue
		((CHECK_PASS[$name] + CHECK_FAIL[$name] + CHECK_SKIP[$name])) && continue
		printf '  FAIL %s: no selftest ran in any VM\n' "$name"
		record "$name" 0 1 0
	done
}

# test_vm_phases SCRATCH: the time of each guest check and each selftest
# program of the VM, as phases "VM NAME: CHECK".
test_vm_phases() {
	local scratch=$1 name vm t0 t1 prog secs ms
	vm=$(<"$scratch/vm-name")
	for name in "$scratch"/checks/*.time; do
		[[ -f $name ]] || continue
		read -r t0 t1 < "$name"
		phase_add "VM $vm: $(basename "$name" .time)" "$t0" "$t1"
	done
	if [[ -f $scratch/checks/50-kselftest.cases ]]; then
		while read -r prog name ms; do
			KSELFTEST_CASES+=("$ms ${vm%#*} $prog $name")
		done < "$scratch/checks/50-kselftest.cases"
	fi
	[[ -f $scratch/checks/50-kselftest.tap ]] || return 0
	while read -r prog secs; do
		KSELFTEST_SECS[$vm $prog]=$secs
		KSELFTEST_PROGS[$prog]=1
	done < <(sed -n 's/^# ue-time: //p' "$scratch/checks/50-kselftest.tap")
}

# Seconds each selftest program took, by "VM PROGRAM".
declare -A KSELFTEST_SECS=() KSELFTEST_PROGS=()
# Each test case that ended: "MS FLAVOUR PROGRAM CASE".
declare -a KSELFTEST_CASES=()

# kselftest_slowest_cases N: the N slowest test cases of each flavour, as a
# Markdown table: what a slower machine must give the cases' timeouts
# (the shared header's TEST_TIMEOUT_DEFAULT, and each TEST_F_TIMEOUT).
kselftest_slowest_cases() {
	((${#KSELFTEST_CASES[@]})) || return 0
	printf '| flavour | program | test case | seconds |\n|---|---|---|--:|\n'
	printf '%s\n' "${KSELFTEST_CASES[@]}" | sort -k2,2 -k1,1nr |
		awk -v n="$1" '++seen[$2] <= n {
			printf "| %s | %s | %s | %.1f |\n", $2, $3, $4, $1 / 1000 }'
}

# kselftest_table: the seconds of each selftest program in each flavour
# (the VMs of a flavour merged), as a Markdown table.
kselftest_table() {
	local prog key f flavours=() row
	for key in "${!KSELFTEST_SECS[@]}"; do
		f=${key%% *} f=${f%#*}
		[[ " ${flavours[*]} " == *" $f "* ]] || flavours+=("$f")
	done
	((${#flavours[@]})) || return 0
	printf '| program |%s\n|---|%s\n' "$(printf ' %s |' "${flavours[@]}")" \
		"$(printf -- '--:|%.0s' "${flavours[@]}")"
	for prog in $(printf '%s\n' "${!KSELFTEST_PROGS[@]}" | sort); do
		row="| $prog |"
		for f in "${flavours[@]}"; do
			row+=" $(kselftest_secs "$f" "$prog") |"
		done
		printf '%s\n' "$row"
	done
}

# kselftest_secs FLAVOUR PROGRAM: "M:SS (VM n)" or "-"
kselftest_secs() {
	local key
	for key in "${!KSELFTEST_SECS[@]}"; do
		[[ ${key#* } == "$2" ]] || continue
		[[ ${key%% *} == "$1" || ${key%% *} == "$1#"* ]] || continue
		key=${key%% *}
		printf '%s%s\n' "$(mmss "${KSELFTEST_SECS[$key $2]}")" \
			"$([[ $key != *#* ]] || echo " (VM ${key#*#})")"
		return
	done
	echo -
}

# test_phase_report: the phase times of this run, printed and saved to
# $UE_CACHE/last-test-phases.md.
test_phase_report() {
	local file=$UE_CACHE/last-test-phases.md
	{
		printf '%s, %s, series tree %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" \
			"$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" \
			"$(tgit rev-parse --short 'series^{tree}' 2>/dev/null || echo '?')"
		phase_table
		echo
		kselftest_table
		echo
		kselftest_slowest_cases 10
	} > "$file"
	echo
	echo "=== Phase times (also in $file) ==="
	sed 's/^/  /' "$file"
}

# test_bg_checks_start: the checks of the current base's patch files (git
# am, htmldocs, checkpatch: one CPU, a minute or two), in the background
# beside the next build, at a lower priority than the build.
declare -a BG_CHECKS_DIRS=()
test_bg_checks_start() {
	local dir
	dir=$(mktemp -d)
	BG_CHECKS_DIRS+=("$dir")
	printf '%s\n' "$(base_prefix)" > "$dir/prefix"
	(
		trap - INT TERM
		renice -n 10 -p "$BASHPID" > /dev/null 2>&1 || true
		t0=$(now)
		RECORD_TO=$dir/records check_patch_files > "$dir/output" 2>&1 || true
		printf '%s %s\n' "$t0" "$(now)" > "$dir/time"
	) &
	printf '%s\n' "$!" > "$dir/pid"
}

# test_bg_checks_wait: wait for the checks started, show their output,
# count them.
test_bg_checks_wait() {
	local dir t0 t1 prefix
	for dir in "${BG_CHECKS_DIRS[@]}"; do
		wait "$(<"$dir/pid")" || true
		prefix=$(<"$dir/prefix")
		echo
		echo "=== Checks of the ${prefix:+${prefix%:} }patch files ==="
		cat "$dir/output"
		record_replay "$dir/records"
		if [[ -f $dir/time ]]; then
			read -r t0 t1 < "$dir/time"
			phase_add "${prefix:+${prefix%:} }patch files: git am, htmldocs, checkpatch" "$t0" "$t1"
		fi
		rm -rf "$dir"
	done
	BG_CHECKS_DIRS=()
}

# test_base_prepare: the current base's packages, tree and series, then the
# checks of its patch files started in the background.
test_base_prepare() {
	local b
	b=$(base_suffix)
	phase "packages$b" once cmd_deps
	phase "tree$b" once cmd_tree
	phase "series$b" once cmd_apply
	once_export
	test_bg_checks_start
}

# test_abort: Ctrl-C or TERM: take the background VMs and checks down.
test_abort() {
	local pids
	pids=$(jobs -p)
	[[ -z $pids ]] || kill $pids 2>/dev/null
	wait
	exit 130
}

# cmd_test: the steps overlap where they can on two cores:
#   packages, tree, series (of the first kernel's base)
#   build of the first kernel         | checks of its base's patch files
#   its VMs, but for their timing     | (the next kernel's base's packages,
#      programs (wait_test)           | tree, series and patch files, if
#                                     | another) build of the next kernel,
#                                     | niced (and the host checks, seconds)
#   those programs, alone             |
#   the VMs of the next kernel ...
# and end with the phase times and the summary.  A kernel's VMs keep a
# host core idle most of the time: the next build takes it.  Their timing
# cases want the host's CPUs to themselves (a build beside them, even at
# nice 19, made wait.big_forks fail): they wait for the build and the
# checks of the patch files to be done (test_vms_quiet).
cmd_test() {
	local k i built kernels=() bases=() args=()
	local -A prepared=() userland=() host=()
	while (($#)); do
		case $1 in
		--flavour) (($# > 1)) || die "test: --flavour needs a name"; kernels+=("$2"); shift 2 ;;
		--flavour=*) kernels+=("${1#*=}"); shift ;;
		# Another architecture: a run of its own (harness/lib/arch.sh)
		--arch) (($# > 1)) || die "test: --arch needs a name"; cmd_test_arch "$2"; return ;;
		--arch=*) cmd_test_arch "${1#*=}"; return ;;
		*) die "test: unknown argument '$1' (see harness/ue help)" ;;
		esac
	done
	((${#kernels[@]})) || kernels=("$UE_FLAVOURS")
	# Names may be separated by spaces or commas.
	read -ra kernels <<<"$(printf '%s ' "${kernels[@]}" | tr ',' ' ')"
	((${#kernels[@]})) || die "test: no kernel flavour to test"
	TEST_BASE=$UE_BASE
	for ((i = 0; i < ${#kernels[@]}; i++)); do
		kernel_use "${kernels[i]}"  # dies on an unknown flavour or base
		kernels[i]=$(kernel_name)
		[[ " ${bases[*]} " == *" $UE_BASE "* ]] || bases+=("$UE_BASE")
		# Each base's patch files' checks go with its plain kernel's
		# results, or with its first kernel's when its plain kernel is
		# not tested.
		[[ -v host[$UE_BASE] && -n $UE_FLAVOUR ]] || host[$UE_BASE]=${kernels[i]}
	done
	trap test_abort INT TERM
	for ((i = 0; i < ${#kernels[@]}; i++)); do
		kernel_use "${kernels[i]}"
		if [[ ! -v prepared[$UE_BASE] ]]; then
			test_base_prepare
			prepared[$UE_BASE]=1
		fi
		args=()
		# The headers, selftests and samples are the same for every
		# flavour of a base.
		[[ ! -v userland[$UE_BASE] ]] || args+=(--kernel-only)
		if ((${#TEST_VMS[@]})); then
			# Beside the previous kernel's VMs, below them
			built=1
			phase "build $(vm_name) (beside the VMs)" \
				test_build --nice "${args[@]}" || built=0
			test_bg_checks_wait
			test_vms_quiet
			phase "waiting for the VMs" test_vms_wait
			((built)) || continue
		else
			phase "build $(vm_name)" test_build "${args[@]}" || continue
		fi
		if ((i + 1 < ${#kernels[@]})); then
			test_vms_start --hold
		else
			test_vms_start
		fi
		# Compiler and sparse warnings and the installed UAPI header
		# (harness/lib/headerabi.sh), once per base: with its first
		# kernel built.
		if [[ ! -v userland[$UE_BASE] ]]; then
			phase "host checks$(base_suffix): warnings, headers" check_host
			userland[$UE_BASE]=1
		fi
	done
	# Built: others may boot, not rebuild, while the last VMs run.
	lock_cache shared
	((${#TEST_VMS[@]} == 0)) || test_vms_wait
	test_bg_checks_wait
	# Recorded for each base's cover letter, which is rewritten with it.
	for k in "${kernels[@]}"; do
		kernel_use "$k"
		test_result_save "$(($(now) - PHASE_T0))" "$([[ $k == "${host[$UE_BASE]}" ]] && echo 1 || echo 0)"
	done
	for k in "${bases[@]}"; do
		base_use "$k"
		if [[ -n $(sender_ident) ]]; then
			cmd_series "$SERIES_OUT"
		else
			warn "test: no git identity to sign the series off with: $SERIES_OUT not rewritten ('harness/ue series' writes it with these results)"
		fi
	done
	base_use "$TEST_BASE"
	log "test: done in $(($(now) - PHASE_T0))s"
	test_phase_report
	test_summary
}

# check_host: the host checks of a base's first kernel built.
check_host() {
	check_warnings
	check_headers
}
