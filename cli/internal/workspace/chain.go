package workspace

import (
	"fmt"

	"github.com/agent-rewind/rewind/hashchain"
)

// ChainFile is the hash chain's file in the store (format: hashchain/FORMAT.md). Beside it the
// chain keeps chain.tree (its Merkle sidecar), chain.lock, and chain.torn-* after a recovery.
const ChainFile = "chain.jsonl"

// ChainPath returns the absolute path of the workspace's chain file.
func (w *Workspace) ChainPath() string { return w.Path(ChainFile) }

// ChainAnchor returns the file outside the store that keeps the chain's latest head:
// <state base>/anchors/<store id>/head. It follows the store, not the workspace's path: a
// workspace moved keeps its anchor, and a new folder at an old path gets a new one. (A legacy
// store not yet moved keeps its path-keyed anchor, hashchain.AnchorPath.)
func (w *Workspace) ChainAnchor() (string, error) {
	if w.anchor == "" {
		return "", fmt.Errorf("workspace %s: the store is not open (a bug: call Open or Init first)", w.Root)
	}
	return w.anchor, nil
}

// ChainOptions returns the options the workspace's chain is opened with.
func (w *Workspace) ChainOptions(create bool) (hashchain.Options, error) {
	anchor, err := w.ChainAnchor()
	if err != nil {
		return hashchain.Options{}, err
	}
	return hashchain.Options{Create: create, Anchor: anchor, SyncLater: w.ChainSyncLater}, nil
}

// Chain opens the workspace's hash chain, creating it on first use, anchored outside the
// workspace. Opening fails visibly on a torn tail (*hashchain.TornError) or a chain that no
// longer extends its anchored head (*hashchain.AnchorError): nothing is recorded then. The
// caller closes the chain.
func (w *Workspace) Chain() (*hashchain.Chain, error) {
	opts, err := w.ChainOptions(true)
	if err != nil {
		return nil, err
	}
	return hashchain.Open(w.ChainPath(), opts)
}

// ExistingChain is Chain for commands that only read: a workspace without a chain is an error.
func (w *Workspace) ExistingChain() (*hashchain.Chain, error) {
	opts, err := w.ChainOptions(false)
	if err != nil {
		return nil, err
	}
	return hashchain.Open(w.ChainPath(), opts)
}

// Recorder records on the workspace's chain for the leaf modules, which each define
//
//	type Recorder interface { Record(kind string, data any) (seq int64, err error) }
//
// and never import hashchain. data must marshal to a JSON object.
type Recorder struct {
	chain *hashchain.Chain
}

// NewRecorder returns a Recorder over an open chain (see Chain).
func NewRecorder(c *hashchain.Chain) Recorder { return Recorder{chain: c} }

// Record appends an entry and returns its seq once it is durable.
func (r Recorder) Record(kind string, data any) (int64, error) {
	e, err := r.chain.Append(kind, data)
	return e.Seq, err
}
