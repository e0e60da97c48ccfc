package watch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

// inProcess is a Windows watcher served in this process (askLocal), without its socket: what a
// watcher inside the guard server is (the socket is TestServerOverTheSocket's).
type inProcess struct {
	s       *server
	stopped bool // it refused to trust itself any more and asked to stop
}

// started numbers the watchers started in this process.
var started atomic.Int64

func startInProcess(t *testing.T, root, store string) *inProcess {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir(store), "cookies"), 0o700))
	tr, err := newTree(root, store, filepath.Join(dir(store), "cookies"))
	if err != nil {
		t.Fatal(err)
	}
	w := &inProcess{}
	id := fmt.Sprintf("test%d", started.Add(1)) // new at each start, as a watcher's is
	w.s = &server{o: Options{Root: root, Store: store}, id: id, t: tr, stop: func() { w.stopped = true }}
	local.Store(store, w.s)
	t.Cleanup(w.kill)
	return w
}

func (w *inProcess) kill() {
	if local.CompareAndDelete(w.s.o.Store, w.s) {
		w.s.t.close()
	}
}

// TestWindowsWatcherAssistedEqualsFullWalk is TestWatcherAssistedEqualsFullWalk for the Windows
// watcher: random file operations (create, write, delete, renames of files and whole folders,
// attribute changes, mkdir/rmdir, hard links, changes made while a checkpoint runs, the watcher
// ended and started again), and every checkpoint taken with its answer equals a full walk's.
func TestWindowsWatcherAssistedEqualsFullWalk(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { windowsPropertyRun(t, uint64(seed)) })
	}
}

func windowsPropertyRun(t *testing.T, seed uint64) {
	ctx := context.Background()
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	must(t, os.WriteFile(filepath.Join(root, snapshot.IgnoreFile), []byte("build/\n"), 0o644))
	m := &fsModel{root: root, rng: rand.New(rand.NewPCG(seed, 17)), noSymlinks: true}
	for range 20 {
		m.step()
	}
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store})
	if err != nil {
		t.Fatal(err)
	}
	w := startInProcess(t, root, store)
	var hinted, full, restarts int
	var log []string
	restart := func(why string) {
		w.kill()
		w = startInProcess(t, root, store)
		restarts++
		log = append(log, "watcher restarted: "+why)
	}
	var raced bool
	assisted := func() *snapshot.CheckpointResult {
		t.Helper()
		cur, err := s.Current()
		if err != nil {
			t.Fatal(err)
		}
		hint, tok, why, err := Hint(store, root, cur)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CheckpointChanged(ctx, "", hint)
		if err != nil && raced {
			log = append(log, "the raced checkpoint failed: "+err.Error())
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			must(t, WritePosition(store, res.ID, tok))
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
		if w.stopped { // as a checkpoint starts a new watcher after one exits
			restart("it had refused")
		}
		for range 1 + m.rng.IntN(6) {
			log = append(log, m.step())
		}
		switch m.rng.IntN(8) {
		case 0: // changes while the checkpoint runs: the next one must see them
			stop, done := make(chan struct{}), make(chan struct{})
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
		case 1: // the watcher is ended midway and a new one starts
			w.kill()
			log = append(log, m.step())
			restart("ended")
		}
		a := assisted()
		if w.stopped {
			restart("it had refused")
		}
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
	t.Logf("seed %d: %d checkpoints used the watcher, %d walked, %d restarts", seed, hinted, full, restarts)
	if hinted < 10 { // under Wine every folder moved makes the watcher refuse: 15 to 20 of 30 used it

		t.Fatalf("only %d of %d checkpoints used the watcher: %s", hinted, hinted+full, strings.Join(log, "; "))
	}
}
