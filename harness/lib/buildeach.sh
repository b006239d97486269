# shellcheck shell=bash
# harness/ue build-each: build every commit of the series, in order, so
# that each patch is known to compile on its own (bisectability).
#
# In a worktree of $TREE at the series ($UE_CACHE/build-each/src), "git
# rebase --exec 'harness/ue build-each-commit' base" checks the commits out
# in turn (fast-forwards: no commit is made) and builds each in one O=
# directory ($UE_CACHE/build-each/build): the main build is not touched, and
# each commit only rebuilds what it changed.  A failed commit is recorded
# and the rebase goes on.
#
# The configuration is the test VM's (tinyconfig + harness/vm.config +
# Kconfig.fragment + the selftests' config, without UE_FLAVOUR or
# UE_EXTRA_CONFIG) plus CONFIG_COMPILE_TEST=y: on 6.1, before the Kconfig
# patch, USER_EVENTS still "depends on BROKEN || COMPILE_TEST", and BROKEN
# cannot be set, so COMPILE_TEST is the only way to compile the code of the
# earlier patches (6.12's USER_EVENTS has no such dependency).  It is made
# once, at the series' last commit, and given to every commit through
# olddefconfig, so options that an earlier commit's Kconfig does not know yet
# (SAMPLE_USER_EVENTS) come back when they appear.
#
# Per commit: the kernel (bzImage, which builds the sample when
# SAMPLE_USER_EVENTS is set) and headers_install; from the commit on that
# the series first changes samples/user_events/ the sample programs, from
# the one that first changes the selftests the user_events kselftests,
# which then run in the test VM (plain flavour) on the commit's kernel,
# unless nothing they test changed since the previous commit: all of them
# after a change of the kernel or their shared header, else only the
# programs the commit changes (be_programs_to_run).
# A commit fails when a step fails, USER_EVENTS (or SAMPLE_USER_EVENTS,
# once its Kconfig entry exists) is not in its .config, the compiler
# warns, or a selftest fails or the kernel log has a report.

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

# be_commit: build the commit checked out in $BE_SRC; prints the steps done
# (or the reason of the failure) and returns non-zero when it failed.
be_commit() {
	local off steps=kernel w progs ksft=tools/testing/selftests/user_events
	local TREE=$BE_SRC BUILD_DIR=$BE_OUT
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

	run_logged "$BE_LOG" kmake -j"$JOBS" bzImage ||
		{ echo "kernel build failed"; return 1; }
	steps+=", headers"
	run_logged "$BE_LOG" kmake headers_install INSTALL_HDR_PATH="$BE_OUT/hdr" ||
		{ echo "headers_install failed"; return 1; }

	if ! git -C "$BE_SRC" diff --quiet base HEAD -- samples/user_events/; then
		steps+=", sample"
		if [[ -f $BE_SRC/samples/user_events/decoder.c ]]; then
			mkdir -p "$BE_DIR/samples"
			run_logged "$BE_LOG" gcc -O2 -Wall -isystem "$BE_OUT/hdr/include" \
				-o "$BE_DIR/samples/decoder" "$BE_SRC/samples/user_events/decoder.c" \
				-ltraceevent ||
				{ echo "samples/user_events/decoder.c failed"; return 1; }
		fi
	fi
	if [[ ! -f $BE_SRC/$ksft/Makefile ]]; then
		# A commit that removes the base's own selftests, for later
		# ones to add the series' (6.12's core commit)
		git -C "$BE_SRC" diff --quiet base HEAD -- "$ksft/" || steps+=", no selftests"
	elif ! git -C "$BE_SRC" diff --quiet base HEAD -- "$ksft/"; then
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

	if [[ $steps == *", selftests"* ]]; then
		if git -C "$BE_SRC" diff --quiet HEAD~ HEAD -- kernel/ include/ mm/ "$ksft/"; then
			steps+=" (not run: nothing they test changed)"
		elif ! progs=$(be_programs_to_run); then
			steps+=" (not run: no test program changed)"
		else
			be_selftests "$progs" || { echo "$steps; $BE_FAILS"; return 1; }
			steps+=" ($VM_PASS passed${progs:+ in $progs})"
		fi
	fi
	echo "$steps"
}

