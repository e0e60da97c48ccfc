package platform

import (
	"fmt"
	"path"
	"strings"
)

// Names Windows cannot hold. A checkpoint made on Linux or macOS may hold names that NTFS and
// the Win32 API refuse or change: restoring it on Windows would fail part way or write one file
// over another, so a restore there checks every name first (WindowsBadNames) and refuses the
// lot before it changes anything. The rules are Microsoft's "Naming Files, Paths, and
// Namespaces": pure logic, so they are tested on every system.

// WindowsNameProblem says why Windows cannot hold a file or folder named name (one path
// element), or "" when it can.
func WindowsNameProblem(name string) string {
	for _, r := range name {
		switch {
		case r < 0x20:
			return fmt.Sprintf("holds the control character %U, which Windows forbids in names", r)
		case strings.ContainsRune(`<>:"|?*\`, r):
			return fmt.Sprintf("holds %q, which Windows forbids in names", r)
		}
	}
	if n := len(name); n > 0 && (name[n-1] == '.' || name[n-1] == ' ') {
		return "ends in a dot or a space, which Windows drops"
	}
	if isReservedDevice(name) {
		return "is a device name Windows reserves (CON, PRN, AUX, NUL, COM1-9, LPT1-9), with any extension"
	}
	return ""
}

// isReservedDevice reports whether name is one of the DOS device names, in any case, with or
// without an extension (NUL.txt is NUL too) and spaces before it.
func isReservedDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	base = strings.TrimRight(base, " ")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) < 4 {
		return false
	}
	switch strings.ToUpper(base[:3]) {
	case "COM", "LPT":
	default:
		return false
	}
	// The digits 1 to 9, and the superscripts ¹ ² ³, which Windows reads as digits here.
	switch base[3:] {
	case "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}

// BadName is a path Windows cannot hold, and why.
type BadName struct {
	Path string
	Why  string
}

// WindowsBadNames returns the paths (slash-separated, relative, sorted as in a manifest, folders
// listed) that Windows cannot hold: a name WindowsNameProblem refuses, and a name that differs
// only by case from another in one folder (reported at the second, naming the first: NTFS
// folders ignore case, so one would overwrite the other). Nothing under a path reported is.
// Case is folded rune by rune (strings.ToUpper), as NTFS's table of upper cases does.
func WindowsBadNames(paths []string) []BadName {
	var bad []BadName
	first := make(map[string]string, len(paths)) // each path upper-cased, to the first path so
	refused := map[string]bool{}
	for _, p := range paths {
		if under(refused, path.Dir(p)) {
			continue
		}
		if why := WindowsNameProblem(path.Base(p)); why != "" {
			bad = append(bad, BadName{Path: p, Why: why})
			refused[p] = true
			continue
		}
		key := strings.ToUpper(p)
		if f, ok := first[key]; ok && f != p {
			bad = append(bad, BadName{Path: p, Why: fmt.Sprintf("differs from %s only by case, and Windows folders ignore case", f)})
			refused[p] = true
			continue
		}
		first[key] = p
	}
	return bad
}

// under reports whether p or a folder above it is in set.
func under(set map[string]bool, p string) bool {
	for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if set[p] {
			return true
		}
	}
	return false
}
