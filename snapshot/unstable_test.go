package snapshot

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestChangingFileNeverStoredTorn rewrites a file in place while checkpoints read it. Each
// version is one byte repeated, so a torn read (parts of two versions) shows as a mixed content.
// Every checkpoint must store a whole version or report the file skipped.
func TestChangingFileNeverStoredTorn(t *testing.T) {
	root := t.TempDir()
	const size = 256 << 10
	name := filepath.Join(root, "busy.bin")
	os.WriteFile(name, bytes.Repeat([]byte{'a'}, size), 0o644)
	s := mustOpen(t, root, Options{})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		// One write per version: between writes the file always holds a whole version, so a
		// mixed content can only come from a read that overlapped a write.
		for v := 1; !stop.Load(); v++ {
			f.WriteAt(bytes.Repeat([]byte{byte('a' + v%26)}, size), 0)
		}
	}()
	skipped, whole := 0, 0
	for i := 0; i < 30; i++ {
		c, err := s.Checkpoint(ctx, "busy")
		if err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
		entries, _ := s.Entries(c.ID)
		for _, e := range entries {
			if e.Path != "busy.bin" {
				continue
			}
			if e.Type == TypeSkipped {
				skipped++
				continue
			}
			r, err := s.objects.Open(e.Blob)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != size || !bytes.Equal(b, bytes.Repeat(b[:1], size)) {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("checkpoint %d stored a torn read of busy.bin", i)
			}
			whole++
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("whole versions stored: %d, reported skipped: %d", whole, skipped)
}
