# shellcheck shell=bash
# harness/ue test --arch ARCH: the series on another architecture, under
# QEMU TCG.  Each kernel of the architecture is built from tinyconfig with
# harness/arch/guest.config, the series' Kconfig.fragment, the selftests'
# config and harness/arch/KERNEL.config, in $ARCH_DIR/KERNEL/build.  The
# guest cannot share the host's root: it boots an initramfs of its own
# architecture, made of Debian's busybox-static and bash-static of that
# architecture (fetched with a private apt state, the host's own is left
# alone), the selftests and samples built statically with a cross
# compiler, harness/checks and harness/arch/init.  The guest runs the
# checks named for the kernel and prints their TAP on the console, between
# "=== check NAME ===" lines, then its kernel log; the host counts them as
# "harness/ue test" does.  Ends with "N passed, N failed".
#
# The kernels of an --arch, the checks each runs, and how each is built
# and booted:
#   arm64      every selftest and sample, 64-bit; then the armhf builds
#              of the compat, enable bit (both programs) and status page
#              tests (compat)
#   arm64-64k  64 KiB pages: the status page, registration and enable
#              bit tests
#   s390x      big-endian: every selftest and sample
#   i386       a 32-bit kernel: every selftest and sample, 32-bit

# Besides DEPS_PACKAGES: the emulators, clang 16 (s390x), GNU binutils
# for s390x, and the static C libraries of the guests.
ARCH_PACKAGES=(qemu-system-arm qemu-system-misc clang-16 lld-16 llvm-16
	binutils-s390x-linux-gnu
	libc6-dev-arm64-cross libgcc-12-dev-arm64-cross
	libc6-dev-armhf-cross libgcc-12-dev-armhf-cross
	libc6-dev-s390x-cross libgcc-12-dev-s390x-cross)
# What the guest's userland is made of, from Debian's archive
ARCH_DEBS=(busybox-static bash-static)

declare -A ARCH_KERNELS=([arm64]="arm64 arm64-64k" [s390x]=s390x [i386]=i386)

# Per kernel: its ARCH=, toolchain (TOOLCHAIN_MAKE), image, the userland
# it runs (a Debian architecture), QEMU and its console.
declare -A AK_KARCH=([arm64]=arm64 [arm64-64k]=arm64 [s390x]=s390 [i386]=i386)
declare -A AK_TOOLCHAIN=([arm64]=llvm [arm64-64k]=llvm [s390x]=s390-clang [i386]=gcc)
declare -A AK_IMAGE=(
	[arm64]=arch/arm64/boot/Image [arm64-64k]=arch/arm64/boot/Image
	[s390x]=arch/s390/boot/bzImage [i386]=arch/x86/boot/bzImage
)
declare -A AK_USERLAND=([arm64]=arm64 [arm64-64k]=arm64 [s390x]=s390x [i386]=i386)
declare -A AK_QEMU=(
	[arm64]="qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on"
	[arm64-64k]="qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on"
	[s390x]="qemu-system-s390x -M s390-ccw-virtio -cpu max"
	[i386]="qemu-system-i386 -M pc -cpu max,vendor=GenuineIntel"
)
# (i386's "max" CPU says AMD family 6: a K7, which 6.1 warns is not fit
# for SMP; the same CPU as an Intel one boots both quietly)
declare -A AK_CONSOLE=([arm64]=ttyAMA0 [arm64-64k]=ttyAMA0 [s390x]=ttysclp0 [i386]=ttyS0)
# More of the kernel command line: QEMU's TCG does not emulate s390x's
# ESSA instruction, which the kernel's CMMA support uses ("unimplemented
# opcode 0xb9ab", then a disabled wait)
declare -A AK_APPEND=([s390x]="cmma=off")
# The checks: "NAME:PROGRAMS" runs guest check NAME (harness/checks/guest)
# as check NAME, with the selftests PROGRAMS (all if empty) of the
# userland; "NAME@USERLAND:PROGRAMS" those of another userland, as check
# NAME-USERLAND.
declare -A AK_CHECKS=(
	[arm64]="44-samples: 50-kselftest: 50-kselftest@armhf:compat_test,enable_test,lifetime_test,status_test"
	[arm64-64k]="50-kselftest:status_test,reg_test,enable_test,lifetime_test"
	[s390x]="44-samples: 50-kselftest:"
	[i386]="44-samples: 50-kselftest:"
)

