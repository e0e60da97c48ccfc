package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/winpath"
)

// quiet sends the package's notices to a buffer for the test.
func quiet(t *testing.T) *bytes.Buffer {
	var b bytes.Buffer
	old := Log
	Log = &b
	t.Cleanup(func() { Log = old })
	return &b
}

func TestStoreSurvivesEmptyingTheFolder(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	root := t.TempDir()
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".hidden"), nil, 0o600)
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(root, e.Name()))
	}
	w2, err := Open(root)
	if err != nil || w2.ID != w.ID {
		t.Fatalf("after emptying the folder: %v, %v; want store %s", w2, err, w.ID)
	}
	if !HasStore(root) {
		t.Fatal("HasStore is false")
	}
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o700)
	if got, ok := Lookup(sub); !ok || got != w.Root {
		t.Fatalf("Lookup(%s) = %q, %v; want %s", sub, got, ok, w.Root)
	}
	if _, ok := Lookup(t.TempDir()); ok {
		t.Fatal("Lookup found a store for a fresh folder")
	}
}

func TestStoreFollowsAMove(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	log := quiet(t)
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	os.Mkdir(root, 0o700)
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(parent, "moved")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(moved)
	if err != nil || w2.ID != w.ID {
		t.Fatalf("after a move: %v, %v; want store %s", w2, err, w.ID)
	}
	if !strings.Contains(log.String(), "new path") {
		t.Fatalf("no notice of the move: %q", log)
	}
	if rec, _ := (registry{w.Base}).record(w.ID); rec.Root != w2.Root {
		t.Fatalf("record root %s, want %s", rec.Root, w2.Root)
	}
}

