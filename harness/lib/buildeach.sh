# shellcheck shell=bash
# harness/ue build-each: build every commit of the series, in order, so
# that each patch is known to compile on its own (bisectability).
#
# The commits are checked out one after the other in a worktree of $TREE
# ($UE_CACHE/build-each/src) and built in their own O= directory
# ($UE_CACHE/build-each/build): the main build is not touched, and each
# commit only rebuilds what it changed.
#
# The configuration is the test VM's (tinyconfig + harness/vm.config +
# Kconfig.fragment + the selftests' config, without UE_FLAVOUR or
# UE_EXTRA_CONFIG) plus CONFIG_COMPILE_TEST=y: before the last patch,
# USER_EVENTS still "depends on BROKEN || COMPILE_TEST", and BROKEN cannot
# be set, so COMPILE_TEST is the only way to compile the code of the
# earlier patches.  It is made once, at the series' last commit, and given
# to every commit through olddefconfig, so options that an earlier commit's
# Kconfig does not know yet (SAMPLE_USER_EVENTS) come back when they appear.
#
# Per commit: the kernel (vmlinux, which builds the sample when
# SAMPLE_USER_EVENTS is set) and headers_install; from the commit on that
# the series first changes samples/user_events/ the sample programs, from
# the one that first changes the selftests the user_events kselftests.
# A commit fails when a step fails, USER_EVENTS (or SAMPLE_USER_EVENTS,
# once its Kconfig entry exists) is not in its .config, or the compiler
# warns.  The result is recorded for the cover letter.

BE_DIR=$UE_CACHE/build-each
BE_SRC=$BE_DIR/src                   # worktree, one commit after the other
BE_OUT=$BE_DIR/build                 # kernel O= directory
BE_CONFIG=$BE_DIR/series.config      # the .config made at the last commit
BE_LOG=$LOG_DIR/build-each.log
BE_RESULT=$UE_CACHE/last-build-each-result

# be_make_config: $BE_CONFIG for the series' last commit (checked out in
# $BE_SRC), remade only when its inputs change.
be_make_config() {
	# The test configuration, made in our own tree and O= directory (the
	# config.sh functions see these through bash's dynamic scoping).
	# shellcheck disable=SC2034
	local TREE=$BE_SRC BUILD_DIR=$BE_OUT UE_FLAVOUR='' UE_EXTRA_CONFIG=''
	local extra=$BE_DIR/compile-test.config sum stamp=$BE_DIR/series.config.stamp
	local -a frags
	printf '%s\n' '# Lets USER_EVENTS build before the patch that drops BROKEN.' \
		'CONFIG_COMPILE_TEST=y' > "$extra"
	sum=$( { config_inputs_sum; fingerprint "$extra"; } | sha256sum)
	if [[ -f $BE_CONFIG && -f $stamp && $(<"$stamp") == "$sum" ]]; then
		return 0
	fi
	mapfile -t frags < <(config_fragments)
	log "build-each: config: tinyconfig + ${frags[*]##*/} + ${extra##*/}"
	rm -f "$stamp"
	run_logged "$BE_LOG" kmake tinyconfig || die "build-each: tinyconfig failed"
	run_logged "$BE_LOG" env -C "$TREE" ARCH="$KARCH" scripts/kconfig/merge_config.sh \
		-m -O "$BUILD_DIR" "$BUILD_DIR/.config" "${frags[@]}" "$extra" ||
		die "build-each: merge_config failed"
	run_logged "$BE_LOG" kmake olddefconfig || die "build-each: olddefconfig failed"
	config_verify
	grep -qx 'CONFIG_COMPILE_TEST=y' "$BUILD_DIR/.config" ||
		die "build-each: CONFIG_COMPILE_TEST=y did not make it into the .config"
	cp "$BUILD_DIR/.config" "$BE_CONFIG"
	printf '%s\n' "$sum" > "$stamp"
}

# be_touched COMMIT DIR: true when DIR changes in the series up to COMMIT.
be_touched() {
	[[ -n $(tgit diff --name-only base "$1" -- "$2") ]]
}

