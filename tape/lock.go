package tape

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
)

// fileLock is an exclusive lock on a lock file (flock(2); LockFileEx on Windows). The kernel drops it when the holder exits,
// however it exits, so a killed process never leaves an epoch locked. flock locks belong to the
// open file description, so a second handle in the same process is refused like another process.
type fileLock struct{ f *os.File }

// tryLock takes the lock without waiting; a held lock is ErrConflict, naming what holds it.
func tryLock(path, what string) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: create lock directory %s: %v", ErrStorage, filepath.Dir(path), err)
	}
	f, err := regular.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: open lock file %s: %v", ErrStorage, path, err)
	}
	if err := lockfile.Lock(f, lockfile.Exclusive|lockfile.NonBlocking); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is already in use by another process or handle (lock %s): stop the other one, or use another name", ErrConflict, what, path)
		}
		return nil, fmt.Errorf("%w: lock %s: %v", ErrStorage, path, err)
	}
	return &fileLock{f}, nil
}

// unlock releases the lock; closing the descriptor releases it.
func (l *fileLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
