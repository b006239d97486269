# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are used by the other parts
# Common settings and helpers for harness/ue.  Sourced, not executed.
#
# Every path and tunable of the harness is defined here, once.

# --- Locations ---------------------------------------------------------------

# HARNESS_DIR and REPO_DIR are set by harness/ue before sourcing us.
UE_CACHE=${UE_CACHE:-${HOME:-/root}/.cache/user-events}

# --- The base tree -----------------------------------------------------------

# The series serves two base trees: Debian 12's linux-source-6.1 (the
# default) and Debian 13's linux-source-6.12 (UE_BASE=6.12, or --base 6.12
# on the command line).  Where the series differs on a base, that base's
# directory bases/BASE/ of the repository says how (bases/README).  Each
# base other than the default has its own cache, a subdirectory of
# $UE_CACHE, so that the trees, builds and results of the two never mix.
UE_BASE=${UE_BASE:-6.1}
# The cache of the default base; a harness/ue started by another for a
# base of its own inherits that base's subdirectory as UE_CACHE.
UE_CACHE_ROOT=${UE_CACHE%/base-"$UE_BASE"}

# base_use BASE: make BASE the base tree the following steps work on: its
# settings, $UE_CACHE (locked as the one before it, if that was) and every
# path in it, and the current flavour's build directory there.  A command
# works on one base; "harness/ue test" may switch between two.
base_use() {
	case $1 in
	# BASE_ABI: the layout of struct user_reg that the base's programs get
	# from <linux/user_events.h> without a macro, as they did from the
	# base's own header: 6.1's programs (and 5.18's) the status page,
	# 6.12's the enable bit.
	6.1) BASE_DIR='' BASE_SELFTESTS='' BASE_ABI=status-page ;;
	6.12)
		BASE_DIR=$REPO_DIR/bases/6.12
		# The base's own user_events selftests (mainline's, for its
		# enable bit ABI), which the series replaces: built as the base
		# has them and run too, as programs written for that ABI
		BASE_SELFTESTS=1
		BASE_ABI=enable-bit ;;
	*) die "unknown base $1 (6.1 or 6.12)" ;;
	esac
	UE_BASE=$1
	export UE_BASE
	UE_CACHE=$UE_CACHE_ROOT${BASE_DIR:+/base-$UE_BASE}
	UE_CACHE=$(mkdir -p "$UE_CACHE" && cd "$UE_CACHE" && pwd -P)
	PORT_RULES=()                        # bases/BASE/port, read when needed
	cache_paths
	[[ -z ${_UE_LOCK_MODE:-} ]] || lock_cache "$_UE_LOCK_MODE"
	flavour_use "${UE_FLAVOUR:-}"
}

# base_prefix: what the names of the current base's checks start with:
# nothing on 6.1, "BASE:" on another base.
base_prefix() {
	[[ -z $BASE_DIR ]] || printf '%s:\n' "$UE_BASE"
}

