# shellcheck shell=bash
# harness/ue churn [BRANCH] [FILE]: how much of FILE (default the core,
# kernel/trace/trace_events_user.c) the commits of BRANCH (default
# "series") rewrite after the first commit that changes it (the one that
# replaces the base's file, for the core): the lines each
# later commit deletes from it, and their total.  A series that adds the
# final design of each part in its own patch deletes few (issue 32: at
# most 100, for signature changes and the like).

cmd_churn() {
	local branch=${1:-series} file=${2:-kernel/trace/trace_events_user.c}
	local c first='' added deleted total=0 subject
	need_tree
	tgit rev-parse -q --verify "$branch^{commit}" > /dev/null ||
		die "churn: no branch '$branch' in $TREE"
	printf '%8s %8s  %s\n' added deleted commit
	while read -r c; do
		added='' deleted=''
		read -r added deleted _ < <(tgit diff --numstat "$c~" "$c" -- "$file") || true
		[[ -n $added ]] || continue
		subject=$(tgit log -1 --format=%s "$c")
		if [[ -z $first ]]; then
			first=$c
			printf '%8s %8s  %s (the first to change %s)\n' "$added" "$deleted" "$subject" "$file"
			continue
		fi
		total=$((total + deleted))
		printf '%8s %8s  %s\n' "$added" "$deleted" "$subject"
	done < <(tgit rev-list --reverse "base..$branch")
	[[ -n $first ]] || die "churn: no commit of $branch changes $file"
	printf 'lines of %s deleted after the first commit that changes it: %d\n' "$file" "$total"
}
