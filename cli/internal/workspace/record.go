package workspace

import (
	"fmt"

	"github.com/agent-rewind/rewind/hashchain"
)

// Record appends an entry to the workspace's hash chain and returns its seq once it is durable.
// The chain is opened (and created) by the first Record, not before, so a command that records
// nothing (a guard's non-effect path, a dry run, a read) never opens it. With Record, a
// *Workspace satisfies every leaf module's Recorder interface.
func (w *Workspace) Record(kind string, data any) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, err := w.writerLocked()
	if err != nil {
		return 0, fmt.Errorf("record %q on the hash chain: %w", kind, err)
	}
	e, err := c.Append(kind, data)
	return e.Seq, err
}

// writerLocked returns the chain, opening it on first use, after recording late what notes
// left by dead processes describe (intent.go): every entry is appended after those. w.mu is
// held.
func (w *Workspace) writerLocked() (*hashchain.Chain, error) {
	if w.chain == nil {
		c, err := w.Chain()
		if err != nil {
			return nil, err
		}
		w.chain = c
	}
	if err := w.recordLeftoversLocked(w.chain); err != nil {
		return nil, err
	}
	return w.chain, nil
}

// Close releases what the workspace opened (the chain, if Record opened it).
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chain == nil {
		return nil
	}
	err := w.chain.Close()
	w.chain = nil
	return err
}