# cache_paths: the paths in $UE_CACHE, set for the current base.
cache_paths() {
	TREE=$UE_CACHE/linux                 # git repo: tag "base", branch "series"
	HDR_DIR=$UE_CACHE/headers            # make headers_install destination
	KSFT_DIR=$UE_CACHE/kselftest         # installed kselftests
	KSFT_BASE_DIR=$UE_CACHE/kselftest-base  # the base's own, if BASE_SELFTESTS
	SAMPLES_DIR=$UE_CACHE/samples        # sample programs built for the guest
	SERIES_OUT=$UE_CACHE/series          # default git format-patch output
	INITRAMFS=$UE_CACHE/initramfs.cpio.gz
	RUNS_DIR=$UE_CACHE/runs              # one scratch directory per VM run
	LOG_DIR=$UE_CACHE/logs
	BUILD_LOG=$LOG_DIR/build.log         # harness/lib/build.sh
	CONFIG_LOG=$LOG_DIR/config.log       # harness/lib/config.sh
	# harness/lib/seriescheck.sh
	CHECK_SERIES_DIR=$UE_CACHE/series-check  # the patch files checked
	AM_DIR=$UE_CACHE/am                  # git worktree of $TREE: base + git am
	DOCS_DIR=$UE_CACHE/docs              # O= of the htmldocs build
	DOCS_LOG=$LOG_DIR/htmldocs.log       # output of the last htmldocs build
	# harness/lib/buildeach.sh
	BE_DIR=$UE_CACHE/build-each
	BE_SRC=$BE_DIR/src                   # worktree, rebased commit by commit
	BE_OUT=$BE_DIR/build                 # kernel O= directory
	BE_CONFIG=$BE_DIR/series.config      # the .config made at the last commit
	BE_LOG=$LOG_DIR/build-each.log
	BE_LINES=$BE_DIR/results             # the result of each commit built
	BE_RESULT=$UE_CACHE/last-build-each-result
	ARCH_DIR=$UE_CACHE/arch              # harness/lib/arch.sh
	ARCH_LOG=$LOG_DIR/arch.log
	BENCH_DIR=$UE_CACHE/bench            # harness/lib/bench.sh
	FIX_DIR=$UE_CACHE/fixes              # harness/lib/fixes.sh
	FIX_LOG=$LOG_DIR/fixes.log
	FIX_RESULT=$FIX_DIR/last-result.md
	MATRIX_DIR=$UE_CACHE/matrix          # harness/lib/matrix.sh
	MATRIX_LOG=$LOG_DIR/build-matrix.log
	MUT_DIR=$UE_CACHE/mutants            # harness/lib/mutants.sh
	MUT_SRC=$MUT_DIR/src                 # worktree of $TREE at the series
	# Debian's kernel source package of the base and its tarball.
	SRC_PKG=linux-source-$UE_BASE
	SRC_TARBALL=/usr/src/$SRC_PKG.tar.xz
	SRC_TOPDIR=$SRC_PKG                  # what the tarball unpacks to
}

KARCH=x86_64
KMAKE_ARGS=()                        # make's toolchain arguments, if any
# The toolchains of other architectures' kernels (build-matrix, test
# --arch): gcc (the host's), llvm (LLVM=1), s390-clang (clang 16 with GNU
# binutils: LLVM's s390x assembler and linker do not build the kernel, its
# objcopy does not write the image's elf64-s390)
declare -A TOOLCHAIN_MAKE=(
	[gcc]=""
	[llvm]="LLVM=1"
	[s390-clang]="LLVM=-16 LLVM_IAS=0 CROSS_COMPILE=s390x-linux-gnu- LD=s390x-linux-gnu-ld OBJCOPY=s390x-linux-gnu-objcopy"
)
JOBS=${UE_JOBS:-$(nproc)}

# The harness's own git identity, a test identity: author and committer of
# what it commits in $UE_CACHE (the base, branch "series", the git am
# worktree) and the sign-off of the patch files its checks write.  It never
# signs a series written for mailing: "harness/ue series" uses the sender's
# (sender_ident, harness/lib/series.sh).
HARNESS_NAME='user_events harness' HARNESS_EMAIL=harness@example.invalid
HARNESS_IDENT="$HARNESS_NAME <$HARNESS_EMAIL>"

# Repository directories whose files are installed at the same kernel path.
SERIES_DIRS=(kernel include Documentation samples tools)
# Base-tree files of the old user_events that the series drops.
SERIES_REMOVE=()
# Directories owned entirely by the series: base files we do not ship go.
SERIES_OWNED_DIRS=(samples/user_events tools/testing/selftests/user_events)

# --- Logging -----------------------------------------------------------------

if [[ -t 2 ]]; then
	_c_info=$'\e[1;34m' _c_warn=$'\e[1;33m' _c_err=$'\e[1;31m' _c_off=$'\e[0m'
else
	_c_info='' _c_warn='' _c_err='' _c_off=''
fi

log()  { printf '%s==>%s %s\n' "$_c_info" "$_c_off" "$*" >&2; }
warn() { printf '%sWARNING:%s %s\n' "$_c_warn" "$_c_off" "$*" >&2; }
die()  { printf '%sERROR:%s %s\n' "$_c_err" "$_c_off" "$*" >&2; exit 1; }

# now: seconds since the epoch, for timings.
now() { date +%s; }

