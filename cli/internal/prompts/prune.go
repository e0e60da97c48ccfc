package prompts

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/snapshot"
)

// LockFile is the prompt log's lock beside it in the store: appends share it, Prune holds it
// alone, so that no prompt appended while the log is rewritten is lost.
const LockFile = "prompts.lock"

func lockPath(log string) string { return filepath.Join(filepath.Dir(log), LockFile) }

// Lister lists a store's timeline (a *snapshot.Store).
type Lister interface {
	List() (*snapshot.Timeline, error)
}

// PruneStore prunes the log at path against what store holds now (see Prune); keepWithin 0 is
// the automatic checkpoints' default retention (7 days).
func PruneStore(path string, store Lister, keepWithin time.Duration) (removed int, err error) {
	tl, err := store.List()
	if err != nil {
		return 0, err
	}
	if keepWithin <= 0 {
		keepWithin = snapshot.AutoRetention.AutoKeepWithin
	}
	return Prune(path, tl.Sessions, keepWithin, time.Now())
}

// Prune removes from the log at path the prompts whose automatic checkpoints are all gone
// (gc removed them): in a session with calls left (sessions: what the store holds now), a
// prompt with none of its own older than the session's oldest call left; in a session with
// none left, a prompt older than keepWithin. A prompt with no call after the session's oldest
// kept one stays (it shows a prompt that changed nothing). The log is rewritten durably, each
// kept line with its number, so prompt:N names the same prompt after; nothing is written
// when nothing goes.
func Prune(path string, sessions []snapshot.Session, keepWithin time.Duration, now time.Time) (removed int, err error) {
	lock, err := lockfile.Open(lockPath(path), lockfile.Exclusive)
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	ps, err := Read(path)
	if err != nil || len(ps) == 0 {
		return 0, err
	}
	drop := dropped(ps, sessions, keepWithin, now)
	if len(drop) == 0 {
		return 0, nil
	}
	var buf bytes.Buffer
	for _, p := range ps {
		if drop[p.N] {
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			return 0, err
		}
		buf.Write(append(b, '\n'))
	}
	if err := durable.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return 0, err
	}
	return len(drop), nil
}

// WouldPrune counts what Prune would remove from the log at path if the store held only
// sessions (gc --dry-run: the sessions less the calls whose checkpoints it would remove); it
// writes nothing.
func WouldPrune(path string, sessions []snapshot.Session, keepWithin time.Duration, now time.Time) (int, error) {
	ps, err := Read(path)
	if keepWithin <= 0 {
		keepWithin = snapshot.AutoRetention.AutoKeepWithin
	}
	return len(dropped(ps, sessions, keepWithin, now)), err
}

// dropped returns the numbers of the prompts of ps that Prune removes.
func dropped(ps []Prompt, sessions []snapshot.Session, keepWithin time.Duration, now time.Time) map[int]bool {
	drop := map[int]bool{} // by N
	for _, sg := range GroupCalls(ps, sessions) {
		var oldest time.Time
		for _, g := range sg.Groups {
			for _, c := range g.Calls {
				if oldest.IsZero() || c.Time.Before(oldest) {
					oldest = c.Time
				}
			}
		}
		for _, g := range sg.Groups {
			if g.Prompt == nil || len(g.Calls) > 0 {
				continue
			}
			if !oldest.IsZero() && g.Prompt.Time.Before(oldest) || oldest.IsZero() && now.Sub(g.Prompt.Time) > keepWithin {
				drop[g.N] = true
			}
		}
	}
	return drop
}
