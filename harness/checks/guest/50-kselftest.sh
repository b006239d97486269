#!/bin/bash
# The user_events kselftests, through the kselftest runner.  The installed
# tests are copied to /tmp first: the host root is read-only in the guest.
# UE_KSELFTEST_DIR (default $UE_CACHE/kselftest) is where they are
# installed, UE_KSELFTEST_TESTS a subset of the programs to run (harness/ue
# mutants uses both).
ksft=${UE_KSELFTEST_DIR:-$UE_CACHE/kselftest}
if [[ ! -x $ksft/run_kselftest.sh ]]; then
	echo "1..1"
	echo "not ok 1 kselftest: user_events selftests not built"
	exit 0
fi
rm -rf /tmp/kselftest
cp -a "$ksft" /tmp/kselftest
if [[ -n ${UE_KSELFTEST_TIMEOUT:-} ]]; then
	settings=/tmp/kselftest/user_events/settings
	sed -i '/^timeout=/d' "$settings" 2>/dev/null
	echo "timeout=$UE_KSELFTEST_TIMEOUT" >> "$settings"
fi
select=(-c user_events)
if [[ -n ${UE_KSELFTEST_TESTS:-} ]]; then
	select=()
	for t in $UE_KSELFTEST_TESTS; do
		select+=(-t "user_events:$t")
	done
fi
cd /tmp/kselftest && ./run_kselftest.sh "${select[@]}"
