package snapshot

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/workspacetest"
)

// state is a workspace as a comparable map: path -> "f 0644 <sha256>", "d 0755", "l -> target",
// or "special". It is what "byte for byte" means in these tests. The state directory is left out.
type state map[string]string

func readState(t testing.TB, root string) state {
	t.Helper()
	st := state{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if rel == ".rewind" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			st[rel] = "l -> " + target
		case fi.IsDir():
			st[rel] = fmt.Sprintf("d %04o", fi.Mode().Perm())
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st[rel] = fmt.Sprintf("f %04o %x", fi.Mode().Perm(), sha256.Sum256(b))
		default:
			st[rel] = "special"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// diffStates describes how two states differ, "" when equal.
func diffStates(want, got state) string {
	var out []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			out = append(out, fmt.Sprintf("missing %s (want %s)", p, w))
		} else if g != w {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", p, g, w))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			out = append(out, fmt.Sprintf("extra %s (%s)", p, g))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// The workspace helpers the module's tests share (internal/workspacetest).
var (
	put         = workspacetest.Put
	needTool    = workspacetest.NeedTool
	sh          = workspacetest.Sh
	randomBytes = workspacetest.RandomBytes
	cpuTime     = workspacetest.CPUTime
	mkfifo      = workspacetest.Mkfifo
	symlink     = workspacetest.Symlink
)

// chainLog is a Recorder that keeps entries in memory, as the real chain would keep them in order.
type chainLog struct {
	mu      sync.Mutex
	entries []chainEntry
}

type chainEntry struct {
	Kind string
	Data map[string]any
}

func (c *chainLog) Record(kind string, data any) (int64, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return 0, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, fmt.Errorf("data is not a JSON object: %s", b)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = append(c.entries, chainEntry{kind, m})
	return int64(len(c.entries)), nil
}

func (c *chainLog) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var k []string
	for _, e := range c.entries {
		k = append(k, e.Kind)
	}
	return k
}

// genTree writes a deterministic workspace of n files under root, shaped like a source tree:
// nested folders (20 files per folder, three levels), mostly small text files of 200 B to
// 52 KB (every 500th of 200 KB to 2 MB; about 28 KB on average, so 50,000 files make ~1.4 GB),
// every 13th file executable, every 50th path a symlink to a sibling file, and every 97th folder empty. The same (n, seed) always gives the same bytes.
func genTree(tb testing.TB, root string, n int, seed uint64) (bytes int64) {
	tb.Helper()
	return genTreeMax(tb, root, n, seed, 52000)
}

// genTreeMax is genTree with the common file sizes drawn from 200 B to 200+maxSize B.
func genTreeMax(tb testing.TB, root string, n int, seed uint64, maxSize int) (bytes int64) {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvwxyz\n")
	for i := 0; i < n; i++ {
		dir := fmt.Sprintf("d%02d/e%02d/f%02d", i/8000%100, i/400%20, i/20%20)
		if i%20 == 0 {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				tb.Fatal(err)
			}
			if (i/20)%97 == 96 {
				os.MkdirAll(filepath.Join(root, dir, "empty"), 0o755)
			}
		}
		name := filepath.Join(root, dir, fmt.Sprintf("file%05d.txt", i))
		if i%50 == 49 {
			if err := os.Symlink(fmt.Sprintf("file%05d.txt", i-1), name); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		size := 200 + r.IntN(maxSize)
		if i%500 == 7 && maxSize >= 52000 {
			size = 200000 + r.IntN(1800000)
		}
		buf := make([]byte, size)
		for j := 0; j < size; j += len(line) {
			copy(buf[j:], line)
		}
		// Make every file distinct, as real sources are.
		copy(buf, fmt.Sprintf("%d %x\n", i, r.Uint64()))
		mode := os.FileMode(0o644)
		if i%13 == 0 {
			mode = 0o755
		}
		if err := os.WriteFile(name, buf, mode); err != nil {
			tb.Fatal(err)
		}
		bytes += int64(size)
	}
	return bytes
}

func mustOpen(t testing.TB, root string, opts Options) *Store {
	t.Helper()
	s, err := Open(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// farFuture is an index mtime later than any file's: nothing is racily clean against it.
var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// loosen turns every packed object of s into a loose one and removes the packs: tests that
// damage a stored content (remove, truncate, flip a byte) do it to its file.
func loosen(t testing.TB, s *Store) {
	t.Helper()
	names, err := platform.ReadDirNames(packDir(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".idx")
		if !ok {
			continue
		}
		entries, err := s.objects.ReadPackIdx(id)
		if err != nil {
			t.Fatal(err)
		}
		pack, err := os.ReadFile(filepath.Join(packDir(s), id+".pack"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := s.objects.Path(e.Hash)
			os.MkdirAll(filepath.Dir(name), 0o700)
			if err := os.WriteFile(name, pack[e.Off:e.Off+e.Size], 0o600); err != nil {
				t.Fatal(err)
			}
		}
		os.Remove(filepath.Join(packDir(s), n))
		os.Remove(filepath.Join(packDir(s), id+".pack"))
	}
	s.objects.Forget()
}

// packDir is the store's packs folder.
func packDir(s *Store) string { return filepath.Join(s.state, "packs") }

// lstat is platform.Lstat of name, which must succeed: the stat the store itself compares.
func lstat(t *testing.T, name string) platform.Stat {
	t.Helper()
	st, err := platform.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// perm is name's permission bits as the system keeps them (on Windows, 0o644 or 0o444).
func perm(t *testing.T, name string) uint32 {
	t.Helper()
	return lstat(t, name).Mode & 0o7777
}
