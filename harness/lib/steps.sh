# shellcheck shell=bash
# harness/ue steps [BRANCH]: remake the step patches (harness/series/
# NN-name.patch) from the commits of BRANCH of the tree, one per commit
# group, in order.  The way to change a file that several commits build
# up (harness/series/README): edit the repository's final version, make
# a branch of the tree whose commits are the series as it should be (git
# rebase -i of branch "series", a fixup where the change belongs), run
# this on it, then "harness/ue apply", which gives the same commits.

# steps_group_of ASSIGNMENT PATH: the group that PATH is assigned to.
steps_group_of() {
	awk -F'\t' -v p="$2" '$2 == p { print $1; exit }' "$1"
}

# steps_norm PATCH: PATCH without what does not change what it does:
# index and "diff --git" lines, the function names of hunk headers, and
# the order of the files.
steps_norm() {
	sed -e '/^index /d' -e '/^diff --git /d' -e 's/^\(@@ [^@]* @@\).*/\1/' "$1" |
		awk '/^--- / { n++ } { print n "\t" $0 }' |
		awk -F'\t' '{ key[$1] = key[$1] ? key[$1] : $2; print key[$1] "\t" $0 }' |
		LC_ALL=C sort -s -t$'\t' -k1,1 | cut -f3-
}

# steps_same PATCH PATCH: do the two make the same changes?
steps_same() {
	[[ -f $2 ]] && [[ $(steps_norm "$1") == "$(steps_norm "$2")" ]]
}

cmd_steps() {
	local branch=${1:-series} changed assignment g c subject want i=0 p
	local -a groups commits steps
	need_tree
	tgit rev-parse -q --verify "$branch^{commit}" > /dev/null ||
		die "steps: no branch '$branch' in $TREE"
	mapfile -t groups < <(group_files)
	mapfile -t commits < <(tgit rev-list --reverse "base..$branch")
	((${#groups[@]} == ${#commits[@]})) ||
		die "steps: $branch has ${#commits[@]} commits on base, harness/series ${#groups[@]} groups"
	changed=$(mktemp) assignment=$(mktemp)
	tgit diff --name-only --no-renames base "$branch" -- > "$changed"
	assign_groups "$changed" > "$assignment"
	for g in "${groups[@]}"; do
		c=${commits[i]} i=$((i + 1))
		want=$(sed -n '/^$/q; s/^Subject:[[:space:]]*//p' "$g")
		subject=$(tgit log -1 --format=%s "$c")
		[[ $subject == "$want" ]] ||
			die "steps: commit $i of $branch is \"$subject\", $(basename "$g") wants \"$want\""
		# What the commit changes in files of other groups is its step
		steps=()
		while IFS= read -r p; do
			[[ $(steps_group_of "$assignment" "$p") == "$g" ]] || steps+=("$p")
		done < <(tgit diff --name-only --no-renames "$c~" "$c" --)
		if ((${#steps[@]})); then
			tgit -c diff.noprefix=false diff --no-color --no-ext-diff \
				--no-renames "$c~" "$c" -- "${steps[@]}" > "$changed"
		else
			: > "$changed"
		fi
		steps_write "$changed" "$(basename "${g%.txt}").patch"
	done
	rm -f "$changed" "$assignment"
	log "steps: the step patches of harness/series${BASE_DIR:+ and $BASE_DIR/series} are those of $branch"
}

# steps_write PATCH NAME: make PATCH (empty: none) the step patch NAME of
# the current base.  On the default base it is harness/series/NAME; on
# another, bases/BASE/series/NAME where it differs from harness/series'
# (an empty one where that has one and the base has none).  A patch that
# says the same stays as it is written.
steps_write() {
	local patch=$1 default=$GROUPS_DIR/$2 own
	if [[ -z $BASE_DIR ]]; then
		if [[ -s $patch ]]; then
			steps_same "$patch" "$default" || cp "$patch" "$default"
		else
			rm -f "$default"
		fi
		return 0
	fi
	own=$BASE_DIR/series/$2
	if [[ -s $patch ]]; then
		if steps_same "$patch" "$default"; then
			rm -f "$own"
		else
			steps_same "$patch" "$own" || cp "$patch" "$own"
		fi
	elif [[ -f $default ]]; then
		: > "$own"
	else
		rm -f "$own"
	fi
}
