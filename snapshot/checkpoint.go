package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// CheckpointResult is what Checkpoint returns: the new checkpoint and what it took.
type CheckpointResult struct {
	Checkpoint
	// Reused is set on a safety checkpoint that was not written because the workspace still
	// equalled the current position: Checkpoint then is that position.
	Reused        bool      `json:"reused,omitempty"`
	NewObjects    int       `json:"newObjects"`         // contents stored for the first time
	NewBytes      int64     `json:"newBytes"`           // their bytes
	Hashed        int       `json:"hashed"`             // files read (the stat cache could not vouch for them)
	Skipped       []Skipped `json:"skipped,omitempty"`  // present but not captured
	Excluded      []string  `json:"excluded,omitempty"` // excluded paths, sorted, at most 100
	ExcludedCount int       `json:"excludedCount"`      // all excluded paths (a directory counts once)
	Warnings      []string  `json:"warnings,omitempty"` // things that cost time but not data
	ChainSeq      int64     `json:"chainSeq,omitempty"` // the chain entry's sequence number
	Elapsed       Duration  `json:"elapsedMs"`          // wall time of the whole operation
}

// Skipped is a path a checkpoint saw but did not capture, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // "socket", "fifo", "device", "changed while being read", …
}

// Duration marshals to JSON as integer milliseconds.
type Duration time.Duration

// MarshalJSON encodes d as milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%d", time.Duration(d).Milliseconds()), nil
}

// CheckpointRecord is the data of a "checkpoint" chain entry.
type CheckpointRecord struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"`
	Kind     Kind      `json:"kind"`
	Time     time.Time `json:"time"`
	Parent   string    `json:"parent"`
	Manifest string    `json:"manifest"` // sha256 of the manifest file's bytes
	Files    int       `json:"files"`
	Dirs     int       `json:"dirs"`
	Symlinks int       `json:"symlinks"`
	Skipped  int       `json:"skipped"`
	Bytes    int64     `json:"bytes"`
}

// Checkpoint captures the whole workspace (FORMAT.md) under label. Files whose stat matches the
// stat cache are not read; the others are hashed in parallel and their new contents stored. The
// checkpoint becomes the current position, then is recorded. If recording fails the checkpoint
// still exists and the error wraps ErrNotRecorded, with the result returned too.
func (s *Store) Checkpoint(ctx context.Context, label string) (*CheckpointResult, error) {
	start := time.Now()
	unlock, err := s.lockAndRecover(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, _, err := s.checkpointLocked(ctx, label, KindNormal, false)
	if res != nil {
		res.Elapsed = Duration(time.Since(start))
	}
	return res, err
}

// capture is the live workspace as one checkpoint would record it.
type capture struct {
	scan       *scan
	hashed     int
	warnings   []string
	stager     *stager // nil when hashing only
	indexDirty bool
}

// entries returns the manifest entries.
func (c *capture) manifest() []Entry {
	out := make([]Entry, len(c.scan.entries))
	for i := range c.scan.entries {
		out[i] = c.scan.entries[i].Entry
	}
	return out
}

// captureLive walks the workspace and fills in every file's hash, from the stat cache when it can
// vouch for the file, by reading it otherwise. With store set, new contents are staged for the
// object store; without, files are only hashed (Diff, dry runs).
func (s *Store) captureLive(ctx context.Context, store bool) (*capture, error) {
	ign, err := s.loadIgnore()
	if err != nil {
		return nil, err
	}
	return s.captureLiveRules(ctx, store, ign)
}

// captureLiveRules is captureLive with the exclusion rules given.
func (s *Store) captureLiveRules(ctx context.Context, store bool, ign matcher) (*capture, error) {
	var seen atomic.Int64
	stop := s.progress("scan", func() Progress { return Progress{Done: seen.Load()} })
	sc, err := walk(ctx, s.root, s.stateRel, ign, s.opts.Parallelism, &seen)
	stop()
	if err != nil {
		return nil, err
	}
	c := &capture{scan: sc}
	idx, warn, err := loadIndex(filepath.Join(s.state, "index"))
	if err != nil {
		return nil, err
	}
	if warn != "" {
		c.warnings = append(c.warnings, warn)
	}
	// Both lists are sorted by path: one merge pass pairs each file with its cache entry.
	var todo []int
	files, j := 0, 0
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.Type != TypeFile {
			continue
		}
		files++
		for j < len(idx.entries) && idx.entries[j].Path < e.Path {
			j++
		}
		var ie *indexEntry
		if j < len(idx.entries) && idx.entries[j].Path == e.Path {
			ie = &idx.entries[j]
		}
		if idx.clean(ie, e.St) {
			e.Blob = ie.Blob
		} else {
			todo = append(todo, i)
		}
	}
	c.indexDirty = len(todo) > 0 || files != len(idx.entries)
	if store {
		c.stager = newStager(s.objects, len(todo) > fewFiles)
	}
	c.hashed = len(todo)
	if len(todo) == 0 {
		return c, nil
	}
	var done, bytes atomic.Int64
	stop = s.progress("hash", func() Progress {
		return Progress{Done: done.Load(), Total: int64(len(todo)), Bytes: bytes.Load()}
	})
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Parallelism)
	for _, i := range todo {
		if gctx.Err() != nil {
			break
		}
		e := &sc.entries[i]
		g.Go(func() error {
			err := s.hashEntry(e, c.stager, &bytes)
			done.Add(1)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// errChanged says a file changed between its stat and the end of its read.
var errChanged = errors.New("file changed while being read")

// readTries is how many times a file that keeps changing is read before it is reported skipped.
const readTries = 3

// hashEntry hashes (and stages) the file e, retrying while it changes under us; a file that keeps
// changing becomes a TypeSkipped entry, so a torn read is never stored.
func (s *Store) hashEntry(e *liveEntry, stg *stager, bytes *atomic.Int64) error {
	full := filepath.Join(s.root, e.Path)
	for try := 0; ; try++ {
		h, err := hashFile(full, e.St, stg, bytes)
		if err == nil {
			e.Blob = h
			return nil
		}
		if !errors.Is(err, errChanged) {
			return err
		}
		st, lerr := lstatPath(full)
		if try+1 == readTries || lerr != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			e.Type, e.Mode, e.Size, e.Reason = TypeSkipped, 0, 0, "changed while being read"
			return nil
		}
		e.St, e.Size, e.Mode = st, st.Size, st.Mode&0o7777
	}
}

// smallFile is the size up to which a file is read whole into memory (one read, one hash, and a
// write only if the content is new); larger files are streamed to a staging file while hashed.
const smallFile = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, smallFile); return &b }}

