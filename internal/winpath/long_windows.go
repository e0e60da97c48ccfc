package winpath

import (
	"path/filepath"
	"strings"
)

// Long gives a Windows API call a path it takes beyond MAX_PATH (260 characters): the \\?\
// form, which must be absolute and clean. os does the same for its own calls, but not for the
// calls this repository makes itself (CreateFile with shared deletion, MoveFileEx written
// through).
func Long(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\?\`) {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if strings.HasPrefix(abs, `\\`) {
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}
