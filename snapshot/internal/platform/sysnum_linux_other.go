//go:build linux && !amd64 && !arm64

package platform

// Unknown here: SyncFS falls back to sync(2) and LstatAt to lstat of the joined path.
const (
	sysSyncfs  = 0
	sysFstatat = 0
)
