# shellcheck shell=bash
# harness/ue series [OUTDIR]: the series as mail-ready patches.
#
# git format-patch --cover-letter --signoff of base..series, authored and
# signed off by the sender: the git identity of the repository the harness
# runs from (user.name and user.email, or GIT_AUTHOR_*/GIT_COMMITTER_*),
# never guessed; without one it refuses and writes nothing.  Branch
# "series" is the harness's (harness/lib/apply.sh): a copy of its commits
# with the sender as author and committer is what format-patch writes.
# The checks of the patch files write the same with the harness's test
# identity, elsewhere (harness/lib/seriescheck.sh).
#
# The cover letter's subject and blurb are taken from
# harness/series/cover-letter.txt.  In the
# blurb, @BASE@ becomes the Debian package the series applies to, a line
# @TEST_RESULTS@ the results "harness/ue test" recorded for this exact
# series (one block per kernel flavour tested, see test_result_save), and
# a line @BUILD_EACH@ the result of "harness/ue build-each" for it.

# test_result_file [FLAVOUR]: where "harness/ue test" records its result.
test_result_file() {
	printf '%s/last-test-result%s\n' "$UE_CACHE" "${1:+-$1}"
}

# --- Test results --------------------------------------------------------------

# test_result_save SECONDS WITH_UNPREFIXED: record the counts of this
# "harness/ue test" run (CHECK_* of harness/lib/test.sh) for the current
# base and flavour, with what they were measured on.  Of the checks of
# the base (named "BASE:...", but on 6.1), without that prefix: those
# named "FLAVOUR:..." (without the prefix; all of them for the plain
# kernel, whose checks have none), and the unprefixed ones (the patch
# files' checks) if WITH_UNPREFIXED is 1.
test_result_save() {
	local file tmp name shown p f s tp=0 tf=0 ts=0 prefix=${UE_FLAVOUR:+$UE_FLAVOUR:} base
	base=$(base_prefix)
	file=$(test_result_file "$UE_FLAVOUR")
	tmp=$(mktemp "$file.XXXXXX")
	{
		printf 'Series-Tree: %s\n' "$(tgit rev-parse 'series^{tree}')"
		printf 'Date: %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
		printf 'Kernel: %s\n' "$(cat "$BUILD_DIR/include/config/kernel.release" 2>/dev/null || echo unknown)"
		printf 'Flavour: %s\n' "${UE_FLAVOUR:-default}"
		printf 'Duration: %ss\n' "$1"
		echo
		for name in "${CHECK_ORDER[@]}"; do
			# Another base's check
			if [[ -n $base && $name != "$base"* ]] ||
				[[ -z $base && $name =~ ^[0-9][0-9.]*: ]]; then
				continue
			fi
			name=${name#"$base"}
			if [[ -n $prefix && $name == "$prefix"* ]]; then
				shown=${name#"$prefix"}
			elif [[ $name != *:* && $2 == 1 ]]; then
				shown=$name
			else
				continue
			fi
			p=${CHECK_PASS[$base$name]} f=${CHECK_FAIL[$base$name]} s=${CHECK_SKIP[$base$name]}
			printf '  %-12s pass %3d  fail %3d  skip %3d\n' "$shown" "$p" "$f" "$s"
			tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
		done
		printf '  %d passed, %d failed%s\n' "$tp" "$tf" "$( ((ts == 0)) || echo ", $ts skipped")"
	} > "$tmp"
	mv "$tmp" "$file"
}

# test_result_field FILE NAME: a header field of a recorded result.
test_result_field() {
	sed -n "/^\$/q; s/^$2: //p" "$1"
}

# test_results_text: the recorded results that belong to the current series,
# for the cover letter; a note (and a warning) when there is none.
test_results_text() {
	local tree f flavour desc n=0
	tree=$(tgit rev-parse 'series^{tree}')
	for f in "$UE_CACHE"/last-test-result "$UE_CACHE"/last-test-result-*; do
		[[ -f $f && $(basename "$f") != *.* ]] || continue    # not a temporary file
		if [[ $(test_result_field "$f" Series-Tree) != "$tree" ]]; then
			warn "series: $(basename "$f") is for another version of the series: not in the cover letter"
			continue
		fi
		flavour=$(test_result_field "$f" Flavour)
		case $flavour in
		default) desc="Test configuration" ;;
		debug) desc="The same with KASAN, KFENCE, UBSAN, lockdep, DEBUG_OBJECTS, kmemleak" ;;
		*) desc="Test configuration with the $flavour options" ;;
		esac
		((n == 0)) || echo
		printf '%s\n(kernel %s, x86_64, %s):\n\n' "$desc" \
			"$(test_result_field "$f" Kernel)" "$(test_result_field "$f" Date | cut -d' ' -f1)"
		sed '1,/^$/d' "$f"
		n=$((n + 1))
	done
	if ((n == 0)); then
		warn "series: no 'harness/ue test' result for this series yet: the cover letter says so"
		echo "[No harness/ue test result is recorded for this version of the series.]"
	fi
}

