# shellcheck shell=bash
# shellcheck disable=SC2153 # TREE and the other settings are common.sh's
# harness/ue apply: put the series into the tree and commit it as "series".
#
# The series is:
#   - the repository's files under kernel/ include/ Documentation/ samples/
#     tools/, installed at the same path in the tree;
#   - patches/*.patch and MAINTAINERS.patch: unified diffs against the base
#     tree, one per edited file;
#   - removal of the old user_events files the series does not ship.
# Files are only written when their content changes, so make stays
# incremental.  The commits are made with git plumbing (a private index and
# commit-tree), never by checking anything out, by the harness's identity
# and without Signed-off-by: they are the harness's working copy of the
# series; "harness/ue series" writes it authored and signed off by the
# sender (harness/lib/series.sh).

GROUPS_DIR=$HARNESS_DIR/series

# repo_series_files: repository files of the series, one path per line.
# Uses git's view (tracked + untracked, .gitignore respected) so build
# products lying in the repository never end up in the series.
repo_series_files() {
	local dirs=() d
	for d in "${SERIES_DIRS[@]}"; do
		[[ -d $REPO_DIR/$d ]] && dirs+=("$d")
	done
	((${#dirs[@]})) || return 0
	if git -C "$REPO_DIR" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$REPO_DIR" ls-files -co --exclude-standard -- "${dirs[@]}"
	else
		(cd "$REPO_DIR" && find "${dirs[@]}" -type f)
	fi | while IFS= read -r d; do
		[[ -f $REPO_DIR/$d ]] && printf '%s\n' "$d"
	done | LC_ALL=C sort -u
}

# --- What a base changes (bases/README) ---------------------------------------

# base_file DEFAULT: the file that stands for DEFAULT (a file of patches/ or
# harness/series/) on the current base: the base's file of the same name
# (bases/BASE/patches/, bases/BASE/series/) if it has one, else DEFAULT.
# Prints nothing when the base's file is empty: the base drops it.  A
# group file of the base with header lines only adds them to DEFAULT's
# (group_header), which stays the group's file.
base_file() {
	local f=$1 sub
	if [[ -n $BASE_DIR ]]; then
		case $f in
		"$REPO_DIR"/patches/*) sub=patches ;;
		*) sub=series ;;
		esac
		if [[ -e $BASE_DIR/$sub/${f##*/} ]]; then
			[[ $f == *.txt ]] && [[ -s $BASE_DIR/$sub/${f##*/} ]] &&
				! grep -q '^Subject:' "$BASE_DIR/$sub/${f##*/}" ||
				f=$BASE_DIR/$sub/${f##*/}
		fi
	fi
	[[ ! -s $f ]] || printf '%s\n' "$f"
}

# group_header GROUPFILE FIELD: the values of the header lines "FIELD:" of
# a group, and of the base's file of the same name when that has header
# lines only (no Subject:): it adds them to the group's.
group_header() {
	local g=$1 field=$2 extra
	sed -n "/^\$/q; s/^$field:[[:space:]]*//p" "$g"
	[[ -n $BASE_DIR ]] || return 0
	extra=$BASE_DIR/series/${g##*/}
	[[ $extra != "$g" && -s $extra ]] || return 0
	sed -n "/^\$/q; s/^$field:[[:space:]]*//p" "$extra"
}

# base_extra DIR GLOB: the base's files of DIR (patches, series) matching
# GLOB that stand for no file of the default base: it adds them.
base_extra() {
	local dir=$1 glob=$2 f
	[[ -n $BASE_DIR ]] || return 0
	for f in "$BASE_DIR/$dir"/$glob; do
		[[ -s $f ]] || continue
		case $dir in
		patches) [[ -e $REPO_DIR/patches/${f##*/} ]] ;;
		series) [[ -e $GROUPS_DIR/${f##*/} ]] ;;
		esac || printf '%s\n' "$f"
	done
}

# The port of a base (bases/BASE/port): the kernel interfaces that differ
# from the default base's, as sed commands on the series' own files, one
# per line: "PATH<TAB>SED-COMMAND" (PATH a tree path, or a glob of them).

# dropped_files: the repository's files that only commits the base drops
# add (an empty bases/BASE/series/NN-name.txt): the exact paths of their
# "Path:" lines that are files of the repository and that no commit of
# the base lists.
dropped_files() {
	local g p
	local -A kept=()
	[[ -n $BASE_DIR ]] || return 0
	while IFS= read -r g; do
		while IFS= read -r p; do kept[$p]=1; done < <(group_paths "$g")
	done < <(group_files)
	for g in "$GROUPS_DIR"/[0-9]*.txt; do
		[[ -e $BASE_DIR/series/${g##*/} && ! -s $BASE_DIR/series/${g##*/} ]] ||
			continue
		group_paths "$g" | while IFS= read -r p; do
			[[ $p == */ || ! -f $REPO_DIR/$p || -n ${kept[$p]+x} ]] ||
				printf '%s\n' "$p"
		done
	done
}

# port_rules: the port's rules, "PATH<TAB>COMMAND" (none for the default).
port_rules() {
	[[ -n $BASE_DIR && -f $BASE_DIR/port ]] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$BASE_DIR/port"
}

# port_file PATH FILE: rewrite FILE, the content of tree path PATH, in
# place for the current base.  The rules are read once (into PORT_RULES,
# which base_use empties).
port_file() {
	local path=$1 file=$2 rule
	((${#PORT_RULES[@]})) || mapfile -t PORT_RULES < <(port_rules; echo -)
	for rule in "${PORT_RULES[@]}"; do
		# shellcheck disable=SC2053 # the rule's path is a glob
		[[ $rule != - && $path == ${rule%%$'\t'*} ]] &&
			sed -i -E -e "${rule#*$'\t'}" -- "$file"
	done
	return 0
}

# port_check: every rule of the port changes a file of the repository
# (before porting): a rule that matches nothing is stale, and the file it
# was meant for may be left unported.
port_check() {
	local glob cmd f hit stale=()
	while IFS=$'\t' read -r glob cmd; do
		hit=
		for f in "$REPO_DIR"/$glob; do
			[[ -f $f ]] || continue
			sed -E -e "$cmd" -- "$f" | cmp -s - "$f" || { hit=1; break; }
		done
		[[ -n $hit ]] || stale+=("$glob	$cmd")
	done < <(port_rules)
	((${#stale[@]} == 0)) || {
		printf '  %s\n' "${stale[@]}" >&2
		die "apply: these rules of $BASE_DIR/port change nothing"
	}
}

# repo_patches: the patch files of the series on the current base.
repo_patches() {
	local p
	for p in "$REPO_DIR"/patches/*.patch "$REPO_DIR"/MAINTAINERS.patch; do
		[[ -f $p ]] && base_file "$p"
	done
	base_extra patches '*.patch'
}

# patch_paths PATCH: the tree paths a (git) diff edits.
patch_paths() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1" | LC_ALL=C sort -u
}

# patch_target PATCH: the one tree path PATCH edits.
patch_target() {
	local targets
	targets=$(patch_paths "$1")
	[[ -n $targets && $targets != *$'\n'* ]] ||
		die "$1 must edit exactly one file (found: ${targets:-none})"
	printf '%s\n' "$targets"
}

# patched_content PATCH TARGET OUT: base version of TARGET with PATCH
# applied (strictly, by git apply) into the file OUT.
patched_content() {
	local patch=$1 target=$2 out=$3 tmp
	tmp=$(mktemp -d)
	mkdir -p "$tmp/$(dirname "$target")"
	tgit show "base:$target" > "$tmp/$target" ||
		die "$patch: $target is not in the base tree"
	(cd "$tmp" && GIT_CEILING_DIRECTORIES=$(dirname "$tmp") git apply "$patch") ||
		die "$patch does not apply to the base tree"
	mv "$tmp/$target" "$out"
	rm -rf "$tmp"
}

# base_has PATH: true when PATH is a file of the base tree.
base_has() { tgit cat-file -e "base:$1" 2>/dev/null; }

# restore_base PATH: make PATH in the tree what it is in the base tree.
restore_base() {
	local path=$1 tmp
	if base_has "$path"; then
		tmp=$(mktemp)
		tgit show "base:$path" > "$tmp"
		chmod 644 "$tmp"
		[[ $(tgit ls-tree base -- "$path") != 100755* ]] || chmod 755 "$tmp"
		install_if_changed "$tmp" "$TREE/$path"
		rm -f "$tmp"
	else
		remove_path "$path"
	fi
}

# remove_path PATH: delete PATH from the tree, and emptied directories.
remove_path() {
	[[ -e $TREE/$1 ]] || return 0
	rm -f -- "$TREE/$1"
	rmdir -p --ignore-fail-on-non-empty -- "$(dirname -- "$TREE/$1")" 2>/dev/null || true
}

# stale_candidates: every path an earlier apply (finished or not) may have
# touched: the last series, the index, the work tree, untracked files.
stale_candidates() {
	if tgit rev-parse -q --verify series >/dev/null; then
		tgit diff --name-only --no-renames base series --
	fi
	tgit diff --cached --name-only --no-renames base --
	tgit diff --name-only --no-renames --
	tgit ls-files -o -- "${SERIES_DIRS[@]}"
}

# --- Commit groups -----------------------------------------------------------

# group_files: the commit group definitions, in series order.
group_files() {
	local f
	{
		for f in "$GROUPS_DIR"/[0-9]*.txt; do
			[[ -f $f ]] && base_file "$f"
		done
		base_extra series '[0-9]*.txt'
	} | awk -F/ '{ print $NF "\t" $0 }' | LC_ALL=C sort | cut -f2-
}

# group_paths GROUPFILE: the "Path:" patterns of a group.
group_paths() {
	group_header "$1" Path
}

# group_removes GROUPFILE: the "Remove:" patterns of a group: files of the
# base tree that its commit deletes, to be added again by a later group
# or not at all (a base's implementation that the series replaces).
group_removes() {
	group_header "$1" Remove
}

# group_message GROUPFILE: the commit message (subject, body).  No
# sign-off: "harness/ue series" adds the sender's.
group_message() {
	local subject
	subject=$(sed -n '/^$/q; s/^Subject:[[:space:]]*//p' "$1")
	[[ -n $subject ]] || die "$1: no Subject: line"
	printf '%s\n\n' "$subject"
	sed '1,/^$/d' "$1"
}

# group_step_patch GROUPFILE: the group's step patch (NN-name.patch
# beside NN-name.txt), or nothing.  It holds what the group's commit
# changes in files that earlier groups added: the repository has only the
# final version of a file, and a file built up over several commits gets
# its earlier versions by reverse-applying the later groups' step patches.
group_step_patch() {
	local name=${1##*/} p
	p=$(base_file "$GROUPS_DIR/${name%.txt}.patch")
	[[ -n $p ]] && printf '%s\n' "$p"
}

# step_blobs STATES: walk the groups from the last to the first and, for
# each group with a step patch, write "GROUPFILE<TAB>PATH<TAB>BLOB" into
# STATES for every path that any step patch edits: the path's content
# at that group's commit.  Starts from the final content in the index.
step_blobs() {
	local states=$1 work g p path i
	local -a groups paths
	mapfile -t groups < <(group_files)
	mapfile -t paths < <(for g in "${groups[@]}"; do
		p=$(group_step_patch "$g") && patch_paths "$p"
	done | LC_ALL=C sort -u)
	: > "$states"
	((${#paths[@]})) || return 0
	work=$(mktemp -d)
	# The repository's files as they are, not ported: the step patches
	# are written against them; each version is ported on its way out.
	for path in "${paths[@]}"; do
		mkdir -p "$work/$(dirname "$path")"
		if [[ -f $REPO_DIR/$path ]]; then
			cp -- "$REPO_DIR/$path" "$work/$path"
		else
			tgit show ":$path" > "$work/$path" ||
				die "apply: $path is edited by a step patch but is not in the series"
		fi
	done
	for ((i = ${#groups[@]} - 1; i >= 0; i--)); do
		g=${groups[i]}
		for path in "${paths[@]}"; do
			[[ -f $work/$path ]] || continue
			cp -- "$work/$path" "$work.port"
			port_file "$path" "$work.port"
			printf '%s\t%s\t%s\n' "$g" "$path" \
				"$(tgit hash-object -w -- "$work.port")" >> "$states"
		done
		p=$(group_step_patch "$g") || continue
		(cd "$work" && GIT_CEILING_DIRECTORIES=$(dirname "$work") git apply -R "$p") ||
			die "apply: $p does not reverse-apply to the files of the later" \
				"commits; remake it from the commits (harness/series/README)"
	done
	rm -rf "$work" "$work.port"
}

# match_score PATH PATTERN: how specifically PATTERN covers PATH: 0 for not
# at all, the pattern length for a directory, more for an exact file.
match_score() {
	local path=$1 pat=$2
	if [[ $pat == */ ]]; then
		[[ $path == "$pat"* ]] && echo "${#pat}" || echo 0
	else
		[[ $path == "$pat" ]] && echo 100000 || echo 0
	fi
}

# assign_groups CHANGED_FILE: print "GROUPFILE<TAB>PATH" for every changed
# path, choosing the group with the most specific pattern (exact file,
# then longest directory; the earlier group on a tie).  Dies listing every
# path that no group covers.
assign_groups() {
	local changed=$1 path g pat score best best_score uncovered=()
	local -a groups
	mapfile -t groups < <(group_files)
	((${#groups[@]})) || die "no commit groups in $GROUPS_DIR"
	while IFS= read -r path; do
		best='' best_score=0
		for g in "${groups[@]}"; do
			while IFS= read -r pat; do
				score=$(match_score "$path" "$pat")
				if ((score > best_score)); then
					best=$g best_score=$score
				fi
			done < <(group_paths "$g")
		done
		# A file that the series only deletes: the group that removes it
		if [[ -z $best ]] && ! tgit cat-file -e ":$path" 2>/dev/null; then
			for g in "${groups[@]}"; do
				while IFS= read -r pat; do
					score=$(match_score "$path" "$pat")
					((score > 0)) && { best=$g; break 2; }
				done < <(group_removes "$g")
			done
		fi
		if [[ -n $best ]]; then
			printf '%s\t%s\n' "$best" "$path"
		else
			uncovered+=("$path")
		fi
	done < "$changed"
	if ((${#uncovered[@]})); then
		printf '  %s\n' "${uncovered[@]}" >&2
		die "apply: the paths above belong to no commit group in $GROUPS_DIR"
	fi
}

# series_date: commit date of the series: the repository's last commit, so
# the same content gives the same commits.
series_date() {
	git -C "$REPO_DIR" log -1 --format=%cI 2>/dev/null ||
		tgit log -1 --format=%cI base
}

# commit_groups CHANGED_FILE: one commit per group, on a private index,
# from the blobs the real index already holds; moves branch "series".
commit_groups() {
	local changed=$1 assignment states idx parent tree commit g n=0 date blob
	declare -A added=()
	assignment=$(mktemp) states=$(mktemp)
	assign_groups "$changed" > "$assignment"
	step_blobs "$states"
	idx=$(mktemp)
	rm -f "$idx"
	date=$(series_date)
	parent=$(tgit rev-parse base)
	GIT_INDEX_FILE=$idx tgit read-tree base
	while IFS= read -r g; do
		local paths=()
		mapfile -t paths < <(awk -F'\t' -v g="$g" '$1 == g { print $2 }' "$assignment")
		if ((${#paths[@]} == 0)) && ! group_step_patch "$g" >/dev/null; then
			warn "apply: nothing for $(basename "$g"), no commit"
			continue
		fi
		local p
		for p in "${paths[@]}"; do
			added[$p]=1
		done
		# Present paths take their entry from the real index; absent ones
		# are deletions (mode 0 removes the entry).
		((${#paths[@]} == 0)) || {
			tgit ls-files -s -- "${paths[@]}" |
				awk '{ sub(/ [0-9]+\t/, "\t"); print }'
			for p in "${paths[@]}"; do
				[[ -n $(tgit ls-files -- "$p") ]] ||
					printf '0 0000000000000000000000000000000000000000\t%s\n' "$p"
			done
		} | GIT_INDEX_FILE=$idx tgit update-index --index-info
		# Files of the base that this commit removes, unless it adds them
		while IFS= read -r p; do
			[[ -n ${added[$p]+x} ]] ||
				printf '0 0000000000000000000000000000000000000000\t%s\n' "$p"
		done < <(group_removes "$g" | while IFS= read -r pat; do
			tgit ls-tree -r --name-only base -- "$pat"
		done) | GIT_INDEX_FILE=$idx tgit update-index --index-info
		# Files that later step patches edit: this commit's version, for
		# those that this or an earlier group added.
		awk -F'\t' -v g="$g" '$1 == g { print $2 "\t" $3 }' "$states" |
			while IFS=$'\t' read -r p blob; do
				[[ -z ${added[$p]+x} ]] ||
					printf '100644 %s\t%s\n' "$blob" "$p"
			done | GIT_INDEX_FILE=$idx tgit update-index --index-info
		tree=$(GIT_INDEX_FILE=$idx tgit write-tree)
		commit=$(group_message "$g" |
			GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
			as_ident "$HARNESS_IDENT" "$HARNESS_IDENT" tgit commit-tree "$tree" -p "$parent")
		parent=$commit
		n=$((n + 1))
	done < <(group_files)
	rm -f "$idx" "$assignment" "$states"
	[[ $(tgit rev-parse "$parent^{tree}") == "$(tgit write-tree)" ]] ||
		die "apply: internal error: the commits do not add up to the tree"
	tgit update-ref -m "harness apply" refs/heads/series "$parent"
	tgit symbolic-ref HEAD refs/heads/series
	log "apply: branch series = $n commits on base ($(tgit rev-parse --short series))"
}

# --- Main ------------------------------------------------------------------

cmd_apply() {
	once cmd_tree
	local work files=() patches=() p t
	declare -A desired=()        # tree path -> source file ("" = remove)
	work=$(mktemp -d)

	mapfile -t files < <(repo_series_files | grep -vxF -f <(dropped_files; echo /))
	for p in "${files[@]}"; do
		desired[$p]=$REPO_DIR/$p
	done
	# On a base with its own kernel interfaces, the files ported to them
	if [[ -n $(port_rules) ]]; then
		port_check
		for p in "${files[@]}"; do
			t=$work/port_$(printf '%s' "$p" | tr / _)
			cp -p -- "$REPO_DIR/$p" "$t"
			port_file "$p" "$t"
			cmp -s "$t" "$REPO_DIR/$p" && continue
			desired[$p]=$t
		done
	fi

	mapfile -t patches < <(repo_patches)
	for p in "${patches[@]}"; do
		t=$(patch_target "$p")
		[[ -z ${desired[$t]+x} ]] ||
			die "$t is both a file of the repository and patched by $p"
		patched_content "$p" "$t" "$work/$(printf '%s' "$t" | tr / _)"
		desired[$t]=$work/$(printf '%s' "$t" | tr / _)
	done

	# Old user_events files we do not ship.
	for p in "${SERIES_REMOVE[@]}"; do
		[[ -n ${desired[$p]+x} ]] || desired[$p]=
	done
	while IFS= read -r p; do
		[[ -n ${desired[$p]+x} ]] || desired[$p]=
	done < <(tgit ls-tree -r --name-only base -- "${SERIES_OWNED_DIRS[@]}")

	log "apply: ${#files[@]} files, ${#patches[@]} patches"

	# Paths an earlier apply touched that are no longer in the series.
	local touched=()
	while IFS= read -r p; do
		[[ -n ${desired[$p]+x} ]] && continue
		restore_base "$p"
		touched+=("$p")
	done < <(stale_candidates | LC_ALL=C sort -u)

	# The series itself.
	for p in "${!desired[@]}"; do
		if [[ -n ${desired[$p]} ]]; then
			install_if_changed "${desired[$p]}" "$TREE/$p"
		else
			remove_path "$p"
		fi
		touched+=("$p")
	done
	rm -rf "$work"

	# Stage exactly the touched paths; unknown absent paths are skipped.
	((${#touched[@]} == 0)) || printf '%s\0' "${touched[@]}" |
		(cd "$TREE" && git update-index --add --remove -z --stdin)

	local changed
	changed=$(mktemp)
	tgit diff --cached --name-only --no-renames base -- > "$changed"
	commit_groups "$changed"
	rm -f "$changed"
}