// racyWindow is how recent a file's ctime may be, at the start of its read, for the read to need
// a second one. File timestamps come from a coarse clock (a few ms), so a write during a read may
// leave the stat unchanged; but it sets ctime to at least the read's start minus that granularity.
// A file whose ctime is older than the read's start by more than racyWindow was not written while
// read; a more recent one is read twice, and the two hashes must agree.
const racyWindow = 100 * time.Millisecond

// hashFile reads the file full, which lstat saw as want, and returns its hash. It opens with
// O_NOFOLLOW and compares fstat before and after the read with want: any difference means the
// file changed (errChanged) and nothing is staged. A recently changed file is read twice (see
// racyWindow), so a read torn by a concurrent writer is never stored.
func hashFile(full string, want statInfo, stg *stager, bytes *atomic.Int64) (Hash, error) {
	var h Hash
	readStart := time.Now().UnixNano()
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
			return h, errChanged
		}
		return h, fmt.Errorf("read %s: %w (make it readable, or list it in %s)", full, err, IgnoreFile)
	}
	defer f.Close()
	st1, err := fstatFile(f)
	if err != nil {
		return h, err
	}
	if st1 != want {
		return h, errChanged
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	if st1.Size <= smallFile {
		data := buf[:st1.Size]
		if _, err := io.ReadFull(f, data); err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return h, errChanged
			}
			return h, fmt.Errorf("read %s: %w", full, err)
		}
		var one [1]byte
		if n, _ := f.Read(one[:]); n != 0 {
			return h, errChanged
		}
		h = sha256.Sum256(data)
		if st2, err := fstatFile(f); err != nil || st2 != st1 {
			return h, errChanged
		}
		if err := confirmQuiet(f, st1, readStart, h); err != nil {
			return h, err
		}
		bytes.Add(st1.Size)
		if stg != nil {
			return h, stg.putBytes(h, data)
		}
		return h, nil
	}
	hasher := sha256.New()
	var w io.Writer = hasher
	var tmp *os.File
	if stg != nil {
		if tmp, err = stg.tempFile(); err != nil {
			return h, err
		}
		defer func() {
			if tmp != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		w = io.MultiWriter(hasher, tmp)
	}
	n, err := io.CopyBuffer(w, countingReader{f, bytes}, buf)
	if err != nil {
		return h, fmt.Errorf("read %s: %w", full, err)
	}
	hasher.Sum(h[:0])
	if st2, err := fstatFile(f); err != nil || st2 != st1 || n != st1.Size {
		return h, errChanged
	}
	if err := confirmQuiet(f, st1, readStart, h); err != nil {
		return h, err
	}
	if tmp != nil {
		if err := tmp.Close(); err != nil {
			return h, err
		}
		name := tmp.Name()
		tmp = nil
		return h, stg.adopt(h, name, n)
	}
	return h, nil
}