# Per userland (Debian architecture): the ARCH= of its UAPI headers, and
# the C compiler of its static programs.  armhf is arm64's compat userland.
declare -A AU_KARCH=([arm64]=arm64 [armhf]=arm [s390x]=s390 [i386]=i386)
declare -A AU_CC=(
	[arm64]="clang-16 --target=aarch64-linux-gnu -static -fuse-ld=lld"
	[armhf]="clang-16 --target=arm-linux-gnueabihf -static -fuse-ld=lld"
	[s390x]="clang-16 --target=s390x-linux-gnu -static -fuse-ld=bfd -B/usr/bin/s390x-linux-gnu-"
	[i386]="gcc -m32 -static"
)

# arch_kernel KERNEL: configure (harness/lib/config.sh's config_make, with
# this kernel's fragments) and build it
arch_kernel() {
	local k=$1
	# kmake, config_make and config_fragments read these (dynamic scoping)
	# shellcheck disable=SC2034
	local KARCH=${AK_KARCH[$k]} BUILD_DIR=$ARCH_DIR/$k/build UE_FLAVOUR='' UE_EXTRA_CONFIG=''
	# shellcheck disable=SC2034
	local -a VM_FRAGMENTS=("$HARNESS_DIR/arch/guest.config")
	# shellcheck disable=SC2034
	local ARCH_FRAGMENT=$HARNESS_DIR/arch/$k.config
	# shellcheck disable=SC2206,SC2034 # the toolchain's words, for kmake
	local -a KMAKE_ARGS=(${TOOLCHAIN_MAKE[${AK_TOOLCHAIN[$k]}]})
	config_make
	log "arch: building the $k kernel (log: $ARCH_LOG)"
	run_logged "$ARCH_LOG" kmake -j"$JOBS" "$(basename "${AK_IMAGE[$k]}")" ||
		die "arch: the $k kernel did not build"
}

