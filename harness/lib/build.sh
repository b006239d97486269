# shellcheck shell=bash
# harness/ue build: kernel image, UAPI headers, selftests and sample.
# Everything is incremental; a full log is kept in $LOG_DIR/build.log.

KSFT_SRC=tools/testing/selftests

# show_new_warnings LOGFILE OFFSET: compiler warnings logged after OFFSET.
show_new_warnings() {
	local w
	w=$(tail -c +"$(($2 + 1))" "$1" | grep -E ': warning: ' | sort -u || true)
	[[ -z $w ]] || { warn "build: compiler warnings:"; printf '%s\n' "$w" >&2; }
}

build_kernel() {
	local t0 off
	t0=$(now) off=$(stat -c %s "$BUILD_LOG" 2>/dev/null || echo 0)
	log "build: kernel (make -j$JOBS bzImage, log: $BUILD_LOG)"
	run_logged "$BUILD_LOG" kmake -j"$JOBS" bzImage || die "build: kernel build failed"
	show_new_warnings "$BUILD_LOG" "$off"
	log "build: $(kmake -s kernelrelease 2>/dev/null) ready ($(($(now) - t0))s)"
}

build_headers() {
	log "build: headers_install -> $HDR_DIR"
	run_logged "$BUILD_LOG" kmake headers_install INSTALL_HDR_PATH="$HDR_DIR" ||
		die "build: headers_install failed"
}

build_selftests() {
	if [[ ! -f $TREE/$KSFT_SRC/user_events/Makefile ]]; then
		warn "build: no $KSFT_SRC/user_events/Makefile in the series: no selftests"
		rm -rf "$KSFT_DIR"
		return 0
	fi
	log "build: user_events selftests -> $KSFT_DIR"
	# O= puts the objects in $BUILD_DIR/kselftest; KHDR_INCLUDES given on
	# the command line wins over the Makefile's default of $O/usr/include.
	run_logged "$BUILD_LOG" make -C "$TREE/$KSFT_SRC" TARGETS=user_events \
		O="$BUILD_DIR" KHDR_INCLUDES="-isystem $HDR_DIR/include" \
		KSFT_INSTALL_PATH="$KSFT_DIR" INSTALL_PATH="$KSFT_DIR" install ||
		die "build: selftests failed"
}

# build_base_selftests: on a base whose own user_events selftests the
# series replaces (BASE_SELFTESTS), those selftests, unchanged, built
# against the series' UAPI headers into $KSFT_BASE_DIR: programs written
# for the base's ABI, which the series keeps serving.  Their source is the
# base commit's tools/testing/selftests, unpacked once beside the tree.
build_base_selftests() {
	local src=$UE_CACHE/base-selftests base
	if [[ -z $BASE_SELFTESTS ]]; then
		rm -rf "$KSFT_BASE_DIR" "$src"
		return 0
	fi
	base=$(tgit rev-parse base)
	if [[ $(cat "$src/.base" 2>/dev/null) != "$base" ]]; then
		rm -rf "$src"
		mkdir -p "$src"
		tgit archive base tools/testing/selftests tools/include \
			scripts/subarch.include | tar -x -C "$src"
		echo "$base" > "$src/.base"
	fi
	log "build: the base's own user_events selftests -> $KSFT_BASE_DIR"
	rm -rf "$KSFT_BASE_DIR"
	run_logged "$BUILD_LOG" make -C "$src/$KSFT_SRC" TARGETS=user_events \
		O="$BUILD_DIR/base-kselftest" KHDR_INCLUDES="-isystem $HDR_DIR/include" \
		KSFT_INSTALL_PATH="$KSFT_BASE_DIR" INSTALL_PATH="$KSFT_BASE_DIR" install ||
		die "build: the base's selftests failed"
}

# build_samples: the sample programs.  kbuild builds them with the kernel
# (CONFIG_SAMPLE_USER_EVENTS in harness/vm.config, through the series'
# samples/Kconfig and samples/Makefile); copy the programs for the guest.
build_samples() {
	local out=$BUILD_DIR/samples/user_events prog n=0
	rm -rf "$SAMPLES_DIR"
	if ! grep -q '^CONFIG_SAMPLE_USER_EVENTS=y' "$BUILD_DIR/.config"; then
		warn "build: CONFIG_SAMPLE_USER_EVENTS is off: no sample"
		return 0
	fi
	mkdir -p "$SAMPLES_DIR"
	for prog in "$out"/*; do
		[[ -f $prog && -x $prog ]] || continue
		cp -p "$prog" "$SAMPLES_DIR/"
		n=$((n + 1))
	done
	((n)) || warn "build: no sample program in $out"
	# The decoder links libtraceevent, which kbuild's userprogs do not.
	if [[ -f $TREE/samples/user_events/decoder.c ]]; then
		gcc -O2 -Wall -isystem "$HDR_DIR/include" \
			-o "$SAMPLES_DIR/decoder" \
			"$TREE/samples/user_events/decoder.c" -ltraceevent ||
			die "build: samples/user_events/decoder.c failed"
		n=$((n + 1))
	fi
	log "build: $n sample program(s) -> $SAMPLES_DIR"
}

# rotate_log: keep the build log from growing without bound.
rotate_log() {
	if [[ -f $BUILD_LOG ]] && (($(stat -c %s "$BUILD_LOG") > 50 * 1024 * 1024)); then
		mv "$BUILD_LOG" "$BUILD_LOG.old"
	fi
}

# cmd_build [--kernel-only]: the kernel, then what the guest runs beside
# it (the same for every flavour: "harness/ue test" builds it once).
cmd_build() {
	local kernel_only=0
	case ${1:-} in
	--kernel-only) kernel_only=1 ;;
	'') ;;
	*) die "build: unknown argument '$1'" ;;
	esac
	once cmd_config
	rotate_log
	build_kernel
	((kernel_only)) && return 0
	build_headers
	build_selftests
	build_base_selftests
	build_samples
}
