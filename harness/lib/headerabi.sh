# shellcheck shell=bash
# The header-abi check of "harness/ue test" (harness/lib/test.sh calls it,
# once, with the first kernel built, which installs the UAPI headers).

# Programs written for each layout of struct user_reg, with the ABI's
# sizes, offsets and numbers as static assertions: the status page one of
# 5.18 (no macro), and the enable bit one of 6.4 and later
# (USER_EVENTS_ENABLE_BIT_ABI defined before the include).
HEADER_ABI_SRCS=("$HARNESS_DIR/checks/header-status-page.c"
	"$HARNESS_DIR/checks/header-enable-bit.c")

# check_header_abi: compile each of HEADER_ABI_SRCS against the installed
# headers with -Wall -Werror; one result each.
check_header_abi() {
	local tmp src out
	if [[ ! -f $HDR_DIR/include/linux/user_events.h ]]; then
		printf '  FAIL header-abi: no installed header in %s\n' "$HDR_DIR/include"
		record header-abi 0 1 0
		return
	fi
	tmp=$(mktemp -d)
	for src in "${HEADER_ABI_SRCS[@]}"; do
		if out=$(gcc -Wall -Werror -O2 -isystem "$HDR_DIR/include" \
			-o "$tmp/prog" "$src" 2>&1); then
			record header-abi 1 0 0
		else
			printf '  FAIL header-abi: %s\n' "$(basename "$src")"
			printf '%s\n' "$out" | sed 's/^/       | /'
			record header-abi 0 1 0
		fi
	done
	rm -rf "$tmp"
}