func TestRecreatedFolderIsANewWorkspace(t *testing.T) {
	if winpath.UnderWine() {
		t.Skip("Wine's file ID is the Unix inode, which a recreated folder may reuse (NTFS's carries a sequence number), and its creation time is not stable enough to tell them apart")
	}
	t.Setenv(StateDirEnv, t.TempDir())
	log := quiet(t)
	root := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(root, 0o700)
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := w.Chain()
	c.Append("checkpoint", map[string]int{"n": 1})
	c.Close()
	os.RemoveAll(root)
	os.Mkdir(root, 0o700)
	_, err = Open(root)
	if !errors.Is(err, ErrNotInitialized) || !strings.Contains(err.Error(), "--adopt "+w.ID) {
		t.Fatalf("Open of a recreated folder: %v", err)
	}
	orphans, err := Orphans()
	if err != nil || len(orphans) != 1 || orphans[0].ID != w.ID {
		t.Fatalf("orphans: %+v, %v", orphans, err)
	}
	w2, err := Init(root)
	if err != nil || w2.ID == w.ID {
		t.Fatalf("Init of a recreated folder: %v, %v", w2, err)
	}
	if !strings.Contains(log.String(), "new history") {
		t.Fatalf("no notice of the new history: %q", log)
	}
	if c, err := w2.Chain(); err != nil {
		t.Fatalf("the new workspace's chain: %v", err)
	} else {
		c.Close()
	}
	if _, err := Adopt(root, "0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "already has store") {
		t.Fatalf("adopt into a folder with a store, of a store it was not offered: %v", err)
	}
	// A third folder adopts the first history and its chain, anchored by id, opens.
	os.RemoveAll(root)
	os.Mkdir(root, 0o700)
	w3, err := Adopt(root, w.ID)
	if err != nil || w3.ID != w.ID {
		t.Fatalf("adopt: %v, %v", w3, err)
	}
	c, err = w3.ExistingChain()
	if err != nil {
		t.Fatalf("the adopted chain: %v", err)
	}
	if h, _ := c.Head(); h.Size != 1 {
		t.Fatalf("adopted chain size %d", h.Size)
	}
	c.Close()
	orphans, _ = Orphans()
	if len(orphans) != 1 || orphans[0].ID != w2.ID {
		t.Fatalf("orphans after adopt: %+v", orphans)
	}
	if err := RemoveOrphan(orphans[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w2.Meta); !os.IsNotExist(err) {
		t.Fatalf("orphan store still there: %v", err)
	}
	if orphans, _ = Orphans(); len(orphans) != 0 {
		t.Fatalf("orphans after removal: %+v", orphans)
	}
}

// legacyStore makes a store as versions before this one did: <root>/.rewind with a chain of n
// entries anchored by the root's path.
func legacyStore(t *testing.T, root string, n int) {
	t.Helper()
	os.Mkdir(filepath.Join(root, LegacyDir), 0o700)
	os.WriteFile(filepath.Join(root, LegacyDir, "format"), []byte("1\n"), 0o600)
	anchor, err := hashchain.AnchorPath(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hashchain.Open(filepath.Join(root, LegacyDir, ChainFile), hashchain.Options{Create: true, Anchor: anchor})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := c.Append("checkpoint", map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	os.MkdirAll(filepath.Join(root, LegacyDir, "effects", "keys"), 0o700)
	os.WriteFile(filepath.Join(root, LegacyDir, "effects", "keys", "k.json"), []byte("{}"), 0o600)
}

func TestLegacyStoreMigrated(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	log := quiet(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	legacyStore(t, root, 3)
	oldAnchor, _ := hashchain.AnchorPath(root)
	w, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, LegacyDir)); !os.IsNotExist(err) {
		t.Fatalf(".rewind/ still in the workspace: %v", err)
	}
	if _, err := os.Stat(oldAnchor); !os.IsNotExist(err) {
		t.Fatalf("old anchor still there: %v", err)
	}
	if w.Info.MigratedFrom != filepath.Join(root, LegacyDir) || !strings.Contains(log.String(), "moved this workspace's store") {
		t.Fatalf("record %+v, log %q", w.Info, log)
	}
	if _, err := os.Stat(w.Path("effects", "keys", "k.json")); err != nil {
		t.Fatal(err)
	}
	c, err := w.ExistingChain()
	if err != nil {
		t.Fatalf("migrated chain: %v", err)
	}
	if h, _ := c.Head(); h.Size != 3 {
		t.Fatalf("migrated chain size %d", h.Size)
	}
	c.Close()
}

func TestLegacyStoreAcrossFileSystems(t *testing.T) {
	if winpath.UnderWine() {
		t.Skip("Wine's Z:\\dev\\shm lets Everyone replace what is in it, so it is refused as a state folder")
	}
	shm, err := os.MkdirTemp("/dev/shm", "rewind-state-")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	t.Setenv(StateDirEnv, shm)
	quiet(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if a, b := must(identityOf(root)), must(identityOf(shm)); a.Device == b.Device {
		t.Skip("/dev/shm is on the same file system")
	}
	legacyStore(t, root, 2)
	w, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, LegacyDir)); !os.IsNotExist(err) {
		t.Fatalf(".rewind/ still in the workspace: %v", err)
	}
	c, err := w.ExistingChain()
	if err != nil {
		t.Fatalf("copied chain: %v", err)
	}
	c.Close()
}

func TestLegacyStoreWithABrokenChainStays(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	log := quiet(t)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	legacyStore(t, root, 3)
	chain := filepath.Join(root, LegacyDir, ChainFile)
	b, _ := os.ReadFile(chain)
	os.WriteFile(chain, bytes.Replace(b, []byte(`"n":1`), []byte(`"n":7`), 1), 0o600)
	w, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if w.Meta != filepath.Join(root, LegacyDir) || !strings.Contains(log.String(), "was not moved") {
		t.Fatalf("store %s, log %q", w.Meta, log)
	}
	if g, err := os.ReadFile(filepath.Join(w.Meta, ".gitignore")); err != nil || !strings.Contains(string(g), "\n*\n") {
		t.Fatalf(".gitignore of the legacy store: %q, %v", g, err)
	}
}

func TestCheckNoticesTheStoreGone(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Check(); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(w.Meta)
	if err := w.Check(); !errors.Is(err, ErrStoreGone) || !strings.Contains(err.Error(), "removed or moved") {
		t.Fatalf("Check after removal: %v", err)
	}
	if winpath.UnderWine() {
		t.Skip("a store replaced is told by its folder's identity, and Wine's file ID is the Unix inode, which the new folder may reuse (NTFS's carries a sequence number)")
	}
	os.Mkdir(w.Meta, 0o700)
	if err := w.Check(); !errors.Is(err, ErrStoreGone) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("Check after replacement: %v", err)
	}
}
