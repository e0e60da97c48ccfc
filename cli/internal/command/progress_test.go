package command

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

func TestProgressLine(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(100, 0)
	l := &progressLine{w: &out, start: now, delay: time.Second, now: func() time.Time { return now }}
	l.report(snapshot.Progress{Phase: "scan", Done: 10})
	l.clear()
	if out.Len() != 0 {
		t.Fatalf("a short operation drew %q", out.String())
	}
	now = now.Add(1500 * time.Millisecond)
	l.report(snapshot.Progress{Phase: "scan", Done: 12345})
	l.report(snapshot.Progress{Phase: "hash", Done: 3, Total: 1000, Bytes: 3 << 20})
	want := "\rscanning the workspace: 12,345 entries\x1b[K\rreading changed files: 3 of 1,000, 3.00 MiB\x1b[K"
	if out.String() != want {
		t.Fatalf("drew %q, want %q", out.String(), want)
	}
	out.Reset()
	l.clear()
	l.clear()
	if out.String() != "\r\x1b[K" {
		t.Fatalf("clear wrote %q, want one erase", out.String())
	}
	var nilLine *progressLine // not a terminal: every method does nothing
	nilLine.report(snapshot.Progress{Phase: "scan"})
	nilLine.clear()
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, w := range []io.Writer{&bytes.Buffer{}, f} {
		if l := newProgress(w); l != nil {
			t.Fatalf("progress on %T, which is not a terminal", w)
		}
	}
}

func TestProgressText(t *testing.T) {
	for p, want := range map[snapshot.Progress]string{
		{Phase: "restore", Done: 5, Total: 1200}: "restoring: 5 of 1,200 changes",
		{Phase: "other", Done: 2, Total: 3}:      "other: 2 of 3",
		{Phase: "other", Done: 2}:                "other: 2",
	} {
		if got := progressText(p); got != want {
			t.Errorf("progressText(%+v) = %q, want %q", p, got, want)
		}
	}
}
