package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// running is an in-process watcher for a test; kill stops it (as if killed: its token is void).
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func startWatcher(t *testing.T, root, store string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Run(ctx, Options{Root: root, Store: store}) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := Ask(store, Request{Op: "status"}, time.Second); err == nil {
			break
		}
		select {
		case err := <-r.done:
			t.Fatalf("watcher exited at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("watcher did not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(r.kill)
	return r
}

// stopped waits for a watcher that refused to trust itself any more to stop.
func (r *running) stopped(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for kill
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop after refusing")
	}
}

func (r *running) kill() {
	r.cancel()
	<-r.done
	r.done <- nil // a second kill returns at once
}

// fsModel applies random file operations to a tree.
type fsModel struct {
	root string
	rng  *rand.Rand
	n    int
}

func (m *fsModel) all(dirsOnly bool) []string {
	var out []string
	filepath.WalkDir(m.root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == m.root {
			return nil
		}
		rel, _ := filepath.Rel(m.root, p)
		if !dirsOnly || d.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (m *fsModel) pick(dirsOnly bool) string {
	all := m.all(dirsOnly)
	if len(all) == 0 {
		return ""
	}
	return all[m.rng.IntN(len(all))]
}

// dirFor picks a directory (possibly the root) to put something in.
func (m *fsModel) dirFor() string {
	if d := m.pick(true); d != "" && m.rng.IntN(3) > 0 {
		return d
	}
	return ""
}

func (m *fsModel) newName(prefix string) string {
	m.n++
	return filepath.Join(m.dirFor(), fmt.Sprintf("%s%d", prefix, m.n))
}

// step applies one random operation and returns what it did. Errors of operations that raced
// (a path gone meanwhile) are ignored: the tree is whatever it is, and that is what is compared.
func (m *fsModel) step() string {
	abs := func(rel string) string { return filepath.Join(m.root, rel) }
	switch op := m.rng.IntN(12); op {
	case 0: // create
		p := m.newName("f")
		os.WriteFile(abs(p), []byte(fmt.Sprint("new ", m.n)), 0o644)
		return "create " + p
	case 1: // write
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode().IsRegular() {
			os.WriteFile(abs(p), []byte(fmt.Sprint("write ", m.rng.Int())), 0o644)
		}
		return "write " + p
	case 2: // delete a file or symlink
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && !st.IsDir() {
			os.Remove(abs(p))
		}
		return "delete " + p
	case 3, 4: // rename a file or a whole directory
		p := m.pick(op == 4)
		if p == "" {
			return "rename none"
		}
		to := m.newName("r")
		if strings.HasPrefix(to+"/", p+"/") {
			return "rename into itself"
		}
		os.Rename(abs(p), abs(to))
		return "rename " + p + " " + to
	case 5: // chmod
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode()&os.ModeSymlink == 0 {
			mode := os.FileMode(0o600)
			if st.IsDir() {
				mode = 0o700
			}
			if m.rng.IntN(2) == 0 {
				mode |= 0o055
			}
			os.Chmod(abs(p), mode)
		}
		return "chmod " + p
	case 6: // symlink create or retarget
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode()&os.ModeSymlink != 0 {
			os.Remove(abs(p))
			os.Symlink(fmt.Sprint("target", m.rng.IntN(100)), abs(p))
			return "retarget " + p
		}
		q := m.newName("l")
		os.Symlink(fmt.Sprint("target", m.rng.IntN(100)), abs(q))
		return "symlink " + q
	case 7, 8: // mkdir, with a file inside sometimes
		p := m.newName("d")
		os.MkdirAll(abs(filepath.Join(p, "sub")), 0o755)
		if m.rng.IntN(2) == 0 {
			os.WriteFile(abs(filepath.Join(p, "sub", "in")), []byte("in"), 0o644)
		}
		return "mkdir " + p
	case 9: // rmdir (the whole subtree)
		p := m.pick(true)
		if p != "" {
			os.RemoveAll(abs(p))
		}
		return "rmdir " + p
	case 10: // a hard link: a later write through one name changes every name
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode().IsRegular() {
			q := m.newName("h")
			os.Link(abs(p), abs(q))
			return "link " + p + " " + q
		}
		return "link none"
	default: // excluded folder traffic
		os.MkdirAll(abs("build"), 0o755)
		os.WriteFile(abs(filepath.Join("build", fmt.Sprint(m.rng.IntN(5)))), []byte(fmt.Sprint(m.rng.Int())), 0o644)
		return "build"
	}
}

// TestWatcherAssistedEqualsFullWalk applies random sequences of file operations (create, write,
// delete, rename of files and whole directories, chmod, symlink retarget, mkdir/rmdir, hard
// links, changes made while a checkpoint runs, the watcher killed and restarted midway) and
// checks that every watcher-assisted checkpoint's manifest equals a full walk's taken right after.
func TestWatcherAssistedEqualsFullWalk(t *testing.T) {
	if !Supported {
		t.Skip("no watcher on this system")
	}
	seeds := 4
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { propertyRun(t, uint64(seed)) })
	}
}

func propertyRun(t *testing.T, seed uint64) {
	ctx := context.Background()
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(filepath.Join(root, snapshot.IgnoreFile), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &fsModel{root: root, rng: rand.New(rand.NewPCG(seed, 17))}
	for range 20 {
		m.step()
	}
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store})
	if err != nil {
		t.Fatal(err)
	}
	w := startWatcher(t, root, store)
	var hinted, full int
	var log []string
	// raced: a folder removed while the walk reads it fails the checkpoint (snapshot's walker
	// reports ENOENT from getdents of a removed folder), for a full walk as for a watched one.
	var raced bool
	assisted := func() *snapshot.CheckpointResult {
		t.Helper()
		cur, err := s.Current()
		if err != nil {
			t.Fatal(err)
		}
		hint, tok, why, err := Hint(store, root, cur)
		if err != nil && !errors.Is(err, ErrNotRunning) {
			t.Fatal(err)
		}
		res, err := s.CheckpointChanged(ctx, "", hint)
		if err != nil && raced && strings.Contains(err.Error(), "no such file or directory") {
			log = append(log, "the raced checkpoint failed: "+err.Error())
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			if err := WritePosition(store, res.ID, tok); err != nil {
				t.Fatal(err)
			}
		}
		if res.Walk.Mode == "changed" {
			hinted++
		} else {
			full++
			log = append(log, "full walk: "+why+res.Walk.Reason)
		}
		return res
	}
	for round := range 30 {
		for range 1 + m.rng.IntN(6) {
			log = append(log, m.step())
		}
		switch m.rng.IntN(8) {
		case 0: // changes while the checkpoint runs: the next one must see them
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
						m.step()
					}
				}
			}()
			raced = true
			assisted()
			raced = false
			close(stop)
			<-done
			log = append(log, "raced")
			continue
		case 1: // the watcher is killed midway and a new one starts
			w.kill()
			log = append(log, m.step())
			w = startWatcher(t, root, store)
			log = append(log, "watcher restarted")
		}
		a := assisted()
		cur, _ := s.Current()
		_, tok, _, _ := Hint(store, root, cur)
		f, err := s.Checkpoint(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			WritePosition(store, f.ID, tok)
		}
		if a.Manifest != f.Manifest {
			ae, _ := s.Entries(a.ID)
			fe, _ := s.Entries(f.ID)
			t.Fatalf("round %d: assisted checkpoint (walk %+v) differs from the full walk\nops: %s\n%s", round, a.Walk, strings.Join(log, "; "), entryDiff(ae, fe))
		}
	}
	t.Logf("seed %d: %d checkpoints used the watcher, %d walked", seed, hinted, full)
	if hinted < 10 {
		t.Fatalf("only %d of %d checkpoints used the watcher: %s", hinted, hinted+full, strings.Join(log, "; "))
	}
}

func entryDiff(a, b []snapshot.Entry) string {
	am, bm := map[string]snapshot.Entry{}, map[string]snapshot.Entry{}
	for _, e := range a {
		am[e.Path] = e
	}
	for _, e := range b {
		bm[e.Path] = e
	}
	var out []string
	for p, e := range am {
		if f, ok := bm[p]; !ok {
			out = append(out, fmt.Sprintf("only assisted: %+v", e))
		} else if f != e {
			out = append(out, fmt.Sprintf("differs: %+v vs walk %+v", e, f))
		}
	}
	for p, e := range bm {
		if _, ok := am[p]; !ok {
			out = append(out, fmt.Sprintf("only walk: %+v", e))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
