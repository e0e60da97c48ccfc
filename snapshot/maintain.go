package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
)

// Maintenance keeps a store that hooks write to before every tool call from growing without
// bound, off the hook's path, as git's "gc --auto" does (FORMAT.md, "Maintenance"): it merges
// small packs once there are more than upkeep.AutoPackLimit (every checkpoint that stores something
// adds one, and every later lookup reads every index), and applies the retention of automatic
// checkpoints once a day. It never makes a writer wait: it takes the lock only when free, and
// holds it for one bounded batch at a time.

// AutoRetention is the retention of automatic checkpoints that maintenance applies, and gc's
// default: the newest 100 of each agent session, and every one younger than a week.
var AutoRetention = GCOptions{AutoKeepLast: 100, AutoKeepWithin: 7 * 24 * time.Hour}

const (
	// batchGap is how long maintenance leaves the lock free between two batches: longer than
	// the 20 ms an automatic checkpoint polls it at, so a waiting one takes it.
	batchGap = 50 * time.Millisecond
	// lockWait is how long maintenance polls a held lock (every lockPoll, never waiting in
	// flock, so a checkpoint that comes meanwhile takes it first) before it gives up: an agent's
	// hooks hold it a few milliseconds per call.
	lockWait = 2 * time.Second
	lockPoll = 10 * time.Millisecond
)

// batchPacks bounds how many packs one batch merges (a variable for tests). With
// upkeep.MergeBelow it bounds what one hold of the lock copies: at most 64 packs and 16 MiB, or
// two packs.
var batchPacks = 64

// Due says what maintenance has to do.
type Due = upkeep.Due

// MaintainResult reports what Maintain did.
type MaintainResult struct {
	Due         Due       `json:"due"`         // what was due (the retention also when never applied)
	PacksMerged int       `json:"packsMerged"` // small packs rewritten as fewer
	Batches     int       `json:"batches"`     // holds of the lock that merged packs
	Retention   *GCResult `json:"retention"`   // what applying the retention removed; null when not applied
	// MaxHold is the longest the store's lock was held at once.
	MaxHold Duration `json:"maxHoldMs"`
	// Skipped says why Maintain stopped before it was done ("" when it was): the store's lock
	// was held (by a checkpoint, a rewind), or another maintenance runs. What it did is kept; the
	// next maintenance goes on from there.
	Skipped string `json:"skipped,omitempty"`
	// MaxHoldExact is MaxHold unrounded, for measurements.
	MaxHoldExact time.Duration `json:"-"`
}

// held records that the lock was held for d.
func (r *MaintainResult) held(d time.Duration) {
	r.MaxHoldExact = max(r.MaxHoldExact, d)
	r.MaxHold = Duration(r.MaxHoldExact)
}

// busy reports whether err says the store's lock stayed held (and then notes it in Skipped).
func (r *MaintainResult) busy(err error) bool {
	if errors.Is(err, platform.ErrBusy) {
		r.Skipped = "the store's lock was held for 2 s (a checkpoint, rewind or gc): maintenance gave way and goes on next time"
		return true
	}
	return false
}

// MaintenanceDue says whether maintenance has work, cheaply enough for after every checkpoint:
// it reads the packs folder (and the packs' sizes only when there are more than 32) and the
// small maintenance file, takes no lock and reads no pack. retention: whether the retention
// of automatic checkpoints is applied (REWIND_AUTO_RETENTION). A store never maintained is not
// due for the retention alone: it cannot remove anything before a session has more than its
// 100 automatic checkpoints, each of which added a pack; its first maintenance applies it.
func (s *Store) MaintenanceDue(retention bool) (Due, error) {
	return upkeep.DueOf(s.objects, s.state, retention)
}

// MaintenanceRunning reports whether a maintenance of this store is running (in any process).
func (s *Store) MaintenanceRunning() bool {
	unlock, err := platform.TryLock(filepath.Join(s.state, upkeep.LockFile))
	if err != nil {
		return errors.Is(err, platform.ErrBusy)
	}
	unlock()
	return false
}

// MaintainOptions configures Maintain.
type MaintainOptions struct {
	// Retention is the retention of automatic checkpoints to apply when due (AutoRetention);
	// nil applies none.
	Retention *GCOptions
}

