# shellcheck shell=bash
# harness/ue run / shell: boot the built kernel under QEMU.
#
# The guest gets the host's root file system read-only (9p tag "hostroot")
# and a writable per-run scratch directory (9p tag "scratch", /run/ue in the
# guest).  The host writes the command to scratch/cmd; the guest init
# (harness/guest-init) runs it and leaves output, status and dmesg there.

UE_ACCEL=${UE_ACCEL:-tcg}
UE_MEM=${UE_MEM:-2G}
UE_SMP=${UE_SMP:-2}
UE_TIMEOUT=${UE_TIMEOUT:-900}              # seconds, "run"
UE_SHELL_TIMEOUT=${UE_SHELL_TIMEOUT:-14400} # seconds, "shell"
RUNS_KEEP=10                                 # scratch directories kept
GUEST_SCRATCH=/run/ue                        # where the guest mounts scratch
GUEST_SHARED=/run/ue-shared                  # and VM_SHARED (see vm_boot)

# Kernel command line words a flavour needs.  The debug kernel runs ACPI's
# AML interpreter so slowly under TCG that evaluating the PCI interrupt
# routing (_PRT) hits the interpreter's loop timeout: virtio-pci gets no
# interrupt and the 9p root never mounts.  acpi=noirq routes PCI interrupts
# without ACPI; the plain kernel keeps ACPI for them (nothing else changes:
# ACPI's timers, which the TSC calibration needs, stay in both).
# The same interpreter, with KASAN saving a stack trace for each of its
# allocations, kept PID 1 from a quiescent state for more than the RCU
# stall detector's 21 s at boot when two debug VMs shared the host's two
# cores (twice on 2026-11-27, CI and here): 21 s is meant for hardware,
# not for this kernel under TCG.  120 s still reports a CPU held forever.
declare -A FLAVOUR_CMDLINE=(
	[debug]="acpi=noirq rcupdate.rcu_cpu_stall_timeout=120"
)

# --- initramfs -----------------------------------------------------------------

# initramfs_spec: gen_init_cpio description of the initramfs.
initramfs_spec() {
	cat <<SPEC
dir /bin 755 0 0
file /bin/busybox $(command -v busybox || echo /bin/busybox) 755 0 0
slink /bin/sh busybox 777 0 0
file /init $HARNESS_DIR/initramfs-init 755 0 0
dir /dev 755 0 0
nod /dev/console 600 0 0 c 5 1
dir /proc 755 0 0
dir /sys 755 0 0
dir /newroot 755 0 0
SPEC
}

# initramfs_build: (re)build $INITRAMFS when its inputs changed.  Uses the
# kernel's own gen_init_cpio, so no root is needed for /dev/console.
initramfs_build() {
	local stamp=$INITRAMFS.stamp sum gen=$BUILD_DIR/usr/gen_init_cpio
	[[ -x /bin/busybox ]] || die "/bin/busybox missing: run 'harness/ue deps' (busybox-static)"
	sum=$( { initramfs_spec; fingerprint /bin/busybox "$HARNESS_DIR/initramfs-init"; } | sha256sum)
	[[ -f $INITRAMFS && -f $stamp && $(<"$stamp") == "$sum" ]] && return 0
	[[ -x $gen ]] || die "$gen missing: run 'harness/ue build'"
	log "vm: building $INITRAMFS"
	local tmp
	tmp=$(mktemp "$INITRAMFS.XXXXXX")
	"$gen" <(initramfs_spec) | gzip -9 -n > "$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$INITRAMFS"
	printf '%s\n' "$sum" > "$stamp"
}

# --- scratch directories ---------------------------------------------------------

# scratch_new: a fresh scratch directory (printed); old ones are pruned.
scratch_new() {
	local dir
	mkdir -p "$RUNS_DIR"
	dir=$(mktemp -d "$RUNS_DIR/$(date +%Y%m%d-%H%M%S)-XXXX")
	chmod 755 "$dir"
	ln -sfn "$(basename "$dir")" "$RUNS_DIR/latest"
	find "$RUNS_DIR" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort |
		head -n -"$RUNS_KEEP" | xargs -r rm -rf
	printf '%s\n' "$dir"
}

