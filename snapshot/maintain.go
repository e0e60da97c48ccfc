package snapshot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Maintenance keeps a store that hooks write to before every tool call from growing without
// bound, off the hook's path, as git's "gc --auto" does (FORMAT.md, "Maintenance"): it merges
// small packs once there are more than autoPackLimit (every checkpoint that stores something
// adds one, and every later lookup reads every index), and applies the retention of automatic
// checkpoints once a day. It never makes a writer wait: it takes the lock only when free, and
// holds it for one bounded batch at a time.

// AutoRetention is the retention of automatic checkpoints that maintenance applies, and gc's
// default: the newest 100 of each agent session, and every one younger than a week.
var AutoRetention = GCOptions{AutoKeepLast: 100, AutoKeepWithin: 7 * 24 * time.Hour}

const (
	// autoPackLimit is how many small packs (mergeBelow) make maintenance due (git's
	// gc.autoPackLimit is 50): each costs every later lookup a few microseconds.
	autoPackLimit = 32
	// retentionEvery is how often maintenance applies the retention.
	retentionEvery = 24 * time.Hour
	// batchGap is how long maintenance leaves the lock free between two batches: longer than
	// the 20 ms an automatic checkpoint polls it at, so a waiting one takes it.
	batchGap = 50 * time.Millisecond
	// lockWait is how long maintenance polls a held lock (every lockPoll, never waiting in
	// flock, so a checkpoint that comes meanwhile takes it first) before it gives up: an agent's
	// hooks hold it a few milliseconds per call.
	lockWait = 2 * time.Second
	lockPoll = 10 * time.Millisecond
	// maintenanceFile records when the retention was last applied; maintenanceLock keeps two
	// maintenances of a store from running at once.
	maintenanceFile = "maintenance"
	maintenanceLock = "maintenance.lock"
)

// batchPacks bounds how many packs one batch merges (a variable for tests). With mergeBelow it
// bounds what one hold of the lock copies: at most 64 packs and 16 MiB, or two packs.
var batchPacks = 64

// Due says what maintenance has to do.
type Due struct {
	SmallPacks int  `json:"smallPacks"` // packs under 16 MiB when more than 32 (else 0)
	Retention  bool `json:"retention"`  // the retention was last applied more than a day ago
}

// Any reports whether anything is due.
func (d Due) Any() bool { return d.SmallPacks > 0 || d.Retention }

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

// maintenanceState is the content of the maintenance file.
type maintenanceState struct {
	Retention time.Time `json:"retention"` // when the retention was last applied
}

// MaintenanceDue says whether maintenance has work, cheaply enough for after every checkpoint:
// it reads the packs folder (and the packs' sizes only when there are more than 32) and the
// small maintenance file, takes no lock and reads no pack. retention: whether the retention
// of automatic checkpoints is applied (REWIND_AUTO_RETENTION). A store never maintained is not
// due for the retention alone: it cannot remove anything before a session has more than its
// 100 automatic checkpoints, each of which added a pack; its first maintenance applies it.
func (s *Store) MaintenanceDue(retention bool) (Due, error) {
	var d Due
	n, err := s.packCount()
	if err != nil {
		return d, err
	}
	if n > autoPackLimit {
		small, err := s.smallPacks()
		if err != nil {
			return d, err
		}
		if len(small) > autoPackLimit {
			d.SmallPacks = len(small)
		}
	}
	if retention {
		st, err := s.readMaintenance()
		if err != nil {
			return d, err
		}
		d.Retention = !st.Retention.IsZero() && time.Since(st.Retention) >= retentionEvery
	}
	return d, nil
}

// packCount counts the packs: those this Store's last writer loaded (under the lock) and wrote,
// when it looked any object up (the hook's checkpoint: this spares it reading the folder, 34 to
// 3 µs), else those the packs folder lists.
func (s *Store) packCount() (int, error) {
	if n, loaded := s.objects.LoadedPacks(); loaded {
		return n, nil
	}
	names, err := platform.ReadDirNames(s.objects.PackDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".idx") && !strings.HasPrefix(name, ".") {
			n++
		}
	}
	return n, nil
}

