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
// was durable before the note was written (docs/promises.md). The hash chain hands over the
// same way what it derives from an entry whose line it made durable before the answer: the
// Merkle sidecar's fsync and the anchor (hashchain.Options.SyncLater).

// commitInterval bounds how long a written note waits for its fsync.
const commitInterval = 100 * time.Millisecond

// groupCommit runs the flushes handed to it within commitInterval of the first of them: for
// each key, only the newest one handed over (it covers the earlier ones).
type groupCommit struct {
	mu      sync.Mutex
	pending map[string]func() error
	timer   *time.Timer
	sync    func(path string) error // syncFile; tests count the calls
}

// later is snapshot.Options.SyncLater: path is synced within commitInterval.
func (g *groupCommit) later(path string) {
	g.laterFunc(path, func() error {
		sync := g.sync
		if sync == nil {
			sync = syncFile
		}
		return sync(path)
	})
}

// laterFunc is hashchain.Options.SyncLater: flush runs within commitInterval, unless a newer
// flush for key is handed over first, which runs instead.
func (g *groupCommit) laterFunc(key string, flush func() error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending == nil {
		g.pending = map[string]func() error{}
	}
	g.pending[key] = flush
	if g.timer == nil {
		g.timer = time.AfterFunc(commitInterval, g.flush)
	}
}

// flush runs every pending flush now; the server calls it before it exits.
func (g *groupCommit) flush() {
	g.mu.Lock()
	pending := g.pending
	g.pending = nil
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.mu.Unlock()
	for _, f := range pending {
		if err := f(); err != nil {
			fmt.Fprintf(os.Stderr, "agent-rewind hook-server: %v (what was written since the last sync may not survive a power cut)\n", err)
		}
	}
}

// syncFile fsyncs the file at path through a descriptor of its own: fsync makes the file's data
// durable whichever descriptor wrote it. It is opened for writing (nothing is written): Windows
// flushes only through a handle that may write.
func syncFile(path string) error {
	f, err := regular.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
