package agentws_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

const (
	cpA = "0123456789ab"
	cpB = "ba9876543210"
)

// newMemory returns failure memory in a fresh workspace, recording on its real chain.
func newMemory(t *testing.T) (*agentws.Memory, *workspace.Workspace) {
	t.Helper()
	ownStateDir(t)
	ws, err := workspace.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return agentws.OpenMemory(ws.Meta, ws), ws
}

func TestMemoryAddAndNotes(t *testing.T) {
	m, ws := newMemory(t)
	if notes, err := m.Notes(); err != nil || notes != nil {
		t.Fatalf("Notes of no file: %v, %v", notes, err)
	}
	n1, all, err := m.Add(cpA, "the migration dropped a column", "back up first")
	if err != nil {
		t.Fatal(err)
	}
	if n1.Checkpoint != cpA || n1.Seq != 0 || n1.Time.IsZero() || len(all) != 1 || all[0] != n1 {
		t.Fatalf("first Add: %+v, %+v", n1, all)
	}
	n2, all, err := m.Add(cpB, "multi\nline\ttext <&> \"quoted\" ünïcode", "")
	if err != nil || n2.Seq != 1 || len(all) != 2 || all[1] != n2 {
		t.Fatalf("second Add: %+v, %+v, %v", n2, all, err)
	}
	notes, err := m.Notes()
	if err != nil || len(notes) != 2 || !notes[0].Time.Equal(n1.Time) || notes[1].WhatFailed != n2.WhatFailed || notes[1].Seq != 1 {
		t.Fatalf("Notes: %+v, %v", notes, err)
	}
	// Each note's chain entry holds the same note at the seq the line names.
	entries := chainEntries(t, ws.Root)
	for _, n := range notes {
		e := entries[n.Seq]
		var d agentws.MemoryEntry
		if err := json.Unmarshal(e.Data, &d); err != nil || e.Kind != agentws.KindMemory || d.Checkpoint != n.Checkpoint || d.WhatFailed != n.WhatFailed || d.Lesson != n.Lesson || !d.Time.Equal(n.Time) {
			t.Errorf("chain entry %d = %s %s, note %+v", n.Seq, e.Kind, e.Data, n)
		}
	}
	// The file is as the package doc says.
	data, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(data), "\n", 2)[0]
	want := fmt.Sprintf(`{"format":1,"time":%q,"checkpoint":"0123456789ab","what_failed":"the migration dropped a column","lesson":"back up first","seq":0}`, n1.Time.Format("2006-01-02T15:04:05.999999999Z07:00"))
	if first != want {
		t.Fatalf("line 1:\n%s\nwant\n%s", first, want)
	}
	// Windows has no POSIX modes (a state file's is its folder's access list there).
	if fi, err := os.Stat(m.Path()); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("memory file mode: %v, %v", fi.Mode(), err)
	}
}

func TestMemoryRefusesBadNotes(t *testing.T) {
	m, ws := newMemory(t)
	for _, c := range []struct{ id, what, lesson, want string }{
		{cpA, "  ", "", "needs what_failed"},
		{"0123", "x", "", "not a full checkpoint id"},
		{"0123456789AB", "x", "", "not a full checkpoint id"},
		{cpA, "\xff", "", "UTF-8"},
		{cpA, strings.Repeat("x", agentws.MaxNoteLine), "", "shorten"},
	} {
		if _, _, err := m.Add(c.id, c.what, c.lesson); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%q, %.20q): %v, want %q", c.id, c.what, err, c.want)
		}
	}
	if _, err := os.Stat(m.Path()); !os.IsNotExist(err) || len(chainEntries(t, ws.Root)) != 0 {
		t.Fatal("a refused note left a file or a chain entry")
	}
}

// failingRecorder is failure memory's seam, failing: nothing may be written then.
type failingRecorder struct{}

func (failingRecorder) Record(string, any) (int64, error) { return 0, errors.New("chain unavailable") }

func TestMemoryRecordFailureWritesNothing(t *testing.T) {
	m, ws := newMemory(t)
	if _, _, err := m.Add(cpA, "kept", ""); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(m.Path())
	bad := agentws.OpenMemory(ws.Meta, failingRecorder{})
	if _, _, err := bad.Add(cpA, "lost", ""); err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("Add with a failing chain: %v", err)
	}
	after, _ := os.ReadFile(m.Path())
	if !bytes.Equal(before, after) {
		t.Fatalf("the file changed: %q", after)
	}
}

