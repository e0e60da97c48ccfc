package walk

// Rules is the union of several .rewindignore files: a path excluded by any of them is never
// touched by a restore (the live rules, the target checkpoint's and the pre-rewind state's). A
// nil element is allowed and excludes nothing.
type Rules []*Ignore

// Match implements Matcher: a walk with Rules skips what any of them matches.
func (r Rules) Match(path string, isDir bool) bool {
	for _, m := range r {
		if m.Match(path, isDir) {
			return true
		}
	}
	return false
}

// Excluded reports whether any of the rules excludes path, itself or through a parent.
func (r Rules) Excluded(path string, isDir bool) bool {
	for _, m := range r {
		if m.Excluded(path, isDir) {
			return true
		}
	}
	return false
}
