# shellcheck shell=bash
# harness/ue build-matrix: the series' kernel objects compiled with W=1 in
# configurations other than the test kernel's, on the host, nothing booted:
# Debian's own amd64 kernel with USER_EVENTS, the other architectures
# (arm64, arm64 with 64 KiB pages, s390x, i386), and the test kernel
# without, one at a time, each option user_events has code for.  Each
# configuration is built in $MATRIX_DIR/NAME (incrementally on the next
# run); a configuration passes when every object of the series that it
# builds compiles without an error, and without a warning in a file the
# series adds or in a line it changes.  Ends with "N passed, N failed".

# Debian's configuration of its amd64 kernel (package linux-config-6.1)
MATRIX_DEBIAN_CONFIG=/usr/src/linux-config-6.1/config.amd64_none_amd64.xz
# Besides DEPS_PACKAGES: Debian's configurations, and the cross
# toolchains (arm64 with the clang of DEPS_PACKAGES, LLVM=1; s390x needs
# clang 16 and GNU binutils)
MATRIX_PACKAGES=(linux-config-6.1 clang-16 llvm-16 lld-16 binutils-s390x-linux-gnu)

# The configurations: NAME ARCH TOOLCHAIN BASE [SETTING...]
#   TOOLCHAIN  a toolchain of TOOLCHAIN_MAKE (harness/lib/common.sh)
#   BASE       test: the plain test kernel's configuration (x86_64);
#              tiny: tinyconfig with Kconfig.fragment and the selftests'
#              config; defconfig: the architecture's, with the same two;
#              debian: $MATRIX_DEBIAN_CONFIG
#   SETTING    CONFIG_X=y|n|value, merged last and checked in the result;
#              one that Kconfig does not allow makes the configuration
#              skipped, not failed
# Every configuration also gets CONFIG_WERROR=n: the base tree's own W=1
# warnings must not stop the build of an object; ours are looked for.
# Where an option is selected or has no prompt, what selects or enables
# it goes too: x86 always has PERF_EVENTS (arm64 does not), BPF_EVENTS
# follows BPF_SYSCALL, SYSCTL follows PROC_SYSCTL.  s390's 31-bit
# compat is gcc's only, arm64's needs EXPERT with 64 KiB pages.
MATRIX=(
	"debian-amd64 x86_64 gcc debian CONFIG_USER_EVENTS=y"
	"arm64 arm64 llvm defconfig CONFIG_COMPAT=y"
	"arm64-64k arm64 llvm defconfig CONFIG_ARM64_64K_PAGES=y"
	"s390x s390 s390-clang defconfig"
	"i386 i386 gcc defconfig CONFIG_X86_32=y"
	"no-perf-events arm64 llvm tiny CONFIG_PERF_EVENTS=n CONFIG_BPF_EVENTS=n"
	"no-bpf-events x86_64 gcc test CONFIG_BPF_SYSCALL=n CONFIG_BPF_EVENTS=n"
	"no-sysctl x86_64 gcc test CONFIG_PROC_SYSCTL=n CONFIG_SYSCTL=n"
	"no-user-ns x86_64 gcc test CONFIG_USER_NS=n"
	"no-memcg x86_64 gcc test CONFIG_MEMCG=n"
	"no-snapshot x86_64 gcc test CONFIG_TRACER_SNAPSHOT=n"
	"no-ia32-emulation x86_64 gcc test CONFIG_IA32_EMULATION=n"
	"no-smp x86_64 gcc test CONFIG_SMP=n"
	"no-uprobes x86_64 gcc test CONFIG_UPROBES=n CONFIG_UPROBE_EVENTS=n"
)

# matrix_make NAME ARCH TOOLCHAIN ARGS...: make in the configuration's
# directory
matrix_make() {
	local name=$1 arch=$2 tc=$3
	shift 3
	[[ -v TOOLCHAIN_MAKE[$tc] ]] || die "build-matrix: unknown toolchain $tc"
	# shellcheck disable=SC2206 # the toolchain's words
	local -a tcargs=(${TOOLCHAIN_MAKE[$tc]})
	make -C "$TREE" O="$MATRIX_DIR/$name" ARCH="$arch" "${tcargs[@]}" "$@"
}