# arch_debs USERLAND: Debian's packages of ARCH_DEBS for USERLAND,
# unpacked in $ARCH_DIR/debs-USERLAND/root (apt's lists are fetched once)
arch_debs() {
	local a=$1 dir=$ARCH_DIR/debs-$1 deb
	local -a apt=(apt-get -q -o "APT::Architecture=$a" -o "APT::Architectures::=$a"
		-o "Dir::State=$dir/state" -o "Dir::State::status=/dev/null"
		-o "Dir::Cache=$dir/cache")
	[[ -x $dir/root/bin/busybox && -x $dir/root/bin/bash-static ]] && return 0
	mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/root"
	log "arch: fetching ${ARCH_DEBS[*]} for $a"
	# An index that fails (a mirror in sync, the security suite) is no
	# matter as long as the packages can be fetched
	run_logged "$ARCH_LOG" "${apt[@]}" update || warn "arch: apt-get update for $a had errors"
	(cd "$dir" && run_logged "$ARCH_LOG" "${apt[@]}" download "${ARCH_DEBS[@]}") ||
		die "arch: apt-get download for $a failed"
	for deb in "$dir"/*.deb; do
		dpkg-deb -x "$deb" "$dir/root"
	done
}

# arch_userland USERLAND: its UAPI headers, selftests and samples, built
# statically, in $ARCH_DIR/user-USERLAND; again only when the series or
# the compiler changed
arch_userland() {
	local a=$1 out=$ARCH_DIR/user-$1 cc=${AU_CC[$1]} s sum
	sum=$(printf '%s\n' "$(tgit rev-parse 'series^{tree}')" "$cc" | sha256sum)
	[[ -f $out/stamp && $(<"$out/stamp") == "$sum" ]] && return 0
	log "arch: UAPI headers, selftests and samples for $a ($cc)"
	rm -rf "$out"
	mkdir -p "$out/samples"
	run_logged "$ARCH_LOG" make -C "$TREE" ARCH="${AU_KARCH[$a]}" O="$out/hdr" \
		INSTALL_HDR_PATH="$out/headers" headers_install ||
		die "arch: headers_install for $a failed"
	run_logged "$ARCH_LOG" make -C "$TREE/$KSFT_SRC" TARGETS=user_events \
		O="$out/obj" CC="$cc" KHDR_INCLUDES="-isystem $out/headers/include" \
		KSFT_INSTALL_PATH="$out/kselftest" INSTALL_PATH="$out/kselftest" install ||
		die "arch: the selftests for $a did not build"
	for s in example enable_bit; do
		# shellcheck disable=SC2086 # the compiler's words
		run_logged "$ARCH_LOG" $cc -O2 -Wall -isystem "$out/headers/include" \
			-o "$out/samples/$s" "$TREE/samples/user_events/$s.c" ||
			die "arch: sample $s for $a did not build"
	done
	printf '%s\n' "$sum" > "$out/stamp"
}

# ak_userlands KERNEL: the userlands its guest has: its own, and those its
# checks name
ak_userlands() {
	printf '%s\n' "${AK_USERLAND[$1]}"
	# shellcheck disable=SC2086
	printf '%s\n' ${AK_CHECKS[$1]} | sed -n 's/^[^@]*@\([^:]*\):.*/\1/p'
}

# arch_initramfs_spec KERNEL: gen_init_cpio description of its initramfs
arch_initramfs_spec() {
	local k=$1 u=${AK_USERLAND[$1]} root check userland d f
	root=$ARCH_DIR/debs-$u/root
	cat <<SPEC
dir /bin 755 0 0
dir /dev 755 0 0
nod /dev/console 600 0 0 c 5 1
dir /proc 755 0 0
dir /sys 755 0 0
dir /tmp 1777 0 0
dir /run 755 0 0
file /bin/busybox $root/bin/busybox 755 0 0
file /bin/bash $root/bin/bash-static 755 0 0
slink /bin/sh bash 777 0 0
file /init $HARNESS_DIR/arch/init 755 0 0
SPEC
	printf 'dir /ue 755 0 0\n'
	# The checks named, the files they source and the kselftest order
	for d in '' /checks /checks/guest; do
		printf 'dir /ue/harness%s 755 0 0\n' "$d"
	done
	for f in tap.sh samples.sh kselftest-order; do
		printf 'file /ue/harness/checks/%s %s 644 0 0\n' "$f" "$HARNESS_DIR/checks/$f"
	done
	for check in ${AK_CHECKS[$k]}; do
		f=${check%%[:@]*}.sh
		printf 'file /ue/harness/checks/guest/%s %s 755 0 0\n' "$f" "$HARNESS_DIR/checks/guest/$f"
	done | sort -u
	# The userlands: the kernel's own, and those its checks name
	for userland in $(ak_userlands "$k"); do
		printf 'dir /ue/%s 755 0 0\n' "$userland"
		(cd "$ARCH_DIR/user-$userland" &&
			find kselftest samples -type d -printf "dir /ue/$userland/%p 755 0 0\n" &&
			find kselftest samples -type f -printf "file /ue/$userland/%p $PWD/%p %m 0 0\n")
	done
	# What the guest is told: the checks to run
	printf 'file /ue/checks %s 644 0 0\n' "$ARCH_DIR/$k/checks"
}

