//go:build linux && !arm

package platform

import (
	"os"
	"syscall"
)

// StartWriteback asks the kernel to start writing a range of f to disk now, without waiting
// (sync_file_range(2) with SYNC_FILE_RANGE_WRITE): a large pack is then flushed while the rest of
// the checkpoint is still being hashed, and the final fsync has little left to do. It is a hint;
// durability still comes from that fsync.
func StartWriteback(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2
	syscall.SyncFileRange(int(f.Fd()), off, n, syncFileRangeWrite)
}
