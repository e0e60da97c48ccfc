package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TestRewindStopsAtAFileHeldOpen: a file another program holds open sharing reading but not its
// deletion (an editor, a dev server) can be checkpointed but not replaced on Windows. The rewind tries it again
// briefly, then stops with an error naming the file and the journal kept; once the file is
// closed, the next open of the store finishes the rewind.
func TestRewindStopsAtAFileHeldOpen(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "v1", 0o644)
	s := mustOpen(t, root, Options{})
	c1, err := s.Checkpoint(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(root, "a.txt")
	put(t, root, "a.txt", "v2", 0o644)
	p, _ := syscall.UTF16PtrFromString(held)
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ, syscall.FILE_SHARE_READ, nil, syscall.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Rewind(ctx, c1.ID, RestoreOptions{})
	syscall.CloseHandle(h)
	if err == nil {
		t.Skip("this Windows (Wine?) replaced a file held open without FILE_SHARE_DELETE: it does not enforce sharing modes")
	}
	if !errors.Is(err, platform.ErrHeldOpen) || !strings.Contains(err.Error(), held) || !strings.Contains(err.Error(), "journal is kept") {
		t.Fatalf("rewind over a held file: %v, want ErrHeldOpen naming %s, with the journal kept", err, held)
	}
	t.Log(err)
	if _, err := os.Stat(s.journalPath()); err != nil {
		t.Fatalf("the journal is gone after a stopped rewind: %v", err)
	}
	if got, _ := os.ReadFile(held); string(got) != "v2" {
		t.Fatalf("a.txt holds %q while held, want it untouched (v2)", got)
	}
	s2 := mustOpen(t, root, Options{})
	if got, _ := os.ReadFile(held); string(got) != "v1" || s2.Recovered() == nil {
		t.Fatalf("after the file was closed, the next open left a.txt %q (recovered %+v), want v1", got, s2.Recovered())
	}
}