# be_programs_to_run: the selftest programs the commit checked out in
# $BE_SRC must run: all of them (an empty line) when it changes the kernel
# or the tests' shared header; else the programs whose source it changes,
# as the others passed on the same kernel at the commit before (the
# Makefile and config changes of a test patch are checked by the build).
# Fails when there is none: a commit of the benchmark alone.
be_programs_to_run() {
	local ksft=tools/testing/selftests/user_events f progs=()
	if ! git -C "$BE_SRC" diff --quiet HEAD~ HEAD -- kernel/ include/ mm/ \
		"$ksft/user_events_selftests.h"; then
		echo
		return 0
	fi
	while IFS= read -r f; do
		f=${f##*/}
		progs+=("${f%.c}")
	done < <(git -C "$BE_SRC" diff --name-only HEAD~ HEAD -- "$ksft/*_test.c")
	((${#progs[@]})) || return 1
	echo "${progs[*]}"
}

# be_selftests [PROGRAMS]: run the commit's selftests (those named, or all)
# on its kernel; BE_FAILS says what failed.
be_selftests() {
	# shellcheck disable=SC2034 # used by vm_selftests and vm_boot
	local KSFT_DIR=$BE_DIR/kselftest BZIMAGE=$BE_OUT/arch/x86/boot/bzImage \
		RUNS_DIR=$BE_DIR/runs UE_FLAVOUR=''
	vm_selftests "${1:-}" 2>> "$BE_LOG"
	BE_FAILS="selftests failed (run: $VM_SCRATCH): $(short_list 4 "${VM_FAILS[@]}")"
	((${#VM_FAILS[@]} == 0 && VM_PASS > 0))
}

# cmd_build_each_commit: "harness/ue build-each-commit", run by git rebase
# on each commit (cmd_build_each holds the lock): build it, add its result
# to $BE_LINES ("  0001 ok      kernel, headers", warnings below) and exit
# 0, so that the rebase goes on.
cmd_build_each_commit() {
	local n tc out status=ok line
	[[ -n ${UE_LOCK_HELD:-} ]] || die "build-each-commit: run by 'harness/ue build-each' only"
	n=$(printf '%04d' "$(git -C "$BE_SRC" rev-list --count base..HEAD)") tc=$(now)
	line="$n $(git -C "$BE_SRC" log -1 --format='%h %s')"
	log "build-each: $line"
	printf '\n### commit %s\n' "$line" >> "$BE_LOG"
	out=$(be_commit) || status=FAILED
	line=$(printf '  %s %-6s  %s' "$n" "$status" "$out")
	printf '%s\n' "$line" >> "$BE_LINES"
	sed "1s/\$/  ($(($(now) - tc))s)/" <<<"$line"
}

cmd_build_each() {
	once cmd_apply
	local t0 ok failed
	t0=$(now)
	[[ -n $(tgit rev-list base..series) ]] || die "build-each: no commits in base..series"
	mkdir -p "$BE_DIR" "$BE_OUT" "$(dirname "$BE_LOG")"
	: > "$BE_LOG"
	: > "$BE_LINES"
	log "build-each: $(tgit rev-list --count base..series) commits in $BE_SRC, O=$BE_OUT (log: $BE_LOG)"

	worktree_at "$BE_SRC" series
	be_make_config
	if ! UE_LOCK_HELD=1 git -C "$BE_SRC" rebase -q \
		--exec "$(printf '%q' "$HARNESS_DIR/ue") build-each-commit" base; then
		git -C "$BE_SRC" rebase --abort || true
		die "build-each: git rebase --exec stopped (see above)"
	fi

	ok=$(grep -c '^  [0-9]* ok ' "$BE_LINES" || true)
	failed=$(grep -c '^  [0-9]* FAILED ' "$BE_LINES" || true)
	{
		printf 'Series-Tree: %s\n' "$(tgit rev-parse 'series^{tree}')"
		printf 'Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'Duration: %ss\n\n' "$(($(now) - t0))"
		cat "$BE_LINES"
		printf '  %d built, %d failed\n' "$ok" "$failed"
	} > "$BE_RESULT.tmp"
	mv "$BE_RESULT.tmp" "$BE_RESULT"
	log "build-each: done in $(($(now) - t0))s (result: $BE_RESULT)"
	echo "$ok built, $failed failed"
	((failed == 0))
}