# arch_initramfs KERNEL: its initramfs, $ARCH_DIR/KERNEL/initramfs.cpio.gz
arch_initramfs() {
	local k=$1 dir=$ARCH_DIR/$1
	# shellcheck disable=SC2086 # one check a line
	printf '%s\n' ${AK_CHECKS[$k]} > "$dir/checks"
	printf 'userland=%s\n' "${AK_USERLAND[$k]}" >> "$dir/checks"
	"$dir/build/usr/gen_init_cpio" <(arch_initramfs_spec "$k") | gzip -1 -n > "$dir/initramfs.cpio.gz" ||
		die "arch: the initramfs of $k could not be made"
}

# arch_reap KERNEL SCRATCH: once the guest has printed its status, give
# its QEMU ARCH_EXIT_GRACE seconds to exit, then kill it: QEMU's s390x
# has hung in the guest's power off, deaf to SIGTERM, until the timeout's
# SIGKILL 25 minutes later.  (Its sleeps hold none of the run's output:
# one left behind by the reaper's kill does not keep a pipe open.)
ARCH_EXIT_GRACE=30
arch_reap() {
	local k=$1 scratch=$2
	until grep -qE '^=== status [0-9]+ ===$' "$scratch/console.log" 2> /dev/null; do
		sleep 2 > /dev/null 2>&1
	done
	sleep "$ARCH_EXIT_GRACE" > /dev/null 2>&1
	[[ -f $scratch/qemu.pid ]] || return 0
	warn "arch: the $k guest is done, its QEMU has not exited in ${ARCH_EXIT_GRACE}s: killed"
	kill -KILL "$(<"$scratch/qemu.pid")" 2> /dev/null || true
}

# arch_boot KERNEL SCRATCH TIMEOUT: boot it, its console in
# SCRATCH/console.log (and shown, each line headed by the kernel's name);
# the guest's exit status
arch_boot() {
	local k=$1 scratch=$2 timeout=$3 dir=$ARCH_DIR/$1 reaper
	local -a qemu
	# shellcheck disable=SC2206 # the emulator's words
	qemu=(${AK_QEMU[$k]} -smp "$UE_SMP" -m "$UE_MEM" -nographic -no-reboot
		-kernel "$dir/build/${AK_IMAGE[$k]}" -initrd "$dir/initramfs.cpio.gz"
		-append "console=${AK_CONSOLE[$k]} panic=-1 quiet tp_printk${AK_APPEND[$k]:+ ${AK_APPEND[$k]}}"
		-pidfile "$scratch/qemu.pid")
	printf '%q ' "${qemu[@]}" > "$scratch/qemu.cmd"
	log "arch: booting the $k kernel (timeout ${timeout}s, scratch $scratch)"
	now > "$scratch/vm-start"
	arch_reap "$k" "$scratch" &
	reaper=$!
	{ timeout -k 10 "$timeout" "${qemu[@]}" < /dev/null || echo $? > "$scratch/qemu-rc"; } 2>&1 |
		sed -u 's/\r$//' | tee "$scratch/console.log" | sed -u "s/^/[$k] /"
	kill "$reaper" 2> /dev/null || true
	wait "$reaper" 2> /dev/null || true
	arch_split "$scratch"
	[[ -f $scratch/status ]] && return "$(<"$scratch/status")"
	warn "arch: the $k guest did not finish (QEMU exit $(cat "$scratch/qemu-rc" 2> /dev/null || echo 0), timeout ${timeout}s)"
	return 125
}

# arch_split SCRATCH: the console log cut into what guest-run leaves in a
# scratch directory: checks/NAME.tap and .time, dmesg, status
arch_split() {
	local scratch=$1
	mkdir -p "$scratch/checks"
	awk -v dir="$scratch" '
		/^=== check [^ ]+ ===$/ { out = dir "/checks/" $3 ".tap.tmp"; printf "" > out; next }
		/^=== check [^ ]+: done/ { close(out); system("mv " out " " substr(out, 1, length(out) - 4)); out = ""; next }
		/^=== ue-time [^ ]+ [0-9]+ [0-9]+$/ { print $4, $5 > (dir "/checks/" $3 ".time"); next }
		/^=== dmesg ===$/ { out = dir "/dmesg"; printf "" > out; next }
		/^=== dmesg end ===$/ { close(out); out = ""; next }
		/^=== status [0-9]+ ===$/ { print $3 > (dir "/status"); next }
		out != "" { print > out }
	' "$scratch/console.log"
}

