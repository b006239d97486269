#!/bin/bash
# Memory leaks found by kmemleak (debug flavour only) after all the tests,
# in each VM of a kernel: each ran some of them.
# lanes: all
echo "1..1"
km=/sys/kernel/debug/kmemleak
if [[ ! -e $km ]]; then
	echo "ok 1 kmemleak: no leaks # SKIP kmemleak not in this kernel"
	exit 0
fi
# Objects are only reported once they have been unreferenced for a while
# and seen by two scans.
sleep 5
echo scan > "$km"
sleep 5
echo scan > "$km"
leaks=$(cat "$km")
if [[ -z $leaks ]]; then
	echo "ok 1 kmemleak: no leaks"
else
	echo "not ok 1 kmemleak: no leaks"
	printf '%s\n' "$leaks" | sed 's/^/# /'
fi