# scratch_cmd SCRATCH MODE WORDS...: write the guest command script.  Like
# ssh, the words are joined with spaces and run by bash, so both
# "run -- ls -l /" and "run -- 'ls | wc -l'" work.
scratch_cmd() {
	local scratch=$1 mode=$2
	shift 2
	printf '%s\n' "$mode" > "$scratch/mode"
	# Host paths the guest must see even under its tmpfs mounts.
	printf '%s\n' "$UE_CACHE" "$REPO_DIR" "$PWD" > "$scratch/keep"
	{
		echo "# written by harness/ue"
		local var
		for var in $(compgen -v UE_); do
			[[ -v $var ]] && printf 'export %s=%q\n' "$var" "${!var}"
		done
		printf 'export UE_SCRATCH=%q UE_CACHE=%q UE_REPO=%q UE_HARNESS=%q\n' \
			"$GUEST_SCRATCH" "$UE_CACHE" "$REPO_DIR" "$HARNESS_DIR"
		[[ -z ${VM_SHARED:-} ]] || printf 'export UE_SHARED=%q\n' "$GUEST_SHARED"
		printf 'export TERM=%q\n' "${TERM:-linux}"
		printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
		if [[ $mode == shell ]]; then
			local rows cols
			read -r rows cols < <(stty size 2>/dev/null || echo "24 80")
			printf 'stty rows %d cols %d 2>/dev/null\n' "$rows" "$cols"
			# shellcheck disable=SC2016 # expanded in the guest
			echo 'echo "user_events test VM: $(uname -r). Exit the shell to power off."'
			echo 'exec /bin/bash -l'
		else
			printf '%s\n' "$*"
		fi
	} > "$scratch/cmd"
}

# --- QEMU -------------------------------------------------------------------

# host_tsc_khz: the host's TSC frequency in kHz (lib/tsc-khz.c, built once
# into $UE_CACHE/bin), which a TCG guest's TSC runs at.  A guest left to
# calibrate its TSC against the emulated PIT on a busy host took it for
# 302 MHz instead of 2596 (2026-11-28): its clock then ran 8.6 times too
# fast, and every timeout and timing case in it with it.
host_tsc_khz() {
	local src=$HARNESS_DIR/lib/tsc-khz.c bin=$UE_CACHE/bin/tsc-khz
	# Built under another name and renamed: VMs booting side by side
	# may build it at once, and one may run it while another writes it
	if [[ ! -x $bin || $src -nt $bin ]]; then
		mkdir -p "$UE_CACHE/bin"
		gcc -O2 -Wall -o "$bin.$BASHPID" "$src" && mv -f "$bin.$BASHPID" "$bin" ||
			die "vm: cannot build $bin"
	fi
	"$bin"
}

# qemu_args SCRATCH MODE: the QEMU command line (without the timeout).
qemu_args() {
	local scratch=$1 mode=$2 append extra=${FLAVOUR_CMDLINE[$(flavour_name)]:-} khz
	khz=$(host_tsc_khz) || die "vm: cannot measure the host's TSC frequency"
	# tp_printk only makes tracepoint_printk available: guest-init turns
	# it off, tests turn it on while they check it.
	append="console=ttyS0 tsc=reliable tsc_early_khz=$khz panic=-1"
	append+=" printk.devkmsg=on tp_printk"
	append+=" ue.init=$HARNESS_DIR/guest-init${extra:+ $extra}"
	[[ $mode != shell ]] || append+=" quiet"
	# shellcheck disable=SC2054 # the commas are QEMU's option syntax
	QEMU_ARGS=(
		qemu-system-x86_64 -accel "$UE_ACCEL" -cpu max -smp "$UE_SMP" -m "$UE_MEM"
		-nographic -no-reboot
		-kernel "$BZIMAGE" -initrd "$INITRAMFS" -append "$append"
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
		-virtfs "local,path=$scratch,mount_tag=scratch,security_model=none,multidevs=remap"
	)
	if [[ -n ${VM_SHARED:-} ]]; then
		QEMU_ARGS+=(-virtfs "local,path=$VM_SHARED,mount_tag=shared,security_model=none,multidevs=remap")
		: > "$scratch/shared"
	fi
	if [[ $mode == shell ]]; then
		# Serial and monitor on the terminal (Ctrl-A X quits), logged too.
		QEMU_ARGS+=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$scratch/console.log"
			-serial chardev:con -mon chardev=con)
	else
		QEMU_ARGS+=(-chardev "file,id=con,path=$scratch/console.log"
			-serial chardev:con -monitor none)
	fi
}

