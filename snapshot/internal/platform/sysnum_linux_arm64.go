package platform

import "syscall"

// System call numbers the syscall package lacks or names per architecture.
const (
	sysSyncfs  = 267 // syncfs(2)
	sysFstatat = syscall.SYS_FSTATAT
)