# be_commit N COMMIT: build one commit; prints the steps done (or the
# reason of the failure) and returns non-zero when it failed.
be_commit() {
	local n=$1 c=$2 off steps=kernel w ksft=tools/testing/selftests/user_events
	local TREE=$BE_SRC BUILD_DIR=$BE_OUT
	git -C "$BE_SRC" checkout -q -f --detach "$c" || { echo "checkout failed"; return 1; }
	printf '\n### commit %s: %s\n' "$n" "$(tgit log -1 --format='%h %s' "$c")" >> "$BE_LOG"
	off=$(stat -c %s "$BE_LOG")

	cp "$BE_CONFIG" "$BE_OUT/.config"
	run_logged "$BE_LOG" kmake olddefconfig ||
		{ echo "olddefconfig failed"; return 1; }
	grep -qx 'CONFIG_USER_EVENTS=y' "$BE_OUT/.config" ||
		{ echo "CONFIG_USER_EVENTS is not set: the patch's code would not be built"; return 1; }
	if grep -q '^config SAMPLE_USER_EVENTS$' "$BE_SRC/samples/Kconfig" &&
		! grep -qx 'CONFIG_SAMPLE_USER_EVENTS=y' "$BE_OUT/.config"; then
		echo "CONFIG_SAMPLE_USER_EVENTS is not set"
		return 1
	fi

	run_logged "$BE_LOG" kmake -j"$JOBS" vmlinux ||
		{ echo "kernel build failed"; return 1; }
	steps+=", headers"
	run_logged "$BE_LOG" kmake headers_install INSTALL_HDR_PATH="$BE_OUT/hdr" ||
		{ echo "headers_install failed"; return 1; }

	if be_touched "$c" samples/user_events/; then
		steps+=", sample"
		if [[ -f $BE_SRC/samples/user_events/decoder.c ]]; then
			mkdir -p "$BE_DIR/samples"
			run_logged "$BE_LOG" gcc -O2 -Wall -isystem "$BE_OUT/hdr/include" \
				-o "$BE_DIR/samples/decoder" "$BE_SRC/samples/user_events/decoder.c" \
				-ltraceevent ||
				{ echo "samples/user_events/decoder.c failed"; return 1; }
		fi
	fi
	if be_touched "$c" "$ksft/"; then
		steps+=", selftests"
		rm -rf "$BE_DIR/kselftest"
		run_logged "$BE_LOG" make -C "$BE_SRC/tools/testing/selftests" TARGETS=user_events \
			O="$BE_OUT" KHDR_INCLUDES="-isystem $BE_OUT/hdr/include" \
			KSFT_INSTALL_PATH="$BE_DIR/kselftest" INSTALL_PATH="$BE_DIR/kselftest" \
			install || { echo "selftests failed"; return 1; }
	fi

	w=$(tail -c +"$((off + 1))" "$BE_LOG" | grep -E ': warning: ' | sort -u || true)
	if [[ -n $w ]]; then
		echo "$(wc -l <<<"$w") compiler warning(s):"
		printf '%s\n' "$w" | sed "s|$BE_SRC/||; s/^/    /"
		return 1
	fi
	echo "$steps"
}

cmd_build_each() {
	once cmd_apply
	local t0 tc commits=() c n=0 ok=0 failed=0 out status first rest lines=()
	t0=$(now)
	mapfile -t commits < <(tgit rev-list --reverse base..series)
	((${#commits[@]})) || die "build-each: no commits in base..series"
	mkdir -p "$BE_DIR" "$BE_OUT" "$(dirname "$BE_LOG")"
	: > "$BE_LOG"
	log "build-each: ${#commits[@]} commits in $BE_SRC, O=$BE_OUT (log: $BE_LOG)"

	worktree_at "$BE_SRC" "${commits[-1]}"
	be_make_config
	worktree_at "$BE_SRC" "${commits[0]}"

	for c in "${commits[@]}"; do
		n=$((n + 1)) tc=$(now)
		log "build-each: $(printf '%04d' "$n") $(tgit log -1 --format='%h %s' "$c")"
		if out=$(be_commit "$n" "$c"); then
			status=ok ok=$((ok + 1))
		else
			status=FAILED failed=$((failed + 1))
		fi
		# "0001 ok      kernel, headers" (the first output line), then
		# the rest of the output (compiler warnings), indented.
		first=$(head -n 1 <<<"$out") rest=
		[[ $out != *$'\n'* ]] || rest=$(tail -n +2 <<<"$out")
		lines+=("$(printf '  %04d %-6s  %s' "$n" "$status" "$first")")
		printf '%s  (%ss)\n' "${lines[-1]}" "$(($(now) - tc))"
		if [[ -n $rest ]]; then
			lines+=("$rest")
			printf '%s\n' "$rest"
		fi
	done

	{
		printf 'Series-Tree: %s\n' "$(tgit rev-parse 'series^{tree}')"
		printf 'Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'Duration: %ss\n\n' "$(($(now) - t0))"
		printf '%s\n' "${lines[@]}"
		printf '  %d built, %d failed\n' "$ok" "$failed"
	} > "$BE_RESULT.tmp"
	mv "$BE_RESULT.tmp" "$BE_RESULT"
	log "build-each: done in $(($(now) - t0))s (result: $BE_RESULT)"
	echo "$ok built, $failed failed"
	((failed == 0))
}
