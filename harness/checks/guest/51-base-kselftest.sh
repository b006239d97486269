#!/bin/bash
# The user_events selftests of the base tree, where the series replaces
# an implementation that came with its own: on 6.12, mainline's, which
# register enable bits.  They are built unchanged from the base commit
# (harness/lib/build.sh, build_base_selftests) and run through the
# kselftest runner: programs written for the ABI that the series keeps
# serving, each of whose cases must pass.
# bases: 6.12
ksft=$UE_CACHE/kselftest-base
if [[ ! -x $ksft/run_kselftest.sh ]]; then
	echo "1..1"
	echo "not ok 1 base-kselftest: the base's user_events selftests not built"
	exit 0
fi
# Links to the programs: the runner writes beside them, and the host
# root is read-only in the guest
rm -rf /tmp/kselftest-base
cp -rs "$(realpath "$ksft")" /tmp/kselftest-base
cd /tmp/kselftest-base && ./run_kselftest.sh