// MaintenanceRunning reports whether a maintenance of this store is running (in any process).
func (s *Store) MaintenanceRunning() bool {
	unlock, err := platform.TryLock(filepath.Join(s.state, maintenanceLock))
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
	unlockM, err := platform.TryLock(filepath.Join(s.state, maintenanceLock))
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
	held := func(d time.Duration) {
		res.MaxHoldExact = max(res.MaxHoldExact, d)
		res.MaxHold = Duration(res.MaxHoldExact)
	}
	busy := func(err error) bool {
		if errors.Is(err, platform.ErrBusy) {
			res.Skipped = "the store's lock was held for 2 s (a checkpoint, rewind or gc): maintenance gave way and goes on next time"
			return true
		}
		return false
	}
	for res.Due.SmallPacks > 0 {
		n, d, err := s.mergeBatch(ctx)
		if busy(err) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("maintenance: %w", err)
		}
		held(d)
		if n == 0 {
			break
		}
		res.PacksMerged += n
		res.Batches++
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(batchGap):
		}
	}
	if opts.Retention == nil {
		return res, nil
	}
	if !res.Due.Retention {
		st, err := s.readMaintenance()
		if err != nil || !st.Retention.IsZero() {
			return res, err // applied within the day
		}
		res.Due.Retention = true // never applied (a new store, or one of before 2026-12): now
	}
	// Whether the rules remove anything is decided first without the lock (the checkpoint
	// files and the position are replaced atomically): most days nothing, and then the
	// checkpoints' trees are not read.
	cps, err := s.listCheckpoints()
	if err != nil {
		return res, fmt.Errorf("maintenance: %w", err)
	}
	pos, err := s.readPosition()
	if err != nil {
		return res, fmt.Errorf("maintenance: %w", err)
	}
	var plan GCResult
	retained(cps, pos, *opts.Retention, time.Now(), &plan)
	if len(plan.Removed) > 0 {
		unlock, err := s.lockAndRecoverWith(ctx, s.pollLock(ctx))
		if busy(err) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("maintenance: %w", err)
		}
		start := time.Now()
		res.Retention, err = s.gcLocked(ctx, *opts.Retention)
		unlock()
		held(time.Since(start))
		if err != nil {
			return res, fmt.Errorf("maintenance: apply the retention of automatic checkpoints: %w", err)
		}
	}
	b, _ := json.Marshal(maintenanceState{Retention: time.Now().UTC()})
	if err := durable.WriteFile(filepath.Join(s.state, maintenanceFile), b, 0o600); err != nil {
		return res, fmt.Errorf("maintenance: %w", err)
	}
	return res, nil
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

// mergeBatch merges the smallest small packs, under the lock if it is free: as many as
// batchPacks and 16 MiB allow, and at least two. It returns how many it merged (0: fewer than
// two small packs) and how long it held the lock.
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
	small, err := s.smallPacks()
	if err != nil {
		return 0, 0, err
	}
	var batch []packSource
	var size int64
	for _, p := range small {
		if len(batch) >= batchPacks || (len(batch) >= 2 && size+p.size > mergeBelow) {
			break
		}
		entries, err := s.objects.ReadPackIdx(p.id)
		if err != nil {
			return 0, 0, err
		}
		batch = append(batch, packSource{base: filepath.Join(s.objects.PackDir, p.id), live: entries})
		size += p.size
	}
	if len(batch) < 2 {
		return 0, 0, nil
	}
	if inBatch != nil {
		inBatch()
	}
	if err := s.repack(batch); err != nil {
		return 0, 0, fmt.Errorf("merge %d small packs: %w", len(batch), err)
	}
	return len(batch), 0, nil
}

// inBatch, set by tests only, runs in every batch while the lock is held.
var inBatch func()

// packFile is a pack, by id, and its size.
type packFile struct {
	id   string
	size int64
}

// smallPacks lists the packs smaller than mergeBelow, smallest first (by their files' sizes:
// no index is read).
func (s *Store) smallPacks() ([]packFile, error) {
	ids, err := s.objects.PackIDs()
	if err != nil {
		return nil, err
	}
	var out []packFile
	for _, id := range ids {
		fi, err := os.Lstat(filepath.Join(s.objects.PackDir, id+".pack"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing (by a gc), or damaged: check and gc say which
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() && fi.Size() < mergeBelow {
			out = append(out, packFile{id, fi.Size()})
		}
	}
	slices.SortFunc(out, func(a, b packFile) int { return cmp.Compare(a.size, b.size) })
	return out, nil
}

// readMaintenance reads the maintenance file; a store that has none never had the retention
// applied.
func (s *Store) readMaintenance() (maintenanceState, error) {
	var st maintenanceState
	name := filepath.Join(s.state, maintenanceFile)
	b, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, &CorruptError{Path: name, Reason: fmt.Sprintf("does not parse (%v): remove it, and the next maintenance applies the retention and writes it again", err)}
	}
	return st, nil
}
