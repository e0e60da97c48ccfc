package manifest

// MarkUp adds p and every directory above it, up to the root (""), to set. An ancestor of a
// marked path is marked, so marking stops at the first one already there.
func MarkUp(set map[string]bool, p string) {
	for !set[p] {
		set[p] = true
		if p == "" {
			return
		}
		p = ParentDir(p)
	}
}
