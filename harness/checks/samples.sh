# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are used by the checks
# The sample programs of samples/user_events, for the end-to-end checks
# (sourced, after tap.sh).  Each check runs its tool on the event of every
# sample: "example" registers it through the status page, "enable_bit"
# through the enable bit layout of Linux 6.4 and later.  Run as
# "SAMPLE -n COUNT -i 0", a sample writes its event COUNT times at once;
# sample_fields says what each record holds.

TRACEFS=/sys/kernel/tracing
SAMPLES_DIR=${UE_SAMPLES_DIR:-$UE_CACHE/samples}
SAMPLES=(example enable_bit)
declare -A SAMPLE_EVENT=([example]=example_event [enable_bit]=enable_bit_event)
# Samples whose event is automatic: deleted once nothing uses it (what a
# trace buffer recorded of it stays readable).
declare -A SAMPLE_AUTOMATIC=([enable_bit]=1)
SAMPLE_HOLDER=

# SAMPLE_BIG_ENDIAN: 1 where the guest stores the high byte of a number
# first (s390x), for the fields printed as bytes
SAMPLE_BIG_ENDIAN=0
[[ $(printf AB | od -An -tx2) != *4142* ]] || SAMPLE_BIG_ENDIAN=1

# sample_s32_bytes N: the 4 bytes of the s32 N in memory, as printed
sample_s32_bytes() {
	local v=$(($1 & 0xffffffff)) b=()
	b=($((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24)))
	((SAMPLE_BIG_ENDIAN)) && b=("${b[3]}" "${b[2]}" "${b[1]}" "${b[0]}")
	printf '%02x %02x %02x %02x' "${b[@]}"
}

# sample_fields SAMPLE I COUNT [QUOTE [BURST]]: the fields of record I
# (from 0) of a run of COUNT, as tools print them (an extended regular
# expression), string values between QUOTEs; with BURST (example -b),
# each of the COUNT iterations wrote BURST records.
sample_fields() {
	local i=$2 n=$3 q=${4:-} burst=${5:-1}
	case $1 in
	example)
		# point is struct { s32 x, y; } = { i, -i }, printed as bytes
		printf 'time_ns=[0-9]+ count=%d pid=[0-9]+ program=%sexample%s ' "$i" "$q" "$q"
		printf 'point=%s %s ' "$(sample_s32_bytes "$i")" "$(sample_s32_bytes $((-i)))"
		printf 'message=%siteration %d of %d%s note=%sfrom example.c%s' \
			"$q" $((i / burst + 1)) "$n" "$q" "$q" "$q"
		;;
	enable_bit)
		printf 'count=%d message=%siteration %d of %d%s' "$i" "$q" $((i + 1)) "$n" "$q"
		;;
	esac
}

# sample_lines SAMPLE COUNT PREFIX [QUOTE]: the lines a tool prints for a
# run of COUNT, each PREFIX and the fields (sample_fields), to the end.
sample_lines() {
	local i
	for ((i = 0; i < $2; i++)); do
		printf '%s%s$\n' "$3" "$(sample_fields "$1" "$i" "$2" "${4:-}")"
	done
}

# sample_tap_lines DESC FILE SAMPLE COUNT MARKER PREFIX [QUOTE]: one test,
# that FILE has the lines a tool prints for a run of SAMPLE writing COUNT
# records (sample_lines with PREFIX and QUOTE), and no other line
# matching MARKER (tap_lines).
sample_tap_lines() {
	local desc=$1 file=$2 sample=$3 n=$4 lines
	TAP_MARKER=$5
	mapfile -t lines < <(sample_lines "$sample" "$n" "$6" "${7:-}")
	tap_lines "$desc" "$file" "${lines[@]}"
}

# sample_built SAMPLE TESTS: true if SAMPLE was built, else TESTS skips.
sample_built() {
	[[ -x $SAMPLES_DIR/$1 ]] && return 0
	tap_skip "$2" "sample program $1 not built (no $SAMPLES_DIR/$1)"
	return 1
}

# sample_event_dir SAMPLE: the tracefs directory of SAMPLE's event.
sample_event_dir() {
	printf '%s/events/user_events/%s\n' "$TRACEFS" "${SAMPLE_EVENT[$1]}"
}

# sample_wait_gone DIR: true once DIR is gone (60 s at most: an automatic
# event is deleted by a worker).
sample_wait_gone() {
	local _
	for _ in $(seq 300); do
		[[ -e $1 ]] || return 0
		sleep 0.2
	done
	return 1
}

# sample_hold SAMPLE: make SAMPLE's event exist until a tracer attaches to
# it, so that the tracer finds it when it starts.  A status page event
# stays once registered.  An automatic one goes with its last user: a first
# run of the sample registers it and waits (-w) in the background until a
# tracer sets its enable bit, then exits, leaving the event to the tracer.
sample_hold() {
	local sample=$1 dir _
	dir=$(sample_event_dir "$sample")
	if [[ -z ${SAMPLE_AUTOMATIC[$sample]:-} ]]; then
		"$SAMPLES_DIR/$sample" -n 0 > /dev/null
		return
	fi
	"$SAMPLES_DIR/$sample" -w 1200 -n 0 > "/tmp/$sample-holder.txt" 2>&1 &
	SAMPLE_HOLDER=$!
	for _ in $(seq 300); do
		[[ -d $dir ]] && return 0
		kill -0 "$SAMPLE_HOLDER" 2> /dev/null || break
		sleep 0.2
	done
	echo "# $sample did not register ${SAMPLE_EVENT[$sample]}:"
	sed 's/^/# /' "/tmp/$sample-holder.txt"
	return 1
}

# sample_ftrace SAMPLE 1|0: SAMPLE's event enabled in ftrace, held first
# (sample_hold) and with the trace cleared; or disabled.
sample_ftrace() {
	if (($2)); then
		sample_hold "$1"
		echo > "$TRACEFS/trace"
	fi
	echo "$2" > "$(sample_event_dir "$1")/enable"
}

# sample_holder_done SECONDS: true once the waiting sample of sample_hold
# has exited: a tracer set its enable bit.
sample_holder_done() {
	local _
	[[ -n $SAMPLE_HOLDER ]] || return 0
	for _ in $(seq $(($1 * 5))); do
		kill -0 "$SAMPLE_HOLDER" 2> /dev/null || break
		sleep 0.2
	done
	! kill -0 "$SAMPLE_HOLDER" 2> /dev/null
}

# sample_release: end the waiting sample of sample_hold, if any.
sample_release() {
	[[ -n $SAMPLE_HOLDER ]] || return 0
	kill "$SAMPLE_HOLDER" 2> /dev/null
	wait "$SAMPLE_HOLDER" 2> /dev/null
	SAMPLE_HOLDER=
}
trap sample_release EXIT

# sample_check_detached SAMPLE TOOL: one test, that nothing uses SAMPLE's
# event any more: its status byte is 0, or the automatic event is gone.
sample_check_detached() {
	local sample=$1 event=${SAMPLE_EVENT[$1]}
	if [[ -n ${SAMPLE_AUTOMATIC[$sample]:-} ]]; then
		tap_check "$2 detached: $event deleted with its last user" \
			sample_wait_gone "$(sample_event_dir "$sample")"
	else
		tap_check "$2 detached: $event's status byte back to 0" \
			grep -q -x "[0-9]*:$event" "$TRACEFS/user_events_status"
	fi
}
