package objects

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agent-rewind/rewind/internal/durable"
)

// Logged is a batch finished for the commit log (FORMAT.md, "Commit log"): its pack written in
// full but not synced, and its index not named, so that none of its objects exists yet. The
// caller puts Pack and Idx in its log record, syncs the log, then calls Publish.
type Logged struct {
	ID        string // the pack's id, "" when the batch was empty
	Pack, Idx []byte // the pack file's and the index file's contents
	s         *Stager
	p         *PackWriter
}

// PackName and IdxName are the files' names relative to the state directory.
func (l *Logged) PackName() string { return "packs/" + l.ID + ".pack" }
func (l *Logged) IdxName() string  { return "packs/" + l.ID + ".idx" }

// CommitLogged finishes the batch for the commit log when it is all in one pack of at most max
// bytes (ok false otherwise, with nothing done: use Commit). Until Publish or Discard the pack is
// a leftover that the next writer's CleanPacks flushes and indexes, or removes.
func (s *Stager) CommitLogged(max int64) (l *Logged, ok bool, err error) {
	if len(s.pending) > 0 || len(s.lists) > 0 {
		return nil, false, nil
	}
	if s.Pack == nil {
		return &Logged{s: s}, true, nil
	}
	p := s.Pack
	if p.off > max {
		return nil, false, nil
	}
	slices.SortFunc(p.Entries, func(a, b PackEntry) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	idx := encodePackIdx(p.Entries)
	if _, err := p.f.Write(appendPackTrailer(nil, idx)); err != nil {
		s.Discard()
		return nil, false, err
	}
	if err := p.f.Close(); err != nil {
		s.Discard()
		return nil, false, err
	}
	b, err := os.ReadFile(p.f.Name()) // just written: the page cache has it
	if err != nil {
		s.Discard()
		return nil, false, fmt.Errorf("read back pack %s: %w", p.id, err)
	}
	return &Logged{ID: p.id, Pack: b, Idx: idx, s: s, p: p}, true, nil
}

// Publish names the pack's index, without a sync (the log made it durable): its objects exist.
func (l *Logged) Publish() error {
	if l.p == nil {
		return nil
	}
	o := l.s.o
	if err := durable.WriteFileUnsyncedIn(o.packDir, filepath.Join(o.packDir, l.ID+".idx"), l.Idx, 0o600); err != nil {
		return err
	}
	o.addPacked(l.p)
	l.s.Pack = nil
	clear(l.s.inPack)
	return nil
}
