package watch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSinceRefuses: the watcher answers only when it is sure. A missing or foreign token, one
// from before lost events, and a queue overflow are refused with a reason; a good token gets the
// paths changed after it.
func TestSinceRefuses(t *testing.T) {
	root, cookies := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr, err := newTree(root, "", cookies)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if got := tr.watched(); got != 2 {
		t.Fatalf("watched %d folders, want the root and d", got)
	}
	since := func(tok string) Reply {
		var r Reply
		tr.since("w1", tok, &r)
		return r
	}
	r := since("")
	if r.Token != "w1:0" || !strings.Contains(r.Refused, "no token") {
		t.Fatalf("no token: %+v", r)
	}
	tok := r.Token
	tr.mu.Lock()
	tr.event(tr.dirs["d"], syscall.IN_CLOSE_WRITE, "f")
	tr.mu.Unlock()
	r = since(tok)
	if r.Refused != "" || r.Token != "w1:1" || len(r.Paths) != 1 || r.Paths[0] != "d/f" {
		t.Fatalf("since %s: %+v", tok, r)
	}
	for tok, want := range map[string]string{
		"w0:0":  "earlier watcher",
		"w1:9":  "ahead",
		"w1":    "not <id>:<number>",
		"w1:-1": "not <id>:<number>",
	} {
		if r := since(tok); !strings.Contains(r.Refused, want) {
			t.Errorf("token %q: refused %q, want %q", tok, r.Refused, want)
		}
	}
	tr.mu.Lock()
	tr.lostAt = 1
	tr.mu.Unlock()
	if r := since("w1:0"); !strings.Contains(r.Refused, "too many") {
		t.Errorf("token before lost changes: %q", r.Refused)
	}
	tr.mu.Lock()
	tr.event(-1, syscall.IN_Q_OVERFLOW, "")
	tr.mu.Unlock()
	if r := since("w1:1"); r.Token != "" || !strings.Contains(r.Refused, "overflowed") {
		t.Errorf("after an overflow: %+v (want refused, and no token: the watcher stops)", r)
	}
}

// TestTreeFollowsRenamedFolders: a folder renamed is watched under its new name, with the
// folders inside it; one removed is no longer watched.
func TestTreeFollowsRenamedFolders(t *testing.T) {
	root, cookies := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr, err := newTree(root, filepath.Join(root, "a", "sub"), cookies)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if _, ok := tr.dirs["a/sub"]; ok {
		t.Fatal("the skipped folder is watched")
	}
	tr.mu.Lock()
	tr.dropTree("a")
	tr.mu.Unlock()
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.event(tr.dirs[""], syscall.IN_MOVED_TO|syscall.IN_ISDIR, "b")
	_, a := tr.dirs["a"]
	_, b := tr.dirs["b"]
	_, bsub := tr.dirs["b/sub"]
	tr.mu.Unlock()
	if a || !b || !bsub {
		t.Fatalf("after a -> b: watching a %v, b %v, b/sub %v", a, b, bsub)
	}
}