# vm_report SCRATCH QEMU_RC TIMEOUT: turn a finished VM run into an exit
# status: the command's, or non-zero with an explanation.
vm_report() {
	local scratch=$1 qrc=$2 timeout=$3
	if [[ -f $scratch/status ]]; then
		return "$(<"$scratch/status")"
	fi
	local rc=125
	if [[ -f $scratch/silent ]]; then
		warn "vm: TIMEOUT: the VM printed nothing for $(<"$scratch/silent")s and was stopped as hung"
		rc=124
	elif ((qrc == 124 || qrc == 137)); then
		warn "vm: TIMEOUT: the VM was killed after ${timeout}s"
		rc=124
	else
		warn "vm: the guest never reported an exit status (QEMU exit $qrc): crash, panic or boot failure?"
	fi
	warn "vm: last lines of $scratch/console.log:"
	tail -n 60 "$scratch/console.log" >&2 2>/dev/null || true
	return "$rc"
}

# vm_watch PID SCRATCH SECONDS: stop the VM (PID: its timeout command)
# once neither its output nor its console log has grown for SECONDS.  A
# hang is told apart from a slow machine by its silence, not by the time
# the whole run took: a slow run keeps printing.
vm_watch() {
	local pid=$1 scratch=$2 silence=$3 size last= quiet=0
	while sleep 10 && kill -0 "$pid" 2>/dev/null; do
		size=$(stat -c %s "$scratch/output" "$scratch/console.log" 2>/dev/null | tr '\n' ' ')
		if [[ $size != "$last" ]]; then
			last=$size quiet=0
			continue
		fi
		quiet=$((quiet + 10))
		if ((quiet >= silence)); then
			printf '%s\n' "$quiet" > "$scratch/silent"
			kill "$pid" 2>/dev/null
			return
		fi
	done
}

# vm_boot SCRATCH MODE TIMEOUT: boot, wait (streaming the command output in
# "run" mode), and return the command's exit status.  VM_SHARED, when set,
# is a host directory that the guest gets writable as $UE_SHARED, for
# several VMs to share (harness/lib/test.sh).  VM_SILENCE, when set, stops
# a VM in "run" mode that printed nothing for that many seconds (vm_watch).
vm_boot() {
	local scratch=$1 mode=$2 timeout=$3 qrc=0 t0 tailpid= watchpid=
	need_kernel
	initramfs_build
	qemu_args "$scratch" "$mode"
	printf '%q ' "${QEMU_ARGS[@]}" > "$scratch/qemu.cmd"
	t0=$(now)
	log "vm: booting the $(flavour_name) kernel of $UE_BASE ($UE_ACCEL, timeout ${timeout}s, scratch $scratch)"
	if [[ $mode == shell ]]; then
		timeout --foreground "$timeout" "${QEMU_ARGS[@]}" || qrc=$?
	else
		: > "$scratch/output"
		timeout -k 10 "$timeout" "${QEMU_ARGS[@]}" < /dev/null > "$scratch/qemu.log" 2>&1 &
		local qpid=$!
		# Background jobs ignore Ctrl-C: take the VM down with us.
		trap 'kill "$qpid" 2>/dev/null; wait "$qpid"; exit 130' INT TERM
		tail -n +1 -f --pid="$qpid" "$scratch/output" &
		tailpid=$!
		if [[ -n ${VM_SILENCE:-} ]]; then
			vm_watch "$qpid" "$scratch" "$VM_SILENCE" > /dev/null 2>&1 &
			watchpid=$!
		fi
		wait "$qpid" || qrc=$?
		wait "$tailpid" || true
		[[ -z $watchpid ]] || kill "$watchpid" 2>/dev/null || true
		trap - INT TERM
	fi
	[[ ! -s $scratch/qemu.log ]] || { warn "vm: QEMU said:"; cat "$scratch/qemu.log" >&2; }
	log "vm: finished in $(($(now) - t0))s"
	vm_report "$scratch" "$qrc" "$timeout"
}

# --- Commands ----------------------------------------------------------------

cmd_run() {
	local timeout=$UE_TIMEOUT
	while (($#)); do
		case $1 in
		--timeout) timeout=$2; shift 2 ;;
		--timeout=*) timeout=${1#*=}; shift ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	if (($# == 0)); then
		[[ -t 0 ]] || die "run: no command given (and stdin is not a terminal for a shell)"
		cmd_shell
		return
	fi
	local scratch
	scratch=$(scratch_new)
	scratch_cmd "$scratch" run "$@"
	vm_boot "$scratch" run "$timeout"
}

cmd_shell() {
	[[ -t 0 ]] || die "shell: stdin is not a terminal"
	local scratch
	scratch=$(scratch_new)
	scratch_cmd "$scratch" shell
	vm_boot "$scratch" shell "$UE_SHELL_TIMEOUT"
}
