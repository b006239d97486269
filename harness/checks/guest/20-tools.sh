#!/bin/bash
# The tracing tools of the host run in the guest kernel.
n=0
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}
echo "1..5"
check "tracefs mounted with user_events_data" test -e /sys/kernel/tracing/user_events_data
check "BTF available for bpftrace" test -s /sys/kernel/btf/vmlinux
check "perf runs" perf --version
check "bpftrace runs" bpftrace --version
check "trace-cmd runs" trace-cmd list -e user_events
