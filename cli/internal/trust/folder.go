package trust

import "errors"

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