# arch_count KERNEL SCRATCH STATUS: count the results, as test_vm_count
arch_count() {
	local k=$1 scratch=$2 vmrc=$3 check name
	echo
	echo "=== Results of the $k kernel (run directory: $scratch) ==="
	((vmrc == 0)) || { printf '  FAIL %s:vm: the guest did not complete (status %d)\n' "$k" "$vmrc"; record "$k:vm" 0 1 0; }
	for check in ${AK_CHECKS[$k]}; do
		name=${check%%:*} name=${name/@/-}
		check_tap "$k:${name#[0-9][0-9]-}" "$scratch/checks/$name.tap"
	done
	check_kernel_log "$scratch" "$k:kernel-log"
	# The guest's times are seconds since its boot
	local f t0 t1 vm0
	vm0=$(<"$scratch/vm-start")
	for f in "$scratch"/checks/*.time; do
		[[ -f $f ]] || continue
		read -r t0 t1 < "$f"
		phase_add "VM $k: $(basename "$f" .time)" $((vm0 + t0)) $((vm0 + t1))
	done
}

# arch_nice CMD...: CMD at the lowest CPU priority, in a subshell
arch_nice() {
	(
		renice -n 19 -p "$BASHPID" > /dev/null
		"$@"
	)
}

# cmd_test_arch ARCH: the run of "harness/ue test --arch ARCH"
cmd_test_arch() {
	local arch=$1 k u scratch rc t0 t1 pid='' missing=() pkg
	local -a scratches=()
	[[ -v ARCH_KERNELS[$arch] ]] || die "test: unknown --arch '$arch' (${!ARCH_KERNELS[*]})"
	phase packages once cmd_deps
	for pkg in "${ARCH_PACKAGES[@]}"; do
		pkg_installed "$pkg" || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) || phase packages apt_install "${missing[@]}"
	phase tree once cmd_tree
	phase series once cmd_apply
	# Each kernel's build beside the previous kernel's VM, at the lowest
	# CPU priority; one VM at a time, as the timing cases need the CPU
	for k in ${ARCH_KERNELS[$arch]}; do
		if [[ -n $pid ]]; then
			phase "build $k" arch_nice arch_kernel "$k" || die "arch: the $k kernel did not build"
		else
			phase "build $k" arch_kernel "$k"
		fi
		phase "userland" arch_debs "${AK_USERLAND[$k]}"
		for u in $(ak_userlands "$k"); do
			phase "userland" arch_userland "$u"
		done
		arch_initramfs "$k"
		[[ -z $pid ]] || wait "$pid" || true
		scratch=$(scratch_new)
		scratches+=("$scratch")
		(
			local vmrc=0 start
			start=$(now)
			arch_boot "$k" "$scratch" "${UE_TEST_TIMEOUT:-1500}" || vmrc=$?
			printf '%s %s %s\n' "$vmrc" "$start" "$(now)" > "$scratch/vm-result"
		) &
		pid=$!
	done
	wait "$pid" || true
	for k in ${ARCH_KERNELS[$arch]}; do
		scratch=${scratches[0]} scratches=("${scratches[@]:1}")
		rc=125 t0=$(now) t1=$t0
		[[ ! -f $scratch/vm-result ]] || read -r rc t0 t1 < "$scratch/vm-result"
		phase_add "VM $k" "$t0" "$t1"
		arch_count "$k" "$scratch" "$rc"
	done
	log "test: done in $(($(now) - PHASE_T0))s"
	echo
	echo "=== Phase times ==="
	phase_table | sed 's/^/  /'
	test_summary
}
