package workspace

import (
	"fmt"
)

// Record appends an entry to the workspace's hash chain and returns its seq once it is durable.
// The chain is opened (and created) by the first Record, not before, so a command that records
// nothing (a guard's non-effect path, a dry run, a read) never opens it. With Record, a
// *Workspace satisfies every leaf module's Recorder interface.
func (w *Workspace) Record(kind string, data any) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chain == nil {
		c, err := w.Chain()
		if err != nil {
			return 0, fmt.Errorf("record %q on the hash chain: %w", kind, err)
		}
		w.chain = c
	}
	e, err := w.chain.Append(kind, data)
	return e.Seq, err
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
