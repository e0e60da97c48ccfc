package restore

import "errors"

// Sentinel errors, matchable with errors.Is; package snapshot names them as its own.
var (
	// ErrNoSuchPath: a path asked for is neither in the checkpoint nor in the workspace.
	ErrNoSuchPath = errors.New("no such path")
	// ErrUnsafePath: the live workspace has a symlink or non-directory where a restore must pass
	// through a directory, or a path outside the workspace; nothing was written through it.
	ErrUnsafePath = errors.New("unsafe path")
)