# matrix_config NAME ARCH TOOLCHAIN BASE SETTING...: write the
# configuration's .config; print the settings Kconfig did not allow
matrix_config() {
	local name=$1 arch=$2 tc=$3 base=$4
	shift 4
	local dir=$MATRIX_DIR/$name frag opt want have s
	local -a frags=()
	mkdir -p "$dir"
	frag=$dir/settings.config
	: > "$frag"
	for s in "$@" CONFIG_WERROR=n; do
		if [[ $s == *=n ]]; then
			printf '# %s is not set\n' "${s%=n}" >> "$frag"
		else
			printf '%s\n' "$s" >> "$frag"
		fi
	done
	case $base in
	test)
		UE_FLAVOUR='' UE_EXTRA_CONFIG=''
		mapfile -t frags < <(config_fragments)
		run_logged "$MATRIX_LOG" matrix_make "$name" "$arch" "$tc" tinyconfig ;;
	tiny | defconfig)
		frags=("$REPO_DIR/Kconfig.fragment" "$TREE/$KSFT_CONFIG")
		run_logged "$MATRIX_LOG" matrix_make "$name" "$arch" "$tc" "${base/tiny/tinyconfig}" ;;
	debian)
		xzcat "$MATRIX_DEBIAN_CONFIG" > "$dir/.config" ||
			die "build-matrix: cannot read $MATRIX_DEBIAN_CONFIG" ;;
	*) die "build-matrix: unknown base $base" ;;
	esac
	run_logged "$MATRIX_LOG" env -C "$TREE" ARCH="$arch" \
		scripts/kconfig/merge_config.sh -m -O "$dir" "$dir/.config" \
		"${frags[@]}" "$frag" > /dev/null
	run_logged "$MATRIX_LOG" matrix_make "$name" "$arch" "$tc" olddefconfig
	while IFS=$'\t' read -r opt want; do
		have=$(sed -n "s/^$opt=//p" "$dir/.config")
		[[ $want == "${have:-n}" ]] || printf '%s=%s (.config: %s)\n' "$opt" "$want" "${have:-n}"
	done < <(fragment_settings "$frag")
}

