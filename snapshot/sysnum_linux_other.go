//go:build linux && !amd64 && !arm64

package snapshot

// Unknown here: syncFS falls back to sync(2) and lstatAt to lstat of the joined path.
const (
	sysSyncfs  = 0
	sysFstatat = 0
)
