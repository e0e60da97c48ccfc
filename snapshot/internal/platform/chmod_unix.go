//go:build linux || darwin

package platform

import (
	"io/fs"
	"os"
)

// Fchmod sets the mode of the open file f (fchmod(2)): the mode lands on the file f has open,
// whatever its name points to since.
func Fchmod(f *os.File, mode fs.FileMode) error {
	return f.Chmod(mode)
}
