//go:build unix

package tape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO, directory or symlink where the tenant's database belongs fails Open at once, naming
// it, before SQLite opens whatever is there.
func TestOpenNotARegularDatabase(t *testing.T) {
	for name, create := range map[string]func(path string) error{
		"a FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"a symlink":   func(p string) error { return os.Symlink(os.DevNull, p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "acme", DatabaseName)
			os.MkdirAll(filepath.Dir(db), 0o700)
			if err := create(db); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				tp, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
				if err == nil {
					tp.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // a bound for a hang, not a timing assertion
				t.Fatal("Open: still blocked after 10s")
			}
			wantErr(t, err, ErrStorage)
			if !strings.Contains(err.Error(), db+" is "+name+", not a regular file") {
				t.Fatalf("Open: %v: want it to name %s as %s", err, db, name)
			}
		})
	}
}
