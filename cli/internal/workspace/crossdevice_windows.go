package workspace

import "syscall"

// errCrossDevice is a rename's refusal to move a folder to another volume
// (ERROR_NOT_SAME_DEVICE; Go's syscall.EXDEV is never returned on Windows): the store is then
// copied instead (copyStore).
const errCrossDevice = syscall.Errno(17)
