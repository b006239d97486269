# shellcheck shell=bash
# harness/ue deps: install the Debian packages the harness needs.

# Everything the harness uses on the host and, through the shared host root,
# inside the guest.
DEPS_PACKAGES=(
	# kernel source and build
	"$SRC_PKG" gcc gcc-multilib make perl flex bison bc libelf-dev libssl-dev
	dwarves kmod cpio rsync xz-utils git patch sparse
	# guest: emulator, initramfs, tracing tools
	qemu-system-x86 busybox-static linux-perf trace-cmd bpftrace
	libtraceevent-dev libbpf-dev clang llvm
	# documentation build; checkpatch's SPDX check (scripts/spdxcheck.py)
	python3-sphinx python3-sphinx-rtd-theme python3-ply python3-git
)

# pkg_installed PKG: true when dpkg knows PKG as fully installed.
pkg_installed() {
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# apt_install PKG...: install with apt-get, refreshing the package lists once
# if the first attempt cannot find a package.
apt_install() {
	local apt=(apt-get install -y --no-install-recommends -q)
	local sudo=()
	((EUID == 0)) || sudo=(sudo)
	export DEBIAN_FRONTEND=noninteractive
	if ! "${sudo[@]}" "${apt[@]}" "$@"; then
		log "apt-get install failed, updating package lists and retrying"
		"${sudo[@]}" apt-get update -q
		"${sudo[@]}" "${apt[@]}" "$@"
	fi
}

cmd_deps() {
	local missing=() pkg
	for pkg in "${DEPS_PACKAGES[@]}"; do
		pkg_installed "$pkg" || missing+=("$pkg")
	done
	if ((${#missing[@]} == 0)); then
		log "deps: all ${#DEPS_PACKAGES[@]} packages present"
		return 0
	fi
	log "deps: installing ${missing[*]}"
	apt_install "${missing[@]}"
}
