#!/bin/bash
# The tracing tools of the host run in the guest kernel.
# What a tool reads of the kernel is the same in every kernel; the debug
# kernel runs the paths it takes through the selftests (checks/README).
# flavours: plain
source "$UE_HARNESS/checks/tap.sh"
tap_plan 5
tap_check "tracefs mounted with user_events_data" test -e /sys/kernel/tracing/user_events_data
tap_check "BTF available for bpftrace" test -s /sys/kernel/btf/vmlinux
tap_check "perf runs" perf --version
tap_check "bpftrace runs" bpftrace --version
tap_check "trace-cmd runs" trace-cmd list -e user_events