# --- Kernel flavours ------------------------------------------------------------

# A flavour is a kernel configuration: "plain" is the test kernel, any other
# name a fragment harness/flavours/NAME.config merged on top of it, built in
# $UE_CACHE/build-NAME.  UE_FLAVOUR picks the one that build, run, shell,
# demo and bench use (empty: plain); test runs several (harness/lib/test.sh).

# flavour_use NAME: make NAME the flavour the following steps work on: sets
# UE_FLAVOUR (exported, for "harness/ue build" and the guest), BUILD_DIR
# (the kernel's O= directory) and BZIMAGE.
flavour_use() {
	case $1 in
	'' | plain) UE_FLAVOUR='' ;;
	*)
		[[ -f $HARNESS_DIR/flavours/$1.config ]] ||
			die "unknown kernel flavour '$1': no harness/flavours/$1.config"
		UE_FLAVOUR=$1 ;;
	esac
	export UE_FLAVOUR
	BUILD_DIR=$UE_CACHE/build${UE_FLAVOUR:+-$UE_FLAVOUR}
	BZIMAGE=$BUILD_DIR/arch/x86/boot/bzImage
}

# flavour_name: the current flavour's name ("plain" for the test kernel).
flavour_name() { printf '%s\n' "${UE_FLAVOUR:-plain}"; }

# --- Small helpers ---------------------------------------------------------

# install_if_changed SRC DST: copy SRC to DST only when the content differs,
# so unchanged files keep their timestamps and make stays incremental.
install_if_changed() {
	local src=$1 dst=$2
	if ! { [[ -f $dst ]] && cmp -s -- "$src" "$dst"; }; then
		mkdir -p -- "$(dirname -- "$dst")"
		cp -- "$src" "$dst"
	fi
	chmod --reference="$src" -- "$dst"      # does not touch the mtime
}

# fingerprint FILE...: one checksum over the contents of the given files
# (missing files count as empty, their names still matter).
fingerprint() {
	local f
	for f in "$@"; do
		printf '%s\n' "$f"
		[[ -f $f ]] && sha256sum < "$f"
	done | sha256sum | cut -d' ' -f1
}

# once CMD ARGS: run a step at most once per harness invocation and base
# (the steps call their prerequisites, so "test" would otherwise repeat
# them).  A harness/ue started by another gets the steps its parent did
# already in UE_ONCE_DONE (once_export), so that it does not redo them
# either.
declare -A _UE_DONE=()
for _step in ${UE_ONCE_DONE:-}; do
	_UE_DONE[$_step]=1
done
unset _step
once() {
	local key=$1@$UE_BASE                # each base has its own steps
	[[ -v _UE_DONE[$key] ]] && return 0
	_UE_DONE[$key]=1
	"$@"
}

# once_export: pass the steps done to the harness/ue processes started
# from now on.
once_export() {
	UE_ONCE_DONE="${!_UE_DONE[*]}"
	export UE_ONCE_DONE
}

# --- Phase times ---------------------------------------------------------------

# Wall-clock time of each phase of a command, for its closing table: when
# the phase started (seconds after PHASE_T0) and how long it took.  Phases
# may overlap (a VM runs while the next kernel builds).
PHASE_T0=$(date +%s)
declare -a PHASE_ORDER=()
declare -A PHASE_START=() PHASE_SECS=()

# phase_add NAME START END: record phase NAME, from START to END (epoch
# seconds); a phase recorded twice adds up.
phase_add() {
	local name=$1 start=$2 end=$3
	if [[ ! -v PHASE_SECS[$name] ]]; then
		PHASE_ORDER+=("$name")
		PHASE_START[$name]=$((start - PHASE_T0)) PHASE_SECS[$name]=0
	fi
	PHASE_SECS[$name]=$((PHASE_SECS[$name] + end - start))
}

# phase NAME CMD...: run CMD as phase NAME; CMD's exit status.
phase() {
	local name=$1 t0 rc=0
	shift
	t0=$(now)
	"$@" || rc=$?
	phase_add "$name" "$t0" "$(now)"
	return "$rc"
}