// confirmQuiet re-reads a file changed within racyWindow of its read and checks that it still
// hashes to h with the same stat; otherwise errChanged.
func confirmQuiet(f *os.File, st statInfo, readStart int64, h Hash) error {
	if st.Ctime < readStart-int64(racyWindow) && st.Mtime < readStart-int64(racyWindow) {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	hasher := sha256.New()
	n, err := io.Copy(hasher, f)
	if err != nil {
		return err
	}
	var again Hash
	hasher.Sum(again[:0])
	if st2, err := fstatFile(f); err != nil || st2 != st || n != st.Size || again != h {
		return errChanged
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// checkpointLocked captures the workspace and commits a checkpoint of the given kind. With
// reuse, a workspace equal to the current position commits nothing and returns that position.
// It also returns the capture, which a restore uses as the live state.
func (s *Store) checkpointLocked(ctx context.Context, label string, kind Kind, reuse bool) (*CheckpointResult, *capture, error) {
	c, err := s.captureLive(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	newObjects, newBytes := c.stager.count(), c.stager.newBytes
	if err := c.stager.commit(); err != nil {
		return nil, nil, err
	}
	entries := c.manifest()
	mb := EncodeManifest(entries)
	mh := Hash(sha256.Sum256(mb))
	pos, err := s.readPosition()
	if err != nil {
		return nil, nil, err
	}
	res := &CheckpointResult{NewObjects: newObjects, NewBytes: newBytes, Hashed: c.hashed,
		Excluded: c.scan.excluded, ExcludedCount: c.scan.excludedCount, Warnings: c.warnings}
	for _, e := range entries {
		if e.Type == TypeSkipped {
			res.Skipped = append(res.Skipped, Skipped{Path: e.Path, Reason: e.Reason})
		}
	}
	if reuse && pos.Current != "" {
		cur, err := s.readCheckpoint(pos.Current)
		if err == nil && cur.Manifest == mh {
			res.Checkpoint, res.Reused = *cur, true
			return res, c, s.writeIndex(c)
		}
	}
	mname := filepath.Join(s.state, "manifests", mh.String())
	if _, err := os.Lstat(mname); err != nil {
		if err := writeFileDurable(mname, mb, 0o600); err != nil {
			return nil, nil, fmt.Errorf("write manifest: %w", err)
		}
	}
	cp := Checkpoint{Time: time.Now().UTC(), Kind: kind, Label: label, Parent: pos.Current, Manifest: mh, Counts: countEntries(entries)}
	if !cp.Time.After(pos.Time) {
		cp.Time = pos.Time.Add(time.Nanosecond)
	}
	b, id := encodeCheckpoint(&cp)
	cp.ID = id
	cname := filepath.Join(s.state, "checkpoints", id)
	if _, err := os.Lstat(cname); err == nil {
		return nil, nil, fmt.Errorf("checkpoint id %s already exists (a 48-bit collision): try again", id)
	}
	if err := writeFileDurable(cname, b, 0o600); err != nil {
		return nil, nil, fmt.Errorf("write checkpoint: %w", err)
	}
	pos.Current, pos.Time = id, cp.Time
	if err := s.writePosition(pos); err != nil {
		return nil, nil, fmt.Errorf("write position: %w", err)
	}
	res.Checkpoint = cp
	if err := s.writeIndex(c); err != nil {
		return res, c, err
	}
	if s.opts.Recorder != nil {
		seq, err := s.opts.Recorder.Record("checkpoint", CheckpointRecord{
			ID: id, Label: label, Kind: kind, Time: cp.Time, Parent: cp.Parent, Manifest: mh.String(),
			Files: cp.Counts.Files, Dirs: cp.Counts.Dirs, Symlinks: cp.Counts.Symlinks, Skipped: cp.Counts.Skipped, Bytes: cp.Counts.Bytes,
		})
		if err != nil {
			return res, c, fmt.Errorf("%w: checkpoint %s: %v", ErrNotRecorded, id, err)
		}
		res.ChainSeq = seq
	}
	return res, c, nil
}

func countEntries(entries []Entry) Counts {
	var n Counts
	for i := range entries {
		switch entries[i].Type {
		case TypeFile:
			n.Files++
			n.Bytes += entries[i].Size
		case TypeDir:
			n.Dirs++
		case TypeSymlink:
			n.Symlinks++
		case TypeSkipped:
			n.Skipped++
		}
	}
	return n
}

// writeIndex saves the stat cache of a capture when it changed.
func (s *Store) writeIndex(c *capture) error {
	if !c.indexDirty {
		return nil
	}
	var entries []indexEntry
	for i := range c.scan.entries {
		if e := &c.scan.entries[i]; e.Type == TypeFile {
			entries = append(entries, indexEntry{Path: e.Path, St: e.St, Blob: e.Blob})
		}
	}
	return s.saveIndex(entries)
}

func (s *Store) saveIndex(entries []indexEntry) error {
	if err := writeFile(filepath.Join(s.state, "index"), encodeIndex(entries), 0o600, false); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }
