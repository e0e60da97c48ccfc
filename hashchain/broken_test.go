package hashchain

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// middleTampers are edits of a 10-entry chain that leave its first and last lines intact: what
// the tail, the sidecar and the anchor cannot see. line is where verification must fail.
var middleTampers = []struct {
	name   string
	line   int64
	tamper func(lines [][]byte) [][]byte
}{
	{"line 5 deleted", 5, func(l [][]byte) [][]byte { return append(l[:4:4], l[5:]...) }},
	{"line 4 edited, same length", 4, func(l [][]byte) [][]byte {
		l[3] = bytes.Replace(l[3], []byte(`"i":3`), []byte(`"i":7`), 1)
		return l
	}},
	{"lines 3 and 6 swapped", 3, func(l [][]byte) [][]byte { l[2], l[5] = l[5], l[2]; return l }},
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}

// TestWriterRefusesChainBrokenInMiddle: after a line in the middle is deleted, edited in place
// or moved, the next append is refused, whether the chain is opened afresh or was open all
// along (the edit made by another process), with an error naming the first bad line and the
// command to run; nothing is written.
func TestWriterRefusesChainBrokenInMiddle(t *testing.T) {
	for _, tt := range middleTampers {
		for _, already := range []bool{false, true} {
			name := tt.name
			if already {
				name += ", chain open"
			}
			t.Run(name, func(t *testing.T) {
				tc := newTestChain(t)
				c := tc.open(t)
				fill(t, c, 10)
				orig, err := os.ReadFile(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				lines := tt.tamper(splitLines(orig))
				if !already {
					c.Close()
				}
				time.Sleep(20 * time.Millisecond)              // past the file system's timestamp granularity
				f, err := os.OpenFile(tc.path, os.O_WRONLY, 0) // in place, as an editor that keeps the inode
				if err != nil {
					t.Fatal(err)
				}
				tampered := bytes.Join(lines, nil)
				f.WriteAt(tampered, 0)
				f.Truncate(int64(len(tampered)))
				f.Close()

				if !already {
					c, err = Open(tc.path, Options{Anchor: tc.anchor})
					if err != nil {
						assertBroken(t, err, tc.path, tt.line)
						return
					}
					defer c.Close()
				}
				_, err = c.Append("effect", map[string]any{"key": "pay-1"})
				assertBroken(t, err, tc.path, tt.line)
				if after, _ := os.ReadFile(tc.path); !bytes.Equal(after, tampered) {
					t.Fatal("the refused append changed the chain file")
				}
			})
		}
	}
}

func assertBroken(t *testing.T, err error, path string, line int64) {
	t.Helper()
	var be *BrokenError
	if !errors.As(err, &be) || !errors.Is(err, ErrBroken) {
		t.Fatalf("append on a chain broken in the middle: got %v, want a *BrokenError", err)
	}
	if be.Line != line {
		t.Fatalf("the error names line %d, want %d: %v", be.Line, line, err)
	}
	for _, want := range []string{path, "agent-rewind chain verify", "restore"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the error does not say %q: %v", want, err)
		}
	}
}

// TestStampTrustedOnlyForItsFile: the stamp written by one writer lets another skip the full
// verification, but a stamp copied onto a different state of the file (a forged or stale one)
// does not vouch for it.
func TestStampTrustedOnlyForItsFile(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 5)
	c.Close()
	s, ok := readStampFile(t, tc.path)
	if !ok || s.N != 5 {
		t.Fatalf("after 5 appends the stamp is %+v (ok %v), want 5 entries", s, ok)
	}
	// A stale stamp (from before the last append) on a chain whose middle is edited.
	c = tc.open(t)
	fill(t, c, 1)
	c.Close()
	b, _ := os.ReadFile(tc.path)
	lines := middleTampers[1].tamper(splitLines(b))
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(tc.path, bytes.Join(lines, nil), 0o600)
	os.WriteFile(stampPath(tc.path), s.encode(), 0o600)
	if _, err := Open(tc.path, Options{Anchor: tc.anchor}); !errors.Is(err, ErrBroken) {
		t.Fatalf("open with a stale stamp: %v, want the chain found broken", err)
	}
}

func readStampFile(t *testing.T, chain string) (stamp, bool) {
	t.Helper()
	f, err := os.Open(stampPath(chain))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readStamp(f)
}
