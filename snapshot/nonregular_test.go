package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// A FIFO in place of a pack or its index fails a rewind at once, naming it: it used to block
// the read forever (the store holds only regular files; see internal/regular).
func TestPackFIFO(t *testing.T) {
	for _, suffix := range []string{".idx", ".pack"} {
		t.Run(suffix, func(t *testing.T) {
			root := t.TempDir()
			for i := 0; i < 100; i++ {
				put(t, root, fmt.Sprintf("f%03d.txt", i), fmt.Sprintf("file %d\n", i), 0o644)
			}
			s := mustOpen(t, root, Options{})
			a, err := s.Checkpoint(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			var fifo string
			names, _ := platform.ReadDirNames(packDir(s))
			for _, n := range names {
				if strings.HasSuffix(n, suffix) {
					fifo = filepath.Join(packDir(s), n)
					os.Remove(fifo)
					mkfifo(t, fifo, 0o600)
				}
			}
			if fifo == "" {
				t.Fatalf("no %s file in %s", suffix, packDir(s))
			}
			os.Remove(filepath.Join(root, "f000.txt"))
			done := make(chan error, 1)
			go func() {
				_, err := mustOpen(t, root, Options{}).Rewind(ctx, a.ID, RestoreOptions{})
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // a bound for the hang, not a timing assertion
				t.Fatalf("rewind with a FIFO for %s: still blocked after 10s", fifo)
			}
			if err == nil || !strings.Contains(err.Error(), fifo+" is a FIFO, not a regular file") {
				t.Fatalf("rewind with a FIFO for %s: %v", fifo, err)
			}
		})
	}
}