# mmss SECONDS: "M:SS".
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# phase_table: the phases recorded, as a Markdown table, in the order
# they started (also saved, for RESULTS.md, by the caller).
phase_table() {
	local name
	printf '| phase | starts at | takes |\n|---|--:|--:|\n'
	for name in "${PHASE_ORDER[@]}"; do
		printf '%d\t| %s | %s | %s |\n' "${PHASE_START[$name]}" "$name" \
			"$(mmss "${PHASE_START[$name]}")" "$(mmss "${PHASE_SECS[$name]}")"
	done | sort -s -n -k1,1 | cut -f2-
	printf '| **whole run** | | **%s** |\n' "$(mmss $(($(now) - PHASE_T0)))"
}

# lock_cache exclusive|shared: serialise harness/ue processes sharing one
# $UE_CACHE.  Steps that change the tree or the build take the lock
# exclusively; VM runs take it shared, so nothing is rebuilt under a
# running VM.  Taking it again converts the locks held, of every base's
# cache this process has used (base_use locks the next one alike).
declare -A _UE_LOCK_FDS=()
_UE_LOCK_MODE=
lock_cache() {
	local flag=-x cache fd
	[[ -z ${UE_LOCK_HELD:-} ]] || return 0   # our parent holds it for us
	[[ $1 == shared ]] && flag=-s
	_UE_LOCK_MODE=$1
	if [[ ! -v _UE_LOCK_FDS[$UE_CACHE] ]]; then
		exec {fd}>>"$UE_CACHE/.lock"
		_UE_LOCK_FDS[$UE_CACHE]=$fd
	fi
	for cache in "${!_UE_LOCK_FDS[@]}"; do
		fd=${_UE_LOCK_FDS[$cache]}
		flock -n "$flag" "$fd" && continue
		log "waiting for another harness/ue using $cache ($1 lock)"
		flock "$flag" "$fd"
	done
}

# tgit ARGS: git inside the kernel tree repository.
tgit() { git -C "$TREE" "$@"; }

# as_ident AUTHOR COMMITTER CMD...: run CMD with git's author and committer
# set to AUTHOR and COMMITTER ("Name <email>").
as_ident() {
	local a=$1 c=$2
	shift 2
	(
		export GIT_AUTHOR_NAME=${a% <*} GIT_AUTHOR_EMAIL=${a##*<}
		export GIT_COMMITTER_NAME=${c% <*} GIT_COMMITTER_EMAIL=${c##*<}
		GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL%>} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}
		"$@"
	)
}

# kmake ARGS: make in the kernel tree with our architecture and O= dir.
kmake() { make -C "$TREE" ARCH="$KARCH" O="$BUILD_DIR" "${KMAKE_ARGS[@]}" "$@"; }

# run_logged LOGFILE CMD...: run CMD with all output appended to LOGFILE;
# error and warning lines still reach the terminal.  On failure, show the
# tail of the log and return the command's status.
run_logged() {
	local logfile=$1 rc=0
	shift
	mkdir -p "$(dirname "$logfile")"
	printf '\n### %s: %s\n' "$(date '+%F %T')" "$*" >> "$logfile"
	"$@" >> "$logfile" 2>&1 || rc=$?
	if ((rc)); then
		printf '%s--- last lines of %s ---%s\n' "$_c_err" "$logfile" "$_c_off" >&2
		tail -n 40 "$logfile" >&2
		printf '%s--- errors in %s ---%s\n' "$_c_err" "$logfile" "$_c_off" >&2
		grep -E '(error|Error|ERROR)[: ]' "$logfile" | tail -n 20 >&2 || true
	fi
	return "$rc"
}

# The base of the command line, or the default.
base_use "$UE_BASE"

# need_tree: make sure the base tree exists.
need_tree() {
	if [[ ! -d $TREE/.git ]] || ! tgit rev-parse -q --verify base >/dev/null; then
		die "no kernel tree in $TREE: run 'harness/ue tree' first"
	fi
}

# need_kernel: make sure a kernel image has been built.
need_kernel() {
	[[ -f $BZIMAGE ]] || die "no kernel at $BZIMAGE: run 'harness/ue build' first"
}
