//go:build unix

package durable

import (
	"fmt"
	"os"
)

// SyncDir fsyncs a directory, making the names created, renamed or removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// rename puts oldpath at newpath, replacing what was there; SyncDir of the folder then makes it
// durable.
func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
