package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// writeFileDurable writes data to name so that after a crash name holds either its old content or
// all of data: a temporary file in the same directory, write, fsync, close, rename, fsync the
// directory.
func writeFileDurable(name string, data []byte, perm os.FileMode) error {
	return writeFile(name, data, perm, true)
}

// writeFile is writeFileDurable without the fsyncs when durable is false (for caches).
func writeFile(name string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return err
	}
	if durable {
		return syncDir(dir)
	}
	return nil
}

// removeDurable removes name and syncs its directory, so the removal survives a crash.
func removeDurable(name string) error {
	if err := os.Remove(name); err != nil {
		return err
	}
	return syncDir(filepath.Dir(name))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// randomHex returns n random bytes as hex, for temporary names and operation ids.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
