package platform

import (
	"errors"
	"io/fs"
	"os"
)

// ReadDirNames lists the names in dir in no particular order; a dir that does not exist has none.
func ReadDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
