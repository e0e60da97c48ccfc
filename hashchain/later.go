package hashchain

import (
	"fmt"
	"os"

	"github.com/agent-rewind/rewind/internal/regular"
)

// With Options.SyncLater, an append's line is durable before Append returns, and what is
// derived from the chain (the sidecar's new stored hashes, the anchor) is made durable later,
// by a flush the caller runs within its bound (FORMAT.md §6.3). The rule that makes a power cut
// before the flush harmless: the anchor is written only after the sidecar was fsynced, so the
// anchored size is a watermark below which the sidecar is durable, and Open recomputes what lies
// above it from the chain's lines.

// deferring reports whether appends hand their sidecar and anchor over to Options.SyncLater.
func (c *Chain) deferring() bool { return c.opts.SyncLater != nil && c.opts.Anchor != "" }

// handOver gives SyncLater the flush that makes the sidecar durable and anchors h. It is
// called under the chain's lock, so the flushes of one chain are handed over in the order of
// their heads and the newest one covers the rest.
func (c *Chain) handOver(h Head) {
	l := laterAnchor{chain: c.path, anchor: c.opts.Anchor, head: h}
	c.opts.SyncLater(c.path, l.flush)
}

// laterAnchor is a deferred flush: it needs no open Chain (the caller may have closed it).
type laterAnchor struct {
	chain  string // the chain file
	anchor string // Options.Anchor
	head   Head   // the head as of the append that handed it over
}

// flush fsyncs the sidecar (through a descriptor of its own: fsync covers every writer's
// data), then, under the chain's lock, stores head in the anchor unless the anchor already
// holds a head at least as large: another process may have appended, and anchored, since.
func (l laterAnchor) flush() error {
	tf, err := regular.OpenFile(sidecarPath(l.chain), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync chain sidecar: %w", err)
	}
	err = tf.Sync()
	tf.Close()
	if err != nil {
		return fmt.Errorf("sync chain sidecar %s: %w (the anchor was not advanced; the next open recomputes the sidecar from the chain)", sidecarPath(l.chain), err)
	}
	lockf, err := regular.OpenFile(lockPath(l.chain), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open chain lock: %w", err)
	}
	defer lockf.Close()
	if err := flock(lockf); err != nil {
		return fmt.Errorf("lock chain %s: %w", lockPath(l.chain), err)
	}
	defer funlock(lockf)
	ah, ok, err := readAnchor(l.anchor)
	if err != nil {
		return err
	}
	if ok && ah.Size >= l.head.Size {
		return nil
	}
	return writeAnchor(l.anchor, l.head)
}
