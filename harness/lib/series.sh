# shellcheck shell=bash
# harness/ue series [OUTDIR]: the series as mail-ready patches.
#
# git format-patch --cover-letter of base..series, with the cover letter's
# subject and blurb taken from harness/series/cover-letter.txt.

COVER_TEMPLATE=$HARNESS_DIR/series/cover-letter.txt

# cover_fill LETTER: put the template's subject and text into LETTER.
cover_fill() {
	local letter=$1 subject blurb
	subject=$(sed -n '/^$/q; s/^Subject:[[:space:]]*//p' "$COVER_TEMPLATE")
	[[ -n $subject ]] || die "$COVER_TEMPLATE: no Subject: line"
	blurb=$(mktemp)
	sed '1,/^$/d' "$COVER_TEMPLATE" > "$blurb"
	awk -v subject="$subject" -v blurbfile="$blurb" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			while ((getline l < blurbfile) > 0) print l
			next
		}
		{ print }
	' "$letter" > "$letter.tmp"
	mv "$letter.tmp" "$letter"
	rm -f "$blurb"
}

cmd_series() {
	local out=${1:-$SERIES_OUT}
	once cmd_apply
	mkdir -p "$out"
	out=$(cd "$out" && pwd -P)
	rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
	tgit format-patch -q --cover-letter --no-signature -o "$out" base..series >/dev/null
	cover_fill "$out/0000-cover-letter.patch"
	log "series: $(find "$out" -name '[0-9]*.patch' | wc -l) files in $out"
}
