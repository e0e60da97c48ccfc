//go:build unix

package workspace

import "syscall"

// errCrossDevice is a rename's refusal to move a folder to another file system: the store is
// then copied instead (copyStore).
const errCrossDevice = syscall.EXDEV
