//go:build linux || windows

package watch

// join is rel/name, or name for the root: the slash-separated paths, relative to the root,
// that the watcher records.
func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
