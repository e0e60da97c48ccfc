package snapshot

import (
	"context"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

// Unchanged reports whether the workspace equals checkpoint id and id is the current position,
// as the next checkpoint would find it (through the stat cache: a stat walk that reads only the
// files whose stat changed), writing nothing. Under the writers' lock, so that no checkpoint or
// rewind moves the position meanwhile. A change watcher started after the position was taken
// can then vouch for it (cli/internal/watch.Adopt): its token, read before this walk, is
// recorded against id.
func (s *Store) Unchanged(ctx context.Context, id string) (bool, error) {
	unlock, err := s.lockRecovered(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	pos, err := s.readPosition()
	if err != nil || pos.Current != id || id == "" {
		return false, err
	}
	cur, err := s.readCheckpoint(id)
	if err != nil {
		return false, err
	}
	c, err := s.captureLive(ctx, false)
	if err != nil {
		return false, err
	}
	live := c.scan.Entries
	tr := manifest.EncodeTrees(len(live), func(i int) *Entry { return &live[i].Entry }, c.reusableTrees())
	return tr.Hash == cur.Manifest, nil
}