# matrix_objects DIR: the objects of the series' C files under kernel/ and
# mm/ that the configuration in DIR builds: those whose Makefile line
# "obj-$(CONFIG_X) += ... NAME.o" names an option that is set, and those
# no such line names (obj-y)
matrix_objects() {
	local dir=$1 f d o opt
	while IFS= read -r f; do
		d=${f%/*} o=$(basename "$f" .c).o
		opt=$(awk -v o="$o" '
			$1 ~ /^obj-\$\(CONFIG_[A-Z0-9_]+\)$/ {
				for (i = 2; i <= NF; i++)
					if ($i == o) { print substr($1, 7, length($1) - 7); exit }
			}' "$TREE/$d/Makefile")
		[[ -z $opt ]] || grep -q "^$opt=y" "$dir/.config" || continue
		printf '%s\n' "$d/$o"
	done < <(tgit diff --name-only --diff-filter=AM base series -- 'kernel/*.c' 'mm/*.c')
}

# matrix_series_lines: "FILE LINE" of every line the series adds or
# changes in the kernel, "FILE *" for a file it adds
matrix_series_lines() {
	tgit diff -U0 --no-color --diff-filter=AM base series -- \
		'kernel/*' 'mm/*' 'include/*' |
	awk '
		/^\+\+\+ b\// { file = substr($0, 7); next }
		/^new file mode/ { newfile = 1; next }
		/^diff --git/ { if (newfile && file != "") print file, "*"; newfile = 0; file = ""; next }
		/^@@/ {
			split($3, a, ","); start = substr(a[1], 2); n = (a[2] == "") ? 1 : a[2]
			for (i = 0; i < n; i++) print file, start + i
		}
		END { if (newfile && file != "") print file, "*" }
	'
}

# matrix_ours LOG LINES: the warnings and errors of the build log LOG that
# concern the series (LINES from matrix_series_lines), and every error
matrix_ours() {
	awk -v tree="$TREE/" '
		NR == FNR { ours[$1 " " $2] = 1; next }
		/: (warning|error):/ {
			split($0, p, ":"); f = p[1]; sub("^" tree, "", f); sub("^(\\.\\./)+", "", f)
			if ($0 ~ /: error:/ || ours[f " *"] || ours[f " " p[2]]) print
		}
	' "$2" "$1" | sort -u
}

cmd_build_matrix() {
	local entry name arch tc base out t0 bad objlog lines
	local -a want=("$@") settings=() objs=()
	local -i passed=0 failed=0 skipped=0
	once cmd_deps
	local missing=() pkg
	for pkg in "${MATRIX_PACKAGES[@]}"; do
		pkg_installed "$pkg" || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) || { log "build-matrix: installing ${missing[*]}"; apt_install "${missing[@]}"; }
	once cmd_apply
	mkdir -p "$MATRIX_DIR"
	lines=$MATRIX_DIR/series-lines
	matrix_series_lines > "$lines"

	for entry in "${MATRIX[@]}"; do
		read -ra settings <<<"$entry"
		name=${settings[0]} arch=${settings[1]} tc=${settings[2]} base=${settings[3]}
		settings=("${settings[@]:4}")
		((${#want[@]} == 0)) || [[ " ${want[*]} " == *" $name "* ]] || continue
		t0=$(now)
		log "build-matrix: $name ($arch, $tc, $base${settings[*]:+ + ${settings[*]}})"
		if ! bad=$(matrix_config "$name" "$arch" "$tc" "$base" "${settings[@]}"); then
			printf '  FAIL %-18s configuration failed (log: %s)\n' "$name" "$MATRIX_LOG"
			failed+=1
			continue
		fi
		if [[ -n $bad ]]; then
			printf '  SKIP %-18s Kconfig does not allow %s\n' "$name" "$(tr '\n' ' ' <<<"$bad")"
			skipped+=1
			continue
		fi
		if ! grep -q '^CONFIG_USER_EVENTS=y' "$MATRIX_DIR/$name/.config"; then
			printf '  FAIL %-18s USER_EVENTS is not set\n' "$name"
			failed+=1
			continue
		fi
		mapfile -t objs < <(matrix_objects "$MATRIX_DIR/$name")
		objlog=$MATRIX_DIR/$name/objects.log
		# Every object again: W=1 warnings are only seen when it compiles
		rm -f "${objs[@]/#/$MATRIX_DIR/$name/}"
		if run_logged "$MATRIX_LOG" matrix_make "$name" "$arch" "$tc" -j"$JOBS" prepare &&
			matrix_make "$name" "$arch" "$tc" -j"$JOBS" W=1 "${objs[@]}" > "$objlog" 2>&1; then
			out=$(matrix_ours "$objlog" "$lines")
		else
			out=$(matrix_ours "$objlog" "$lines")
			[[ -n $out ]] || out="the build failed: see $objlog"
		fi
		if [[ -z $out ]]; then
			printf '  PASS %-18s %d objects, %ss\n' "$name" "${#objs[@]}" "$(($(now) - t0))"
			passed+=1
		else
			printf '  FAIL %-18s %d objects, %ss\n' "$name" "${#objs[@]}" "$(($(now) - t0))"
			printf '%s\n' "$out" | sed 's/^/       | /'
			failed+=1
		fi
	done
	((skipped == 0)) || echo "  ($skipped skipped)"
	echo "$passed passed, $failed failed"
	((failed == 0 && passed > 0))
}
