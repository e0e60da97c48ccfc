package ui

import (
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

func TestCompareFileKinds(t *testing.T) {
	file := func(mode uint32, blob byte, size int64) *snapshot.Entry {
		return &snapshot.Entry{Path: "p", Type: snapshot.TypeFile, Mode: mode, Blob: snapshot.Hash{blob}, Size: size}
	}
	link := func(target string) *snapshot.Entry {
		return &snapshot.Entry{Path: "p", Type: snapshot.TypeSymlink, Target: target}
	}
	cases := []struct {
		name     string
		from, to *snapshot.Entry
		a, b     string
		show     string
	}{
		{"text", file(0o644, 1, 4), file(0o644, 2, 4), "one\n", "two\n", "text"},
		{"added text", nil, file(0o644, 2, 4), "", "two\n", "text"},
		{"binary", file(0o644, 1, 3), file(0o644, 2, 3), "a\x00b", "a\x00c", "binary"},
		{"invalid UTF-8", file(0o644, 1, 2), file(0o644, 2, 2), "\xff\xfe", "ok", "binary"},
		{"mode", file(0o644, 1, 4), file(0o755, 1, 4), "", "", "mode"},
		{"symlink", link("a"), link("b"), "", "", "symlink"},
		{"type", file(0o644, 1, 4), link("b"), "", "", "type"},
		{"large", file(0o644, 1, maxFileBytes+1), file(0o644, 2, 4), "", "x\n", "large"},
	}
	for _, c := range cases {
		fd := compareFile("p", c.from, c.to, []byte(c.a), []byte(c.b))
		if fd.Show != c.show {
			t.Errorf("%s: shown as %q (%s), want %q", c.name, fd.Show, fd.Note, c.show)
		}
	}
	fd := compareFile("p", file(0o644, 1, 4), file(0o644, 2, 4), []byte("one\n"), []byte("two\n"))
	if len(fd.Hunks) != 1 || len(fd.Hunks[0].Lines) != 2 || fd.Hunks[0].Lines[0].Text != "one\n" || fd.Hunks[0].Lines[1].Op != "+" {
		t.Fatalf("text hunks %+v", fd.Hunks)
	}
	// Thousands of changed lines: reported as too many, not computed.
	var a, b strings.Builder
	for i := 0; i < 2*maxDiffD; i++ {
		a.WriteString("a\n")
		b.WriteString("b\n")
	}
	if fd := compareFile("p", file(0o644, 1, 1), file(0o644, 2, 1), []byte(a.String()), []byte(b.String())); fd.Show != "huge" {
		t.Fatalf("huge change shown as %q", fd.Show)
	}
}

// FuzzDiffLines: any two texts (file contents from the workspace) diff without a panic, and the
// diff rebuilds both sides exactly.
func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nx\nc\n")
	f.Add("", "x")
	f.Add("no newline", "no newline\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		la, lb := splitLines([]byte(a)), splitLines([]byte(b))
		ls, ok := diffLines(la, lb, 200)
		if !ok {
			return
		}
		ga, gb := apply(ls)
		if strings.Join(ga, "") != strings.Join(la, "") || strings.Join(gb, "") != strings.Join(lb, "") {
			t.Fatalf("rebuilt %q, %q from %q, %q", ga, gb, a, b)
		}
		hunks(ls, 3, 50)
	})
}
