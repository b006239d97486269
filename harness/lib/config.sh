# shellcheck shell=bash
# harness/ue config: the VM kernel configuration in $BUILD_DIR/.config.
#
# tinyconfig, then merge_config.sh -m of (later fragments win):
#   harness/vm.config                        what the test VM needs
#                                            (VM_FRAGMENTS)
#   Kconfig.fragment                         what the feature needs
#   tools/testing/selftests/user_events/config  what its selftests need
#   harness/flavours/$UE_FLAVOUR.config      e.g. the debug checkers
#   harness/arch/KERNEL.config               a kernel of another
#                                            architecture (ARCH_FRAGMENT,
#                                            harness/lib/arch.sh)
#   $UE_EXTRA_CONFIG                         anything else
# then olddefconfig.  merge_config silently drops options whose dependencies
# are unmet, so every option of every fragment is checked in the result.

KSFT_CONFIG=tools/testing/selftests/user_events/config
# The test VM's own fragments, and the fragment of another architecture's
# kernel (empty here: harness/lib/arch.sh sets both for its kernels)
VM_FRAGMENTS=("$HARNESS_DIR/vm.config")
ARCH_FRAGMENT=

# config_fragments: the fragment files, in merge order.
config_fragments() {
	printf '%s\n' "${VM_FRAGMENTS[@]}"
	[[ ! -f $REPO_DIR/Kconfig.fragment ]] || printf '%s\n' "$REPO_DIR/Kconfig.fragment"
	# The kselftest convention: the options the selftests need.
	[[ ! -f $TREE/$KSFT_CONFIG ]] || printf '%s\n' "$TREE/$KSFT_CONFIG"
	if [[ -n $UE_FLAVOUR ]]; then
		[[ -f $HARNESS_DIR/flavours/$UE_FLAVOUR.config ]] ||
			die "UE_FLAVOUR=$UE_FLAVOUR: no harness/flavours/$UE_FLAVOUR.config"
		printf '%s\n' "$HARNESS_DIR/flavours/$UE_FLAVOUR.config"
	fi
	[[ -z $ARCH_FRAGMENT ]] || printf '%s\n' "$ARCH_FRAGMENT"
	if [[ -n ${UE_EXTRA_CONFIG:-} ]]; then
		[[ -f $UE_EXTRA_CONFIG ]] || die "UE_EXTRA_CONFIG=$UE_EXTRA_CONFIG: no such file"
		realpath "$UE_EXTRA_CONFIG"
	fi
}

# config_inputs_sum: checksum of everything the .config depends on: the
# fragments and every Kconfig file of the tree (the series edits some).
config_inputs_sum() {
	local -a frags
	mapfile -t frags < <(config_fragments)
	{
		fingerprint "${frags[@]}"
		tgit ls-files -s -- ':(glob)**/Kconfig*' | sha256sum
		echo "$KARCH"
	} | sha256sum | cut -d' ' -f1
}

# fragment_settings FRAGMENT...: "CONFIG_X<TAB>value" for each option, the
# last fragment winning; "n" stands for "is not set".
fragment_settings() {
	awk '
		/^CONFIG_[A-Za-z0-9_]+=/ {
			i = index($0, "=")
			set[substr($0, 1, i - 1)] = substr($0, i + 1)
			next
		}
		/^# CONFIG_[A-Za-z0-9_]+ is not set/ { set[$2] = "n" }
		END { for (k in set) printf "%s\t%s\n", k, set[k] }
	' "$@" | LC_ALL=C sort
}

# config_verify: every fragment option must hold in .config.
config_verify() {
	local -a frags
	local opt want have bad=0
	mapfile -t frags < <(config_fragments)
	while IFS=$'\t' read -r opt want; do
		have=$(awk -v o="$opt" '
			index($0, o "=") == 1 { print substr($0, length(o) + 2); exit }
		' "$BUILD_DIR/.config")
		[[ -n $have ]] || have=n
		[[ $want == "$have" ]] && continue
		warn "config: $opt=$want requested, .config has ${opt}=${have}"
		bad=$((bad + 1))
	done < <(fragment_settings "${frags[@]}")
	((bad == 0)) || die "config: $bad option(s) did not make it into $BUILD_DIR/.config (unmet dependencies?)"
}

# config_make: the .config of $TREE in $BUILD_DIR, remade only when its
# inputs changed.  harness/ue mutants calls it with its own TREE and
# BUILD_DIR (bash's dynamic scoping).
config_make() {
	local sum stamp=$BUILD_DIR/.ue-config.stamp
	sum=$(config_inputs_sum)
	if [[ -f $BUILD_DIR/.config && -f $stamp && $(<"$stamp") == "$sum" ]]; then
		log "config: up to date"
		config_verify
		return 0
	fi
	local -a frags
	mapfile -t frags < <(config_fragments)
	log "config: tinyconfig + ${frags[*]##*/}"
	mkdir -p "$BUILD_DIR"
	rm -f "$stamp"
	run_logged "$CONFIG_LOG" kmake tinyconfig
	run_logged "$CONFIG_LOG" env -C "$TREE" ARCH="$KARCH" \
		scripts/kconfig/merge_config.sh -m -O "$BUILD_DIR" "$BUILD_DIR/.config" "${frags[@]}"
	run_logged "$CONFIG_LOG" kmake olddefconfig
	config_verify
	printf '%s\n' "$sum" > "$stamp"
	log "config: written $BUILD_DIR/.config"
}

cmd_config() {
	once cmd_apply
	config_make
}
