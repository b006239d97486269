# shellcheck shell=bash
# The header checks of "harness/ue test" (harness/lib/test.sh calls
# check_headers once, with the first kernel built, which installs the UAPI
# headers).  Every program is compiled with gcc -Wall -Werror and never run.

# header-abi: programs written for each layout of struct user_reg, with the
# ABI's sizes, offsets and numbers as static assertions: the status page one
# of 5.18 and the enable bit one of 6.4 and later.  Each is compiled with
# its layout's macro (USER_EVENTS_STATUS_PAGE_ABI, USER_EVENTS_ENABLE_BIT_ABI)
# and, for the base's default layout (BASE_ABI, common.sh), without any.
HEADER_STATUS_PAGE_SRC=$HARNESS_DIR/checks/header-status-page.c
HEADER_ENABLE_BIT_SRC=$HARNESS_DIR/checks/header-enable-bit.c

# header-compat: a program written for 5.18's <linux/user_events.h>: struct
# iovec and writev() without <sys/uio.h>, which that header brought in.  It
# is compiled as it is, and with <sys/uio.h> included before and after
# <linux/user_events.h> (a program that includes it itself still compiles);
# where the status page layout is not the default, with its macro.
HEADER_COMPAT_SRC=$HARNESS_DIR/checks/header-compat.c

# header_compile CHECK WHAT SRC [GCC_ARGS...]: compile SRC against the
# installed headers and record one result of CHECK; WHAT names the case in a
# failure.
header_compile() {
	local check=$1 what=$2 src=$3 out
	shift 3
	if out=$(gcc -Wall -Werror -O2 "$@" -isystem "$HDR_DIR/include" \
		-o "$HEADER_TMP/prog" "$src" 2>&1); then
		record "$(base_prefix)$check" 1 0 0
	else
		printf '  FAIL %s%s: %s, %s\n' "$(base_prefix)" "$check" "$(basename "$src")" "$what"
		printf '%s\n' "$out" | sed 's/^/       | /'
		record "$(base_prefix)$check" 0 1 0
	fi
}

# check_headers: the header-abi and header-compat checks.
check_headers() {
	local src compat
	if [[ ! -f $HDR_DIR/include/linux/user_events.h ]]; then
		printf '  FAIL %sheader-abi: no installed header in %s\n' "$(base_prefix)" "$HDR_DIR/include"
		record "$(base_prefix)header-abi" 0 1 0
		return
	fi
	HEADER_TMP=$(mktemp -d)
	header_compile header-abi "with USER_EVENTS_STATUS_PAGE_ABI" \
		"$HEADER_STATUS_PAGE_SRC" -DUSER_EVENTS_STATUS_PAGE_ABI
	header_compile header-abi "with USER_EVENTS_ENABLE_BIT_ABI" \
		"$HEADER_ENABLE_BIT_SRC" -DUSER_EVENTS_ENABLE_BIT_ABI
	case $BASE_ABI in
	status-page) src=$HEADER_STATUS_PAGE_SRC compat=() ;;
	enable-bit) src=$HEADER_ENABLE_BIT_SRC compat=(-DUSER_EVENTS_STATUS_PAGE_ABI) ;;
	esac
	header_compile header-abi "without a macro (the default of $SRC_PKG)" "$src"
	header_compile header-compat "without <sys/uio.h>" "$HEADER_COMPAT_SRC" \
		${compat[@]+"${compat[@]}"}
	header_compile header-compat "<sys/uio.h> included before <linux/user_events.h>" \
		"$HEADER_COMPAT_SRC" -DUIO_BEFORE ${compat[@]+"${compat[@]}"}
	header_compile header-compat "<sys/uio.h> included after <linux/user_events.h>" \
		"$HEADER_COMPAT_SRC" -DUIO_AFTER ${compat[@]+"${compat[@]}"}
	rm -rf "$HEADER_TMP"
}
