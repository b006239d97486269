# shellcheck shell=bash
# harness/ue bench: build what changed, boot the test kernel once and run
# the user_events benchmark (tools/testing/selftests/user_events/
# user_events_bench.c, installed with the selftests).  Its table is printed
# and saved as $UE_CACHE/bench/DATE.md (and latest.md), with a header that
# says where and how it was measured.
#
#   harness/ue bench                  # every phase, default rounds
#   harness/ue bench -- -r 5 -t 5 -p ftrace,perf   # a quick partial run
#
# Arguments after "--" go to the program (user_events_bench -h lists them).

UE_BENCH_TIMEOUT=${UE_BENCH_TIMEOUT:-1800}   # seconds the bench VM may take

# bench_host: one line describing the host and how busy it is.
bench_host() {
	local model
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	printf '%s cores (%s), %s; QEMU %s, accel %s, %s vCPUs; load average %s' \
		"$(nproc)" "$model" "$(. /etc/os-release && echo "$PRETTY_NAME")" \
		"$(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')" \
		"$UE_ACCEL" "$UE_SMP" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# bench_busy: warn about what else runs on the host (it distorts timing).
bench_busy() {
	local others
	others=$(pgrep -a 'qemu-system|^make$|^cc1$' 2>/dev/null | grep -v "^$$ " | cut -c1-100 || true)
	[[ -z $others ]] || {
		warn "bench: other processes compete for the CPUs; timings will be distorted:"
		printf '%s\n' "$others" | head -n 5 >&2
	}
}

cmd_bench() {
	[[ ${1:-} != -- ]] || shift
	once cmd_deps
	once cmd_build
	local prog=$KSFT_DIR/user_events/user_events_bench
	[[ -x $prog ]] || die "bench: $prog was not built (selftests Makefile TEST_GEN_FILES)"
	lock_cache shared

	local scratch rc=0 args='' host_before cs out
	((!$#)) || args=$(printf ' %q' "$@")
	bench_busy
	host_before=$(bench_host)
	scratch=$(scratch_new)
	# The table goes to a file; progress is streamed from stderr.
	scratch_cmd "$scratch" run "cd /tmp && $(printf '%q' "$prog")$args > $GUEST_SCRATCH/bench.md"
	vm_boot "$scratch" run "$UE_BENCH_TIMEOUT" || rc=$?
	((rc == 0)) || die "bench: the benchmark failed (status $rc); see $scratch"

	# The clocksource the guest ended with, as its kernel log tells it.
	cs=$(sed -n 's/.*clocksource: Switched to clocksource \([a-z_0-9-]*\).*/\1/p' \
		"$scratch/dmesg" | tail -n 1)
	if grep -qiE 'clocksource.*unstable|Marking clocksource .* as unstable' "$scratch/dmesg"; then
		warn "bench: the guest kernel marked a clocksource unstable:"
		grep -iE 'unstable' "$scratch/dmesg" >&2
	fi
	[[ $cs == tsc ]] || warn "bench: the guest clocksource is '${cs:-unknown}', not tsc: timings are not comparable"

	mkdir -p "$BENCH_DIR"
	out=$BENCH_DIR/$(date +%Y%m%d-%H%M%S).md
	{
		printf '# harness/ue bench, %s\n' "$(date '+%F %T %Z')"
		printf '# kernel %s (%s)\n' "$(kmake -s kernelrelease 2>/dev/null)" \
			"$(tgit rev-parse --short series 2>/dev/null)"
		printf '# host before: %s\n' "$host_before"
		printf '# host after:  %s\n' "$(bench_host)"
		printf '# guest clocksource (dmesg): %s\n' "${cs:-unknown}"
		cat "$scratch/bench.md"
	} > "$out"
	ln -sfn "$(basename "$out")" "$BENCH_DIR/latest.md"
	echo
	cat "$out"
	log "bench: table saved as $out"
}
