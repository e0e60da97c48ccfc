package hashchain

import (
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// ErrProof matches (errors.Is) a proof that does not check.
var ErrProof = errors.New("proof does not check")

// ProveInclusion returns the RFC 6962 inclusion proof (audit path) that entry seq is in the
// tree of the chain's first size entries (the head HeadAt(size)). O(log n).
func (c *Chain) ProveInclusion(seq, size int64) (tlog.RecordProof, error) {
	var p tlog.RecordProof
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		if size < 1 || size > c.n || seq < 0 || seq >= size {
			return fmt.Errorf("no inclusion proof of entry %d in a tree of size %d: the chain has %d entries, and the entry must be below the size", seq, size, c.n)
		}
		// A proof is checked before it is handed out: damage inside the sidecar (which open
		// does not look for: that costs O(n)) gets it rebuilt from the chain.
		for attempt := 0; ; attempt++ {
			head, err := c.treeHead(size)
			if err != nil {
				return err
			}
			leaf, err := c.tree.leafHashAt(seq)
			if err != nil {
				return err
			}
			p, err = tlog.ProveRecord(size, seq, &c.tree)
			if err == nil {
				err = tlog.CheckRecord(p, size, head.Root, seq, leaf)
			}
			if err == nil || attempt > 0 {
				return err
			}
			if err := c.rebuildTree(); err != nil {
				return err
			}
		}
	})
	return p, err
}

// CheckInclusion checks that proof shows the entry seq with hash entryHash (hex, as in
// Entry.Hash) to be in the tree of head.
func CheckInclusion(proof tlog.RecordProof, head Head, seq int64, entryHash string) error {
	var h [32]byte
	if !decodeHex32(&h, entryHash) {
		return fmt.Errorf("%w: entry hash %q is not 64 lowercase hex digits", ErrProof, entryHash)
	}
	if seq < 0 || seq >= head.Size {
		return fmt.Errorf("%w: entry %d is not below the head's size %d", ErrProof, seq, head.Size)
	}
	if err := tlog.CheckRecord(proof, head.Size, head.Root, seq, leafHash(h)); err != nil {
		return fmt.Errorf("%w: entry %d is not in the tree of size %d with root %s: %v", ErrProof, seq, head.Size, b64(head.Root), err)
	}
	return nil
}

// ProveConsistency returns the RFC 6962 consistency proof that the tree of the first newSize
// entries extends the tree of the first oldSize. O(log n). For oldSize 0 or oldSize == newSize
// the proof is empty.
func (c *Chain) ProveConsistency(oldSize, newSize int64) (tlog.TreeProof, error) {
	var p tlog.TreeProof
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		if oldSize < 0 || oldSize > newSize || newSize > c.n {
			return fmt.Errorf("no consistency proof from size %d to %d: want 0 <= old <= new <= %d (the chain's size)", oldSize, newSize, c.n)
		}
		if oldSize == 0 {
			p = tlog.TreeProof{}
			return nil
		}
		for attempt := 0; ; attempt++ {
			oldHead, err := c.treeHead(oldSize)
			if err != nil {
				return err
			}
			newHead, err := c.treeHead(newSize)
			if err != nil {
				return err
			}
			p, err = tlog.ProveTree(newSize, oldSize, &c.tree)
			if err == nil {
				err = tlog.CheckTree(p, newSize, newHead.Root, oldSize, oldHead.Root)
			}
			if err == nil || attempt > 0 {
				return err
			}
			if err := c.rebuildTree(); err != nil {
				return err
			}
		}
	})
	return p, err
}

// CheckConsistency checks that proof shows the tree of newHead to extend the tree of oldHead.
func CheckConsistency(proof tlog.TreeProof, oldHead, newHead Head) error {
	switch {
	case oldHead.Size < 0 || oldHead.Size > newHead.Size:
		return fmt.Errorf("%w: the old head's size %d is above the new head's %d", ErrProof, oldHead.Size, newHead.Size)
	case oldHead.Size == 0:
		if oldHead.Root != emptyRoot || len(proof) != 0 {
			return fmt.Errorf("%w: a size-0 head has the empty tree's root and an empty proof", ErrProof)
		}
		return nil
	}
	if err := tlog.CheckTree(proof, newHead.Size, newHead.Root, oldHead.Size, oldHead.Root); err != nil {
		return fmt.Errorf("%w: the tree of size %d (root %s) does not extend the tree of size %d (root %s): %v", ErrProof, newHead.Size, b64(newHead.Root), oldHead.Size, b64(oldHead.Root), err)
	}
	return nil
}
