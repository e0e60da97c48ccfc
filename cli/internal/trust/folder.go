package trust

import (
	"errors"
	"path/filepath"
	"strings"
)

// ErrUntrusted is what every refusal of this package matches (errors.Is).
var ErrUntrusted = errors.New("another user could change it")

// Error says which path is not trusted, why, and what to do.
type Error struct {
	Path string // the folder, symlink or socket refused
	What string // what is wrong with it
	Fix  string // what to do
}

func (e *Error) Error() string { return e.Path + " cannot be trusted: " + e.What + "; " + e.Fix }

// Is makes every Error match ErrUntrusted.
func (e *Error) Is(target error) bool { return target == ErrUntrusted }

// maxLinks bounds the symlinks one walk follows, as the kernel's ELOOP does.
const maxLinks = 40

// below returns the components from below base down to dir, for Within; none when dir is base,
// an error when dir is not inside base.
func below(base, dir string) ([]string, error) {
	rel, err := filepath.Rel(base, dir)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, nil
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, errors.New(dir + " is not inside " + base)
	}
	return strings.Split(rel, string(filepath.Separator)), nil
}
