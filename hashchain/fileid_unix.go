//go:build unix

package hashchain

import "os"

// identify returns the identity of f's current state (see stamp.go).
func identify(f *os.File) (fileID, error) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	return idOf(st), nil
}