// TestMemoryTornTail: bytes without their newline (a writer killed mid-write) are moved aside,
// recorded and reported, by a reader and by a writer alike; the notes before them are kept.
func TestMemoryTornTail(t *testing.T) {
	for _, by := range []string{"reader", "writer"} {
		t.Run(by, func(t *testing.T) {
			m, ws := newMemory(t)
			var reported []agentws.TornTail
			m.OnRecover = func(tt agentws.TornTail) { reported = append(reported, tt) }
			if _, _, err := m.Add(cpA, "first", ""); err != nil {
				t.Fatal(err)
			}
			good, _ := os.ReadFile(m.Path())
			torn := []byte(`{"format":1,"time":"2026-01-02T03:04:05Z","checkpoint":"0123456789ab","what_fa`)
			os.WriteFile(m.Path(), append(bytes.Clone(good), torn...), 0o600)

			var notes []agentws.Note
			var err error
			if by == "reader" {
				notes, err = m.Notes()
			} else {
				_, notes, err = m.Add(cpA, "second", "")
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(reported) != 1 {
				t.Fatalf("reported %+v", reported)
			}
			tt := reported[0]
			sum := sha256.Sum256(torn)
			if tt.Offset != int64(len(good)) || tt.Bytes != int64(len(torn)) || tt.SHA256 != hex.EncodeToString(sum[:]) || tt.File != agentws.MemoryFile {
				t.Fatalf("torn tail %+v", tt)
			}
			saved, err := os.ReadFile(filepath.Join(ws.Meta, tt.SavedAs))
			if err != nil || !bytes.Equal(saved, torn) {
				t.Fatalf("saved %s: %q, %v", tt.SavedAs, saved, err)
			}
			if notes[0].WhatFailed != "first" || (by == "writer") != (len(notes) == 2) {
				t.Fatalf("notes %+v", notes)
			}
			data, _ := os.ReadFile(m.Path())
			if !bytes.HasSuffix(data, []byte("\n")) || bytes.Contains(data, torn) {
				t.Fatalf("file after repair: %q", data)
			}
			var rec agentws.TornTail
			found := false
			for _, e := range chainEntries(t, ws.Root) {
				if e.Kind == agentws.KindMemoryRecover && e.Seq == tt.Seq {
					found = json.Unmarshal(e.Data, &rec) == nil
				}
			}
			if !found || rec.SavedAs != tt.SavedAs || rec.Offset != tt.Offset || rec.SHA256 != tt.SHA256 {
				t.Fatalf("no %s entry at seq %d matching %+v (found %+v)", agentws.KindMemoryRecover, tt.Seq, tt, rec)
			}
			if again, err := m.Notes(); err != nil || len(again) != len(notes) || len(reported) != 1 {
				t.Fatalf("Notes after repair: %+v, %v (reported %d)", again, err, len(reported))
			}
		})
	}
}

// TestMemoryDamagedLine: a complete line that is not a note stops reads and writes, naming the
// line, and records nothing.
func TestMemoryDamagedLine(t *testing.T) {
	m, ws := newMemory(t)
	if _, _, err := m.Add(cpA, "first", ""); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(m.Path())
	os.WriteFile(m.Path(), append(append(bytes.Clone(good), "not json\n"...), good...), 0o600)
	chainBefore := len(chainEntries(t, ws.Root))
	_, err := m.Notes()
	var me *agentws.MemoryError
	if !errors.As(err, &me) || !errors.Is(err, agentws.ErrDamagedMemory) || me.Line != 2 || me.Offset != int64(len(good)) || !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("Notes: %v", err)
	}
	if _, _, err := m.Add(cpA, "second", ""); !errors.Is(err, agentws.ErrDamagedMemory) {
		t.Fatalf("Add: %v", err)
	}
	if len(chainEntries(t, ws.Root)) != chainBefore {
		t.Fatal("a refused Add recorded on the chain")
	}
}

// TestMemoryConcurrentAdds: appends from many goroutines (each its own descriptor and lock)
// interleave as whole lines with distinct seqs.
func TestMemoryConcurrentAdds(t *testing.T) {
	m, _ := newMemory(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 5 {
				if _, _, err := m.Add(cpA, fmt.Sprintf("g%d n%d", i, j), ""); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	notes, err := m.Notes()
	if err != nil || len(notes) != 40 {
		t.Fatalf("%d notes, %v", len(notes), err)
	}
	seen := map[int64]bool{}
	for i, n := range notes {
		if seen[n.Seq] || (i > 0 && n.Seq <= notes[i-1].Seq) {
			t.Fatalf("seqs not distinct and increasing in file order: %+v", notes)
		}
		seen[n.Seq] = true
	}
}
