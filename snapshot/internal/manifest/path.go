package manifest

import "strings"

// ParentDir returns the directory holding path p ("" for the root).
func ParentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
