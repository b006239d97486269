# shellcheck shell=bash
# harness/ue fixes [OUTDIR]: the fixes of the tracing core at the front of
# the series, as a series of their own against the pristine base, the way
# they would go to the tracing maintainers; and proof that each ftracetest
# case they add fails without them and passes with them.
#
# The fixes are the leading commits of branch "series" up to the last one
# whose message has a Fixes: or Cc: stable tag; branch "fixes" points
# there.  Their patch files, with a cover letter
# (bases/BASE/series/fixes-cover-letter.txt or harness/series/'s), go to
# OUTDIR (default $UE_CACHE/fixes/series), from the sender's identity as
# "harness/ue series" writes them.  Then two kernels are built from worktrees
# of $TREE ($FIX_DIR/src-base, src-fixes: the base, and the base with the
# fixes) with the test kernel's options that the base has, and each boots to
# run the ftracetest cases of the fixes, from the fixes' tree: each must fail
# (or crash the kernel: each boots on its own there) in the first and pass in
# the second.  Ends with "N passed, N failed", one count per case and
# kernel.  Slow (two kernel builds); not part of test.

# fixes_tip: the last commit of the series that the fixes at its front end
# with; dies when there is none.
fixes_tip() {
	local c tip=
	for c in $(tgit rev-list --reverse base..series); do
		if tgit log -1 --format=%B "$c" | grep -qE '^(Fixes: |Cc: stable@)'; then
			tip=$c
		fi
	done
	[[ -n $tip ]] || die "fixes: no commit of the series has a Fixes: or Cc: stable tag"
	printf '%s\n' "$tip"
}

# fixes_config_fragment OUT: the test kernel's options, without those the
# base tree does not have (the samples the series adds), in the file OUT.
fixes_config_fragment() {
	grep -hv '^CONFIG_SAMPLE' "${VM_FRAGMENTS[@]}" "$REPO_DIR/Kconfig.fragment" \
		"$REPO_DIR/$KSFT_CONFIG" > "$1"
}

# fixes_kernel NAME COMMIT: build the kernel of COMMIT in $FIX_DIR/build-NAME
# from the worktree $FIX_DIR/src-NAME.
fixes_kernel() {
	local name=$1 commit=$2
	worktree_at "$FIX_DIR/src-$name" "$commit"
	# shellcheck disable=SC2034 # used by the config and build helpers
	local TREE=$FIX_DIR/src-$name BUILD_DIR=$FIX_DIR/build-$name \
		BUILD_LOG=$FIX_LOG CONFIG_LOG=$FIX_LOG UE_FLAVOUR=
	local -a VM_FRAGMENTS=("$FIX_DIR/fixes.config")
	KSFT_CONFIG=/nonexistent REPO_DIR=$FIX_DIR/norepo config_make
	build_kernel
}

# fixes_run NAME TREE [CASE...]: boot kernel NAME and run the fixes'
# ftracetest cases (or those named) from TREE; prints "CASE<TAB>ok|not ok"
# lines, and "CASE<TAB>crashed" for the one a crash stopped.
fixes_run() {
	local name=$1 tree=$2 scratch tap
	shift 2
	# Seen by the guest check: scratch_cmd exports every UE_* variable
	# shellcheck disable=SC2034
	local UE_FTRACE_TREE=$tree UE_FTRACE_REF=fixes UE_FTRACE_CASES="$*" \
		UE_GUEST_CHECKS=45-ftracetest RUNS_DIR=$FIX_DIR/runs \
		BUILD_DIR=$FIX_DIR/build-$name BZIMAGE=$FIX_DIR/build-$name/arch/x86/boot/bzImage
	scratch=$(scratch_new)
	scratch_cmd "$scratch" run "$HARNESS_DIR/checks/guest-run"
	tap=$scratch/checks/45-ftracetest.tap
	if ! VM_SILENCE=$UE_TEST_SILENCE vm_boot "$scratch" run "$(test_vm_timeout)" > /dev/null; then
		warn "fixes: the $name kernel's VM did not complete (run: $scratch)"
		tap=$tap.tmp
		(($# == 1)) && printf '%s\tcrashed\n' "$1"
	fi
	sed -n 's/^\(not ok\|ok\) [0-9]* ftracetest: \(.*\)$/\2\t\1/p' "$tap" 2>/dev/null
}

cmd_fixes() {
	local out=${1:-$FIX_DIR/series} tip ident=() c k r pass=0 fail=0 rows=() cases=()
	local -A before=() after=()
	once cmd_apply
	tip=$(fixes_tip)
	tgit update-ref -m "harness fixes" refs/heads/fixes "$tip"
	log "fixes: $(tgit rev-list --count "base..$tip") commits, base..$(tgit log -1 --format='%h ("%s")' "$tip")"
	mkdir -p "$FIX_DIR" "$FIX_DIR/norepo"

	mapfile -t ident < <(sender_ident)
	if ((${#ident[@]} == 2)); then
		# shellcheck disable=SC2034 # the template cover_fill uses
		local COVER_TEMPLATE SERIES_RANGE=base..fixes
		COVER_TEMPLATE=$(base_file "$HARNESS_DIR/series/fixes-cover-letter.txt")
		[[ -n $COVER_TEMPLATE ]] || die "fixes: no fixes-cover-letter.txt"
		series_write "$out" "${ident[@]}"
	else
		warn "fixes: no git identity to sign the patches off with: no patch files written"
	fi

	fixes_config_fragment "$FIX_DIR/fixes.config"
	lock_cache shared
	log "fixes: building the base and the base with the fixes (log: $FIX_LOG)"
	fixes_kernel base base
	fixes_kernel fixes "$tip"
	mapfile -t cases < <(git -C "$FIX_DIR/src-fixes" diff --name-only --diff-filter=A \
		base fixes -- 'tools/testing/selftests/ftrace/*.tc' |
		sed 's|^tools/testing/selftests/ftrace/test.d/||')
	# Without the fixes, a case may crash the kernel: one boot each
	for c in "${cases[@]}"; do
		while IFS=$'\t' read -r k r; do before[$k]=$r; done \
			< <(fixes_run base "$FIX_DIR/src-fixes" "$c")
	done
	while IFS=$'\t' read -r k r; do after[$k]=$r; done < <(fixes_run fixes "$FIX_DIR/src-fixes")

	echo
	echo "=== The fixes' ftracetest cases, without and with the fixes ==="
	for c in "${cases[@]}"; do
		if [[ ${before[$c]:-none} == "not ok" || ${before[$c]:-none} == crashed ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			printf '  FAIL %s: %s without the fixes (must fail)\n' "$c" "${before[$c]:-no result}"
		fi
		if [[ ${after[$c]:-none} == ok ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			printf '  FAIL %s: %s with the fixes\n' "$c" "${after[$c]:-no result}"
		fi
		rows+=("| $c | ${before[$c]:-no result} | ${after[$c]:-no result} |")
	done
	{
		printf '# harness/ue fixes, %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'Base %s %s, fixes base..%s.\n\n' "$SRC_PKG" "$(tree_version)" \
			"$(tgit log -1 --format=%h "$tip")"
		echo '| ftracetest case | without the fixes | with the fixes |'
		echo '|---|---|---|'
		printf '%s\n' "${rows[@]}"
	} > "$FIX_RESULT"
	cat "$FIX_RESULT"
	echo
	echo "$pass passed, $fail failed"
	((fail == 0))
}
