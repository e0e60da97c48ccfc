package agentws_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	// Chain anchors go to a throwaway state directory, never to the user's real one.
	dir, err := os.MkdirTemp("", "agentws-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("REWIND_STATE_DIR", dir)
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ownStateDir gives the test a state folder of its own: a folder removed by an earlier test may
// give its identity to the test's where the file system reuses file IDs without a birth time
// (Wine's, over a Unix file system), and the earlier test's store would follow it there.
func ownStateDir(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
}

// newWorkspace returns an adapter over a fresh folder holding files.
func newWorkspace(t *testing.T, files map[string]string) (*agentws.Workspace, string) {
	t.Helper()
	ownStateDir(t)
	root := t.TempDir()
	for name, content := range files {
		write(t, root, name, content)
	}
	w, err := agentws.New(root, agentws.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, w.Root()
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// store returns the store of the workspace at root, which must have one.
func store(t testing.TB, root string) string {
	t.Helper()
	w, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return w.Meta
}

func exists(root, name string) bool {
	_, err := os.Lstat(filepath.Join(root, name))
	return err == nil
}

// chainEntry is a line of the store's chain.jsonl, as far as these tests look.
type chainEntry struct {
	Seq  int64           `json:"seq"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// chainEntries reads the workspace's chain file (none when it does not exist).
func chainEntries(t *testing.T, root string) []chainEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(store(t, root), "chain.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []chainEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e chainEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("chain line %q: %v", sc.Bytes(), err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// kinds returns how many chain entries there are of each kind.
func kinds(t *testing.T, root string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, e := range chainEntries(t, root) {
		n[e.Kind]++
	}
	return n
}

// workspaceOf opens the workspace at root, closed at the end of the test.
func workspaceOf(tb testing.TB, root string) *workspace.Workspace {
	tb.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	return ws
}
