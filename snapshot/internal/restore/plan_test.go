package restore

import (
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

func file(p, content string) manifest.Entry {
	return manifest.Entry{Path: p, Type: manifest.TypeFile, Mode: 0o644, Size: int64(len(content)), Blob: objects.Sum([]byte(content))}
}

func dir(p string) manifest.Entry {
	return manifest.Entry{Path: p, Type: manifest.TypeDir, Mode: 0o755}
}

func skipped(p, reason string) manifest.Entry {
	return manifest.Entry{Path: p, Type: manifest.TypeSkipped, Reason: reason}
}

// TestNewPlanKeeps: each rule of what a restore never touches, and that a folder kept for one
// keeps everything under it, with the folder's Live flag.
func TestNewPlanKeeps(t *testing.T) {
	live := []manifest.Entry{
		file("a.txt", "old"),
		skipped("busy.log", reasonUnstable),
		skipped("dev.sock", "socket"),
		file("logs/x.log", "x"),
		skipped("run", "fifo"),
		file("same.txt", "same"),
		skipped("w", reasonUnstable),
		file("w/in.txt", "w"),
	}
	want := []manifest.Entry{
		file("a.txt", "new"),
		file("cache.bin", "c"),
		file("dev.sock", "restored?"),
		dir("logs"),
		file("logs/y.log", "y"),
		file("same.txt", "same"),
		skipped("t", "device"),
		file("t/under.txt", "u"),
	}
	p := NewPlan(live, want, walk.Rules{nil, walk.ParseIgnore([]byte("*.bin\nlogs/\n"))})
	var changed []string
	for _, c := range p.Changes {
		changed = append(changed, c.Path)
	}
	if got := strings.Join(changed, " "); got != "a.txt" {
		t.Errorf("changes %q, want %q", got, "a.txt")
	}
	wantKept := map[string]struct {
		reason string
		live   bool
	}{
		"busy.log":    {"not captured by the safety checkpoint, so left as it is; the target does not have it", true},
		"cache.bin":   {"excluded by .rewindignore; not restored", false},
		"dev.sock":    {"not captured by the safety checkpoint, so left as it is; the target's file there was not restored", true},
		"logs":        {"excluded by .rewindignore; not restored", false},
		"logs/x.log":  {"inside logs, which the restore left alone", false},
		"logs/y.log":  {"inside logs, which the restore left alone", false},
		"run":         {"fifo: never deleted by a restore", false},
		"t":           {"not captured by the target checkpoint (device); left as it is", false},
		"t/under.txt": {"inside t, which the restore left alone", false},
		"w":           {"not captured by the safety checkpoint", true},
		"w/in.txt":    {"inside w, which the restore left alone", true},
	}
	got := map[string]Kept{}
	for _, k := range p.Kept {
		got[k.Path] = k
	}
	for path, w := range wantKept {
		k, ok := got[path]
		if !ok {
			t.Errorf("%s not kept", path)
			continue
		}
		if !strings.Contains(k.Reason, w.reason) || k.Live != w.live {
			t.Errorf("%s kept as %q (live %v), want %q (live %v)", path, k.Reason, k.Live, w.reason, w.live)
		}
	}
	if len(got) != len(wantKept) {
		t.Errorf("kept %v, want only %d paths", p.Kept, len(wantKept))
	}
}

// TestKeptAncestor: the nearest kept folder above a path, never the path itself nor a sibling
// that shares a prefix.
func TestKeptAncestor(t *testing.T) {
	kept := map[string]bool{"a": false, "a/b": true, "ab": true}
	for _, tc := range []struct {
		p, under string
		inUse    bool
		ok       bool
	}{
		{"a/x", "a", false, true},
		{"a/b/c/d", "a/b", true, true},
		{"a", "", false, false},
		{"abc/x", "", false, false},
		{"ab/x", "ab", true, true},
	} {
		under, inUse, ok := keptAncestor(kept, tc.p)
		if under != tc.under || inUse != tc.inUse || ok != tc.ok {
			t.Errorf("keptAncestor(%q) = %q, %v, %v; want %q, %v, %v", tc.p, under, inUse, ok, tc.under, tc.inUse, tc.ok)
		}
	}
}
