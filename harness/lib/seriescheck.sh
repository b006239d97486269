# shellcheck shell=bash
# Host checks of the patch files, as a maintainer would receive them:
#   git-am     the series applies with "git am" to a clean checkout of the
#              base tree and gives, commit by commit, the trees of branch
#              "series";
#   htmldocs   "make SPHINXDIRS=trace htmldocs" of that tree has no warning
#              about a file the series touches.
# Both run in "harness/ue test" and "harness/ue check-series"; each records
# one pass or one failure (record, harness/lib/test.sh).

# --- Worktrees ---------------------------------------------------------------

# worktree_at DIR COMMIT: make DIR a clean worktree of $TREE, detached at
# COMMIT.  An existing worktree is reused (only the files that differ are
# rewritten); whatever an interrupted run left (an unfinished "git am", a
# stale index.lock, untracked files, a half-made directory) is cleared.
# The callers hold the cache lock, so no other git process works in DIR.
worktree_at() {
	local dir=$1 commit=$2 common p
	common=$(git -C "$dir" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || common=
	if [[ -f $dir/.git && $common == "$TREE/.git" ]]; then
		for p in rebase-apply rebase-merge index.lock; do
			rm -rf "$(git -C "$dir" rev-parse --path-format=absolute --git-path "$p")"
		done
		git -C "$dir" checkout -q -f --detach "$commit" &&
			git -C "$dir" clean -q -ffdx && return 0
		warn "worktree: $dir could not be reset: recreating it"
	fi
	rm -rf "$dir"
	tgit worktree prune
	log "worktree: checking out $commit in $dir"
	tgit worktree add -q -f --detach "$dir" "$commit" ||
		die "worktree: cannot create $dir"
}

# series_patch_files DIR: the patch files of a series directory, in order,
# without the cover letter.
series_patch_files() {
	local p
	for p in "$1"/[0-9][0-9][0-9][0-9]-*.patch; do
		[[ -f $p && $p != */0000-cover-letter.patch ]] && printf '%s\n' "$p"
	done
}

# series_changed_paths: the tree paths the series adds, changes or removes.
series_changed_paths() {
	tgit diff --name-only --no-renames base series --
}

# --- git am ------------------------------------------------------------------

# check_git_am DIR: the patches in DIR apply with plain "git am" (no 3-way
# merge) on base, and each resulting commit has the tree and subject of the
# corresponding commit of branch "series".  A whitespace error fails it.
check_git_am() {
	local dir=$1 t0 out patches=() want got
	t0=$(now)
	mapfile -t patches < <(series_patch_files "$dir")
	if ((${#patches[@]} == 0)); then
		printf '  FAIL %sgit-am: no patch files in %s\n' "$(base_prefix)" "$dir"
		record "$(base_prefix)git-am" 0 1 0
		return
	fi
	worktree_at "$AM_DIR" base
	if ! out=$(git -C "$AM_DIR" am -q --no-3way --whitespace=error-all "${patches[@]}" 2>&1); then
		printf '  FAIL %sgit-am: the series does not apply to base with git am\n' "$(base_prefix)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/       | /'
		record "$(base_prefix)git-am" 0 1 0
		return
	fi
	want=$(tgit log --reverse --format='%T %s' base..series)
	got=$(git -C "$AM_DIR" log --reverse --format='%T %s' base..HEAD)
	if [[ $want != "$got" ]]; then
		printf '  FAIL %sgit-am: the applied commits differ from branch series (tree, subject):\n' "$(base_prefix)"
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/       | /'
		record "$(base_prefix)git-am" 0 1 0
		return
	fi
	log "git-am: ${#patches[@]} patches apply to base, trees equal series ($(($(now) - t0))s)"
	record "$(base_prefix)git-am" 1 0 0
}

# --- htmldocs ------------------------------------------------------------------

# docs_sphinxdirs: the Documentation/ books the series touches ("trace").
docs_sphinxdirs() {
	series_changed_paths | sed -n 's|^Documentation/\([^/]*\)/.*\.rst$|\1|p' |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}

# check_htmldocs: build the HTML documentation of the books the series
# touches from the series tree (the git am worktree) into $DOCS_DIR.  The
# output and sphinx's environment are kept, so sphinx only rereads changed
# pages; the series' own files are touched first, so their pages are always
# reread and their warnings always repeated.  Fails on warnings or errors
# that name a file the series touches; the base tree's own warnings (other
# pages, a missing "dot") are only counted.
check_htmldocs() {
	local t0 dirs rc=0 paths=() p bad others
	t0=$(now)
	dirs=$(docs_sphinxdirs)
	if [[ -z $dirs ]]; then
		log "htmldocs: the series changes no Documentation/*/ page, nothing to build"
		record "$(base_prefix)htmldocs" 0 0 1
		return
	fi
	# The git am check leaves the series there; otherwise check it out.
	if [[ $(git -C "$AM_DIR" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null) != \
		"$(tgit rev-parse 'series^{tree}')" ]] ||
		[[ -n $(git -C "$AM_DIR" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
		worktree_at "$AM_DIR" series
	fi
	mapfile -t paths < <(series_changed_paths)
	for p in "${paths[@]}"; do
		[[ -f $AM_DIR/$p ]] || continue
		touch "$AM_DIR/$p"
		# No page of the series may survive from an earlier build.
		[[ $p != Documentation/*.rst ]] ||
			rm -f "$DOCS_DIR/Documentation/output/$(sed 's|^Documentation/||; s|\.rst$|.html|' <<<"$p")"
	done
	mkdir -p "$DOCS_DIR" "$(dirname "$DOCS_LOG")"
	log "htmldocs: make SPHINXDIRS=\"$dirs\" htmldocs (log: $DOCS_LOG)"
	make -C "$AM_DIR" O="$DOCS_DIR" SPHINXDIRS="$dirs" htmldocs > "$DOCS_LOG" 2>&1 || rc=$?
	# Problems reported against the series' files (sphinx prints absolute
	# paths, kernel-doc relative ones: match the tree path anywhere).
	bad=$(grep -iE 'warning|error|severe|critical' "$DOCS_LOG" |
		grep -F -f <(printf '%s\n' "${paths[@]}") || true)
	others=$(grep -iE 'warning|error|severe|critical' "$DOCS_LOG" |
		grep -c -v -F -f <(printf '%s\n' "${paths[@]}") || true)
	for p in "${paths[@]}"; do
		[[ $p == Documentation/*.rst && -f $AM_DIR/$p ]] || continue
		p=${p#Documentation/}
		[[ -f $DOCS_DIR/Documentation/output/${p%.rst}.html ]] ||
			bad+=${bad:+$'\n'}"no HTML page was written for Documentation/$p"
	done
	if ((rc)); then
		printf '  FAIL %shtmldocs: make htmldocs failed (status %d), see %s\n' "$(base_prefix)" "$rc" "$DOCS_LOG"
		tail -n 20 "$DOCS_LOG" | sed 's/^/       | /'
		record "$(base_prefix)htmldocs" 0 1 0
		return
	fi
	if [[ -n $bad ]]; then
		printf '  FAIL %shtmldocs: warnings about the series'"'"' files (full log: %s)\n' "$(base_prefix)" "$DOCS_LOG"
		printf '%s\n' "$bad" | sed "s|$AM_DIR/||; s/^/       | /"
		record "$(base_prefix)htmldocs" 0 1 0
		return
	fi
	log "htmldocs: no warning about the series' files (${others:-0} about others), $(($(now) - t0))s; HTML in $DOCS_DIR/Documentation/output"
	record "$(base_prefix)htmldocs" 1 0 0
}

# --- harness/ue check-series ---------------------------------------------------

# check_patch_files: write the series and check its patch files as a
# maintainer gets them: git am on the base, htmldocs, checkpatch.  They are
# written as "harness/ue series" writes them, but from and signed off by the
# harness's test identity, into their own directory ($CHECK_SERIES_DIR):
# the checks need no sender, and nothing they write is for mailing.
check_patch_files() {
	once cmd_apply
	series_write "$CHECK_SERIES_DIR" "$HARNESS_IDENT" "$HARNESS_IDENT"
	check_git_am "$CHECK_SERIES_DIR"
	check_htmldocs
	check_checkpatch "$CHECK_SERIES_DIR"
}

# cmd_check_series: the checks of the patch files alone (no build, no VM):
# checkpatch, git am, htmldocs.  Ends with "N passed, N failed".
cmd_check_series() {
	local t0
	t0=$(now)
	once cmd_deps
	check_patch_files
	log "check-series: done in $(($(now) - t0))s"
	test_summary
}
