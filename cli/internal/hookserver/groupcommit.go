package hookserver

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/internal/regular"
)

// The note of a served call in calls.jsonl is written before the answer and made durable after
// it, together with the notes of the calls that follow within commitInterval: a group commit,
// as PostgreSQL's synchronous_commit = off. A killed server loses nothing (the kernel has the
// lines); a power cut loses at most the notes of the last interval. The checkpoint a note names
// was durable before the note was written (docs/promises.md).

// commitInterval bounds how long a written note waits for its fsync.
const commitInterval = 100 * time.Millisecond

// groupCommit syncs the files handed to it within commitInterval of the first of them.
type groupCommit struct {
	mu      sync.Mutex
	pending map[string]bool
	timer   *time.Timer
	sync    func(path string) error // syncFile; tests count the calls
}

// later is snapshot.Options.SyncLater: path is synced within commitInterval.
func (g *groupCommit) later(path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		g.pending = map[string]bool{}
	}
	g.pending[path] = true
	if g.timer == nil {
		g.timer = time.AfterFunc(commitInterval, g.flush)
	}
}

// flush syncs every pending file now; the server calls it before it exits.
func (g *groupCommit) flush() {
	g.mu.Lock()
	paths := g.pending
	g.pending = nil
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.mu.Unlock()
	sync := g.sync
	if sync == nil {
		sync = syncFile
	}
	for p := range paths {
		if err := sync(p); err != nil {
			fmt.Fprintf(os.Stderr, "agent-rewind hook-server: %v (the notes written to it since the last sync may not survive a power cut)\n", err)
		}
	}
}

// syncFile fsyncs the file at path through a descriptor of its own: fsync makes the file's data
// durable whichever descriptor wrote it.
func syncFile(path string) error {
	f, err := regular.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