// Maintain does what MaintenanceDue says is due: it merges the small packs, in batches of at
// most batchPacks packs and 16 MiB (or two packs), until one is left, keeping every object (no
// checkpoint is read); then, if due or never applied, it applies the retention as GC does (the same checkpoints
// kept: manual ones, the current position, the safety checkpoints; the removal recorded on the
// chain first), when it would remove something. Each batch and the retention take the store's
// lock only when they find it free (tried every 10 ms, never waited for in flock), and release
// it at once; between batches the lock stays free for batchGap. A lock held for 2 s ends
// Maintain early (Skipped).
func (s *Store) Maintain(ctx context.Context, opts MaintainOptions) (*MaintainResult, error) {
	res := &MaintainResult{}
	unlockM, err := platform.TryLock(filepath.Join(s.state, upkeep.LockFile))
	if errors.Is(err, platform.ErrBusy) {
		res.Skipped = "another maintenance of this store is running"
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	defer unlockM()
	if res.Due, err = s.MaintenanceDue(opts.Retention != nil); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	if done, err := s.mergeSmallPacks(ctx, res); done || err != nil {
		return res, err
	}
	if opts.Retention == nil {
		return res, nil
	}
	return res, s.applyRetention(ctx, *opts.Retention, res)
}

// mergeSmallPacks merges the small packs batch by batch while they are due, leaving the lock
// free for batchGap between batches. done: Maintain stops here (the lock stayed held).
func (s *Store) mergeSmallPacks(ctx context.Context, res *MaintainResult) (done bool, err error) {
	for res.Due.SmallPacks > 0 {
		n, d, err := s.mergeBatch(ctx)
		if res.busy(err) {
			return true, nil
		}
		if err != nil {
			return true, fmt.Errorf("maintenance: %w", err)
		}
		res.held(d)
		if n == 0 {
			break
		}
		res.PacksMerged += n
		res.Batches++
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(batchGap):
		}
	}
	return false, nil
}

// applyRetention applies the retention rules if due or never applied, taking the lock only
// when they would remove something, and records in the maintenance file that it did.
func (s *Store) applyRetention(ctx context.Context, rules GCOptions, res *MaintainResult) error {
	if !res.Due.Retention {
		st, err := upkeep.ReadState(s.state)
		if err != nil || !st.Retention.IsZero() {
			return err // applied within the day
		}
		res.Due.Retention = true // never applied (a new store, or one of before 2026-12): now
	}
	// Whether the rules remove anything is decided first without the lock (the checkpoint
	// files and the position are replaced atomically): most days nothing, and then the
	// checkpoints' trees are not read.
	cps, err := s.listCheckpoints()
	if err != nil {
		return fmt.Errorf("maintenance: %w", err)
	}
	pos, err := s.readPosition()
	if err != nil {
		return fmt.Errorf("maintenance: %w", err)
	}
	var plan GCResult
	retained(cps, pos, rules, time.Now(), &plan)
	if len(plan.Removed) > 0 {
		unlock, err := s.lockAndRecoverWith(ctx, s.pollLock(ctx))
		if res.busy(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("maintenance: %w", err)
		}
		start := time.Now()
		res.Retention, err = s.gcLocked(ctx, rules)
		unlock()
		res.held(time.Since(start))
		if err != nil {
			return fmt.Errorf("maintenance: apply the retention of automatic checkpoints: %w", err)
		}
	}
	if err := upkeep.WriteState(s.state, time.Now()); err != nil {
		return fmt.Errorf("maintenance: %w", err)
	}
	return nil
}

// tryLock takes the writers' lock if it is free (platform.ErrBusy otherwise); Options.Lock, when set,
// is called instead.
func (s *Store) tryLock() (func() error, error) {
	if s.opts.Lock != nil {
		return s.opts.Lock()
	}
	return platform.TryLock(filepath.Join(s.state, "lock"))
}

// pollLock takes the writers' lock by trying it every lockPoll for at most lockWait (platform.ErrBusy
// then).
func (s *Store) pollLock(ctx context.Context) func() (func() error, error) {
	return func() (func() error, error) {
		deadline := time.Now().Add(lockWait)
		for {
			unlock, err := s.tryLock()
			if !errors.Is(err, platform.ErrBusy) || time.Now().After(deadline) {
				return unlock, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(lockPoll):
			}
		}
	}
}

// mergeBatch merges the smallest small packs (upkeep.MergeBatch), under the lock if it is
// free. It returns how many it merged (0: fewer than two small packs) and how long it held the
// lock.
func (s *Store) mergeBatch(ctx context.Context) (merged int, held time.Duration, err error) {
	unlock, err := s.lockAndRecoverWith(ctx, s.pollLock(ctx))
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	defer func() {
		unlock()
		held = time.Since(start)
	}()
	batch, err := upkeep.MergeBatch(s.objects, batchPacks)
	if err != nil || batch == nil {
		return 0, 0, err
	}
	if inBatch != nil {
		inBatch()
	}
	if err := upkeep.Repack(s.objects, batch); err != nil {
		return 0, 0, fmt.Errorf("merge %d small packs: %w", len(batch), err)
	}
	return len(batch), 0, nil
}

// inBatch, set by tests only, runs in every batch while the lock is held.
var inBatch func()
