package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