# build_each_text: the result of "harness/ue build-each" ($BE_RESULT,
# harness/lib/buildeach.sh) when it is for the current series; nothing
# (and a warning) otherwise.
build_each_text() {
	if [[ ! -f $BE_RESULT ]]; then
		warn "series: no 'harness/ue build-each' result: not in the cover letter"
		return 0
	fi
	if [[ $(test_result_field "$BE_RESULT" Series-Tree) != "$(tgit rev-parse 'series^{tree}')" ]]; then
		warn "series: the 'harness/ue build-each' result is for another version of the series: not in the cover letter"
		return 0
	fi
	printf 'Each patch built on its own (harness/ue build-each, %s), with\n' \
		"$(test_result_field "$BE_RESULT" Date | cut -d' ' -f1)"
	# On a base whose USER_EVENTS depends on BROKEN (6.1), until the
	# Kconfig patch only COMPILE_TEST lets it be built.
	if tgit show base:kernel/trace/Kconfig | grep -A8 '^config USER_EVENTS' |
		grep -q 'depends on BROKEN'; then
		printf 'the test configuration plus COMPILE_TEST, which USER_EVENTS needs\n'
		printf 'until the Kconfig patch; the sample and the selftests are built from\n'
	else
		printf 'the test configuration plus COMPILE_TEST; the sample and the\n'
		printf 'selftests are built from\n'
	fi
	printf 'the first patch that changes them on:\n\n'
	sed '1,/^$/d' "$BE_RESULT"
}

# --- Cover letter ---------------------------------------------------------------

# cover_fill LETTER: put the template's subject and text into LETTER.  The
# template is COVER_TEMPLATE if set, else harness/series/cover-letter.txt
# (the base's own, bases/BASE/series/cover-letter.txt, if it has one).
cover_fill() {
	local letter=$1 subject blurb results each template=${COVER_TEMPLATE:-}
	[[ -n $template ]] || template=$(base_file "$HARNESS_DIR/series/cover-letter.txt")
	subject=$(sed -n '/^$/q; s/^Subject:[[:space:]]*//p' "$template")
	[[ -n $subject ]] || die "$template: no Subject: line"
	blurb=$(mktemp) results=$(mktemp) each=$(mktemp)
	test_results_text > "$results"
	build_each_text > "$each"
	# A placeholder line whose text is empty goes, with the blank line
	# before it.
	sed '1,/^$/d; s/@BASE@/Debian'"'"'s '"$SRC_PKG $(tree_version)"'/g' "$template" |
		awk -v resultsfile="$results" -v eachfile="$each" '
			function flush() { if (held) print ""; held = 0 }
			function insert(file,   l, n) {
				while ((getline l < file) > 0) {
					if (n++ == 0) flush()
					print l
				}
				close(file)
				held = 0
			}
			/^@TEST_RESULTS@$/ { insert(resultsfile); next }
			/^@BUILD_EACH@$/ { insert(eachfile); next }
			/^$/ { flush(); held = 1; next }
			{ flush(); print }
			END { flush() }
		' > "$blurb"
	awk -v subject="$subject" -v blurbfile="$blurb" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			while ((getline l < blurbfile) > 0) print l
			next
		}
		{ print }
	' "$letter" > "$letter.tmp"
	mv "$letter.tmp" "$letter"
	rm -f "$blurb" "$results" "$each"
}

