package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFlushLaterTakesTheChainsFlush: with Call.FlushLater (a guard server's group commit), the
// automatic checkpoint of a change records its chain entry before the answer and hands over
// the chain's flush, so the anchor stays behind until the flush runs; without it, the anchor
// is at the chain's head when the call returns.
func TestFlushLaterTakesTheChainsFlush(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	t.Setenv("REWIND_WATCH", "off")
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	flushes := map[string]func() error{}
	call := func(id string, later bool) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(id), 0o644); err != nil {
			t.Fatal(err)
		}
		c := Call{Checkpoint: true, Dir: root, NoWatcherStart: true,
			Input: `{"session_id":"s","cwd":"` + root + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"` + id + `"}`}
		if later {
			c.FlushLater = func(key string, flush func() error) { flushes[key] = flush }
		}
		var out, errb bytes.Buffer
		if code := Guard(c, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("call %s: exit %d: %s", id, code, errb.String())
		}
	}
	// the one file of the state folder that matches pattern, and its bytes
	one := func(pattern ...string) (string, []byte) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(append([]string{os.Getenv("REWIND_STATE_DIR")}, pattern...)...))
		if len(files) != 1 {
			t.Fatalf("%v: %v, want one", pattern, files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		return files[0], b
	}
	entries := func() (chain string, n int) {
		chain, b := one("stores", "*", "chain.jsonl")
		return chain, bytes.Count(b, []byte("\n"))
	}
	anchored := func() string { // the anchored head's size line
		_, b := one("anchors", "*", "head")
		return strings.Split(string(b), "\n")[1]
	}
	call("toolu_1", false)
	_, n := entries()
	if got := anchored(); got != strconv.Itoa(n) {
		t.Fatalf("without FlushLater the anchor holds size %s, want the chain's %d", got, n)
	}
	call("toolu_2", true)
	chain, n2 := entries()
	if n2 <= n {
		t.Fatalf("the changed call recorded nothing: %d entries, then %d", n, n2)
	}
	if got := anchored(); got != strconv.Itoa(n) {
		t.Fatalf("with FlushLater the anchor moved to %s before the flush, want it left at %d", got, n)
	}
	flush := flushes[chain]
	if flush == nil || len(flushes) != 1 {
		t.Fatalf("handed over %v, want one flush keyed by %s", flushes, chain)
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if got := anchored(); got != strconv.Itoa(n2) {
		t.Fatalf("after the flush the anchor holds size %s, want %d", got, n2)
	}
}
