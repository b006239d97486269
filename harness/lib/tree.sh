# shellcheck shell=bash
# harness/ue tree: the pristine base tree as a git repository.
#
# The tarball is unpacked once into a temporary directory next to $TREE,
# committed and tagged "base" there, and only then renamed to $TREE.  An
# interrupted run leaves only a temporary directory, which the next run
# deletes and redoes.

# src_version: the installed version of Debian's kernel source package.
src_version() {
	dpkg-query -W -f='${Version}' "$SRC_PKG" 2>/dev/null || echo unknown
}

# tree_version: the package version recorded in the base commit.
tree_version() {
	tgit log -1 --format=%b base 2>/dev/null | sed -n 's/^Debian-Package-Version: //p'
}

# tree_git_setup DIR: repository settings for a large, build-only tree.  Its
# identity is the harness's: what git commits there (the base, git am in
# the checks) is the harness's own work, never sent.
tree_git_setup() {
	git -C "$1" config core.preloadIndex true
	git -C "$1" config gc.auto 0
	git -C "$1" config advice.detachedHead false
	git -C "$1" config user.name "$HARNESS_NAME"
	git -C "$1" config user.email "$HARNESS_EMAIL"
}

# tree_create: unpack, commit and tag into a temporary dir, then rename.
tree_create() {
	local tmp t0 version
	version=$(src_version)
	[[ -f $SRC_TARBALL ]] || die "$SRC_TARBALL missing: run 'harness/ue deps'"
	t0=$(now)
	tmp=$(mktemp -d "$UE_CACHE/linux.tmp.XXXXXX")
	log "tree: unpacking $SRC_TARBALL ($version)"
	tar -xJf "$SRC_TARBALL" -C "$tmp"
	[[ -d $tmp/$SRC_TOPDIR ]] || die "tarball did not unpack to $SRC_TOPDIR"
	[[ ! -e $tmp/$SRC_TOPDIR/.config ]] || die "tarball ships a .config; O= builds need a clean tree"

	log "tree: committing the base tree"
	git init -q -b master "$tmp/$SRC_TOPDIR"
	tree_git_setup "$tmp/$SRC_TOPDIR"
	# Debian's .gitignore ends in "/*", which ignores everything: force.
	git -C "$tmp/$SRC_TOPDIR" add -f -A
	git -C "$tmp/$SRC_TOPDIR" commit -q -m "Base: Debian $SRC_PKG $version" \
		-m "Unpacked from $SRC_TARBALL." \
		-m "Debian-Package-Version: $version"
	git -C "$tmp/$SRC_TOPDIR" tag base

	rm -rf "$TREE"
	mv "$tmp/$SRC_TOPDIR" "$TREE"
	rmdir "$tmp"
	log "tree: ready in $TREE ($(($(now) - t0))s)"
}

cmd_tree() {
	rm -rf "$UE_CACHE"/linux.tmp.*          # leftovers of interrupted runs
	if [[ -d $TREE/.git ]] && tgit rev-parse -q --verify base >/dev/null; then
		local have want
		have=$(tree_version) want=$(src_version)
		if [[ $have == "$want" ]]; then
			tree_git_setup "$TREE"      # a tree made by an older harness
			log "tree: base $have present in $TREE"
			return 0
		fi
		warn "tree: base is $have but $SRC_PKG $want is installed: recreating"
	elif [[ -e $TREE ]]; then
		warn "tree: $TREE is not a finished base tree: recreating"
	fi
	tree_create
}