# --- Identity and writing -----------------------------------------------------

# sender_ident: two lines, the author and the committer ("Name <email>") of
# the series to be sent: git's identities in $REPO_DIR, from the
# environment (GIT_AUTHOR_*, GIT_COMMITTER_*) or the configuration
# (user.name, user.email), never guessed from the host (user.useConfigOnly);
# one that git does not know is the other.  Fails when there is neither, or
# when it is the harness's test identity.
sender_ident() {
	local a c
	a=$(git -C "$REPO_DIR" -c user.useConfigOnly=true var GIT_AUTHOR_IDENT 2>/dev/null) || a=
	c=$(git -C "$REPO_DIR" -c user.useConfigOnly=true var GIT_COMMITTER_IDENT 2>/dev/null) || c=
	a=${a% * *} c=${c% * *}             # drop the time stamp
	[[ -n $a || -n $c ]] || return 1
	[[ ${a:-$c} != "$HARNESS_IDENT" && ${c:-$a} != "$HARNESS_IDENT" ]] || return 1
	printf '%s\n%s\n' "${a:-$c}" "${c:-$a}"
}

# series_as AUTHOR COMMITTER: print the tip of a copy of base..series (or
# of $SERIES_RANGE) whose commits have AUTHOR and COMMITTER, with the same
# trees, messages and dates (the same identity gives the same commits).
series_as() {
	local c parent dates
	parent=$(tgit rev-parse base)
	for c in $(tgit rev-list --reverse "${SERIES_RANGE:-base..series}"); do
		dates=$(tgit log -1 --date=raw --format='%ad%n%cd' "$c")
		parent=$(tgit cat-file commit "$c" | sed '1,/^$/d' |
			GIT_AUTHOR_DATE=${dates%$'\n'*} GIT_COMMITTER_DATE=${dates#*$'\n'} \
			as_ident "$1" "$2" tgit commit-tree "$c^{tree}" -p "$parent") ||
			die "series: cannot copy commit $c"
	done
	printf '%s\n' "$parent"
}

# series_write OUTDIR AUTHOR COMMITTER: the series' patch files and cover
# letter in OUTDIR (its earlier patch files go), from AUTHOR, each signed
# off by COMMITTER (format-patch --signoff).  Branch "series" must be up to
# date (cmd_apply).
series_write() {
	local out=$1 tip
	tip=$(series_as "$2" "$3")
	mkdir -p "$out"
	out=$(cd "$out" && pwd -P)
	rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
	as_ident "$2" "$3" tgit format-patch -q --cover-letter --signoff --no-signature \
		-o "$out" "base..$tip" >/dev/null
	cover_fill "$out/0000-cover-letter.patch"
	log "series: $(find "$out" -name '[0-9]*.patch' | wc -l) files in $out, from $2"
}

cmd_series() {
	local out=${1:-$SERIES_OUT} ident=()
	mapfile -t ident < <(sender_ident)
	((${#ident[@]} == 2)) || die "series: no git identity to author and sign off the series with:" \
		"set user.name and user.email (git config, in $REPO_DIR or globally), or" \
		"GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL (not '$HARNESS_IDENT', the harness's test identity);" \
		"nothing written"
	once cmd_apply
	series_write "$out" "${ident[@]}"
}
