package hashchain

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// Options configure Open.
type Options struct {
	// Create makes an empty chain file when none exists; without it a missing file is an error.
	Create bool
	// Anchor is the anchor file (FORMAT.md §7), usually AnchorPath(workspace root). Open checks
	// that the chain still extends the head stored there, and every Append stores the new head
	// (or hands that over: SyncLater).
	// "" disables the check: an embedder that sets no anchor cannot notice a cut chain.
	Anchor string
	// Clock, if not nil, replaces time.Now for entry times (tests, test vectors).
	Clock func() time.Time
	// SyncLater, if not nil, takes over what an append makes durable after its line: Append
	// then fsyncs the line alone, writes the sidecar without fsync, and hands SyncLater a flush
	// that fsyncs the sidecar and then anchors the head as of that append (later.go). A caller
	// runs flush within its bound (a group commit), and for each key only the newest flush
	// needs to run: it covers the earlier ones. Open hands over an anchor that is behind the
	// same way. It needs an Anchor (the anchored size is what the sidecar is trusted up to
	// after a power cut, FORMAT.md §6.3); without one it is ignored. nil: every append is
	// durable whole when it returns.
	SyncLater func(key string, flush func() error)
}

// ErrClosed is returned by methods of a closed Chain.
var ErrClosed = errors.New("hash chain is closed")

// Chain is an open chain file. Its methods are safe for concurrent use, and appends from other
// processes are serialised with it through an flock on the chain's lock file.
type Chain struct {
	path string
	opts Options

	mu     sync.Mutex
	f      *os.File // the chain, opened O_APPEND
	lockf  *os.File // chain.lock
	tree   sidecar
	stampf *os.File // chain.stamp
	closed bool

	// State as of the last sync, valid while the file is in state id.
	valid bool
	id    fileID
	size  int64    // bytes
	n     int64    // entries
	first [32]byte // entry 0's hash (the origin)
	last  [32]byte // entry n-1's hash
}

// sidecarPath, lockPath and tornPath (and stampPath) name the files beside a chain file (FORMAT.md §1).
func sidecarPath(chain string) string { return strings.TrimSuffix(chain, ".jsonl") + ".tree" }
func lockPath(chain string) string    { return strings.TrimSuffix(chain, ".jsonl") + ".lock" }
func tornPath(chain string, t time.Time) string {
	return strings.TrimSuffix(chain, ".jsonl") + ".torn-" + t.UTC().Format("20060102T150405.000000000Z")
}

// Open opens the chain file at path: it checks the tail (a torn last line is a *TornError),
// brings the Merkle sidecar up to date with the chain (rebuilding what a crash left out),
// checks that the chain extends the anchored head (a cut or rewritten chain is an
// *AnchorError), and anchors the current head. Apart from a sidecar rebuild, it costs
// O(log n): it does not reread the chain (Verify does).
func Open(path string, opts Options) (*Chain, error) {
	c, err := openFiles(path, opts)
	if err != nil {
		return nil, err
	}
	err = c.withLock(func() error {
		if err := c.sync(true); err != nil {
			return err
		}
		return c.anchorIfBehind()
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func openFiles(path string, opts Options) (*Chain, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("chain %q: %w", path, err)
	}
	flags := os.O_RDWR | os.O_APPEND
	created := false
	if opts.Create {
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			flags |= os.O_CREATE
			created = true
		}
	}
	f, err := regular.OpenFile(abs, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no chain at %s: %w (nothing has been recorded in this workspace yet, or pass the right path)", abs, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open chain: %w", err)
	}
	if created {
		if err := durable.SyncDir(filepath.Dir(abs)); err != nil {
			f.Close()
			return nil, err
		}
	}
	lockf, err := regular.OpenFile(lockPath(abs), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open chain lock: %w", err)
	}
	tf, err := regular.OpenFile(sidecarPath(abs), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		f.Close()
		lockf.Close()
		return nil, fmt.Errorf("open chain sidecar: %w", err)
	}
	sf, err := os.OpenFile(stampPath(abs), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		f.Close()
		lockf.Close()
		tf.Close()
		return nil, fmt.Errorf("open chain stamp: %w", err)
	}
	return &Chain{path: abs, opts: opts, f: f, lockf: lockf, tree: sidecar{f: tf}, stampf: sf}, nil
}

// Path returns the chain file's absolute path.
func (c *Chain) Path() string { return c.path }

// Close releases the chain's files. Appends already returned are durable (with
// Options.SyncLater, their lines; the flushes handed over still work after Close).
func (c *Chain) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return errors.Join(c.f.Close(), c.tree.f.Close(), c.stampf.Close(), c.lockf.Close())
}

// withLock runs fn holding the in-process mutex and the cross-process flock, the innermost lock
// of agent-rewind.
func (c *Chain) withLock(fn func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if err := flock(c.lockf); err != nil {
		return fmt.Errorf("lock chain %s: %w", lockPath(c.path), err)
	}
	defer funlock(c.lockf)
	return fn()
}

// sync brings the cached state and the sidecar up to date with the chain file, which another
// process may have appended to, and checks the anchor. Unless force, a file whose identity
// (stamp.go) is unchanged since the last sync or append means nothing changed. A file that
// changed is trusted before its tail only when its stamp vouches for it; otherwise it is
// verified whole first (checkPrefix), so that nothing is appended to a chain broken in the
// middle.
func (c *Chain) sync(force bool) error {
	id, err := identify(c.f)
	if err != nil {
		return fmt.Errorf("stat chain: %w", err)
	}
	if !force && c.valid && id == c.id {
		return nil
	}
	c.valid = false
	size := id.Size
	n, last, err := c.readTail(size)
	if err != nil {
		return err
	}
	if err := c.checkPrefix(id, n, last); err != nil {
		return err
	}
	var first [32]byte
	if n > 0 {
		if first, err = c.readFirst(size); err != nil {
			return err
		}
	}
	c.size, c.n, c.first, c.last = size, n, first, last
	ah, anchored, err := c.readAnchor()
	if err != nil {
		return err
	}
	watermark := int64(-1)
	if anchored {
		watermark = ah.Size
	}
	if err := c.syncTree(watermark); err != nil {
		return err
	}
	if anchored {
		if err := c.checkAnchor(ah); err != nil {
			return err
		}
	}
	c.id, c.valid = id, true
	return nil
}

// checkPrefix makes sure the chain file in state id, whose tail holds n entries ending in last,
// verifies whole: its stamp vouches for exactly this state, or it is verified now (O(n)) and
// stamped. A chain that does not verify is a *VerifyError wrapped with what to do.
func (c *Chain) checkPrefix(id fileID, n int64, last [32]byte) error {
	if s, ok := readStamp(c.stampf); ok && s.ID == id && s.N == n && s.Last == last {
		return nil
	}
	v := &verifier{opts: VerifyOptions{Name: c.path}}
	rep, err := v.run(io.NewSectionReader(c.f, 0, id.Size), nil)
	var ve *VerifyError
	if errors.As(err, &ve) {
		return &BrokenError{VerifyError: ve, Anchor: c.opts.Anchor}
	}
	if err != nil {
		return err
	}
	if rep.Size != n {
		return fmt.Errorf("chain %s changed while it was being verified (%d entries, then %d): try again", c.path, n, rep.Size)
	}
	writeStamp(c.stampf, stamp{ID: id, N: n, Last: last})
	return nil
}

// restamp records, after an append, that the file as it is now was verified: it was, before the
// append, and the appended line was built on its verified last entry.
func (c *Chain) restamp() {
	id, err := identify(c.f)
	if err != nil {
		c.valid = false
		return
	}
	c.id = id
	if c.id.Size != c.size {
		c.valid = false // someone else wrote too: the next sync looks at the whole file
		return
	}
	writeStamp(c.stampf, stamp{ID: c.id, N: c.n, Last: c.last})
}

// readTail checks the chain's last line and returns the entry count and last hash. A torn
// tail is a *TornError; a last line that parses but does not check is a *VerifyError.
func (c *Chain) readTail(size int64) (n int64, last [32]byte, err error) {
	if size == 0 {
		return 0, last, nil
	}
	lines, _, err := tailLines(c.f, size, 2)
	if err != nil {
		return 0, last, err
	}
	// The torn line's number, when the line before it checks.
	lineNo := func() int64 {
		if len(lines) < 2 {
			return 1
		}
		l := lines[0]
		if pl, p, _ := checkLine(l[:len(l)-1]); p == "" {
			return pl.seq + 2
		}
		return -1
	}
	lastLine := lines[len(lines)-1]
	lastStart := size - int64(len(lastLine))
	if !bytes.HasSuffix(lastLine, []byte("\n")) {
		return 0, last, &TornError{File: c.path, Offset: lastStart, Bytes: int64(len(lastLine)), Line: lineNo(), Reason: "no final newline"}
	}
	body := lastLine[:len(lastLine)-1]
	pl, p, detail := checkLine(body)
	if p == ProblemUnparsable {
		return 0, last, &TornError{File: c.path, Offset: lastStart, Bytes: int64(len(lastLine)), Line: lineNo(), Reason: "the last line does not parse: " + detail}
	}
	if p != "" {
		return 0, last, &VerifyError{File: c.path, Line: -1, Seq: -1, Offset: lastStart, Problem: p, Detail: "the last line: " + detail + " (run verify to locate it exactly)"}
	}
	var h lineHasher
	if sum := pl.sum(body, &h); sum != pl.hash {
		return 0, last, &VerifyError{File: c.path, Line: pl.seq + 1, Seq: pl.seq, Offset: lastStart, Problem: ProblemHashMismatch, Detail: fmt.Sprintf("the last entry hashes to %s, not its recorded hash %s (run verify)", hex.EncodeToString(sum[:]), hex.EncodeToString(pl.hash[:]))}
	}
	return pl.seq + 1, pl.hash, nil
}

// readFirst returns entry 0's hash (it names the chain: its origin).
func (c *Chain) readFirst(size int64) ([32]byte, error) {
	buf := make([]byte, min(size, MaxLineBytes+1))
	if _, err := c.f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return [32]byte{}, fmt.Errorf("read chain: %w", err)
	}
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return [32]byte{}, &VerifyError{File: c.path, Line: 1, Seq: 0, Problem: ProblemUnparsable, Detail: "the first line is longer than the limit"}
	}
	pl, p, detail := checkLine(buf[:i])
	if p != "" {
		return [32]byte{}, &VerifyError{File: c.path, Line: 1, Seq: 0, Problem: p, Detail: detail}
	}
	var h lineHasher
	if sum := pl.sum(buf[:i], &h); sum != pl.hash || pl.seq != 0 {
		return [32]byte{}, &VerifyError{File: c.path, Line: 1, Seq: 0, Problem: ProblemHashMismatch, Detail: "the first entry does not check (run verify)"}
	}
	return pl.hash, nil
}

// tailLines reads backwards from end and returns the last k lines (each with its LF, the last
// possibly without), oldest first, and the offset of the first one. It reads at most
// 16 MiB + one line; if k lines are not found in that, it returns fewer.
func tailLines(f *os.File, end int64, k int) (lines [][]byte, start int64, err error) {
	const chunk = 64 << 10
	var buf []byte // f[pos:end]
	pos := end
	for {
		// Count complete lines in buf: a line starts after an LF (or at offset 0).
		found := 0
		for i := len(buf) - 2; i >= 0 && found < k; i-- {
			if buf[i] == '\n' {
				found++
				if found == k {
					buf = buf[i+1:]
					pos += int64(i + 1)
					break
				}
			}
		}
		if found == k || pos == 0 || len(buf) > 16<<20 {
			break
		}
		n := min(int64(chunk), pos)
		next := make([]byte, int(n)+len(buf))
		if _, err := f.ReadAt(next[:n], pos-n); err != nil {
			return nil, 0, fmt.Errorf("read chain: %w", err)
		}
		copy(next[n:], buf)
		buf, pos = next, pos-n
	}
	start = pos
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			lines = append(lines, buf)
			break
		}
		lines = append(lines, buf[:i+1])
		buf = buf[i+1:]
	}
	if len(lines) > k { // started mid-file without finding enough LFs: drop the partial first
		lines = lines[len(lines)-k:]
	}
	return lines, start, nil
}

// syncTree makes the sidecar cover exactly the chain's entries: it cuts a partial record a
// crash left, recomputes from the chain's tail the leaves it lags by and those at or above the
// watermark (the anchored size, below which the sidecar was durable when the anchor was
// written, FORMAT.md §6.3; -1 when there is no anchor), and rebuilds it whole when it
// disagrees with the chain.
func (c *Chain) syncTree(watermark int64) error {
	if err := c.tree.load(); err != nil {
		return err
	}
	from := c.tree.leaves
	if watermark >= 0 && watermark < from {
		from = watermark
	}
	switch {
	case c.tree.leaves > c.n:
		return &AnchorError{File: c.path, Anchor: sidecarPath(c.path), AnchoredSize: c.tree.leaves, Size: c.n, Cut: true, Detail: "the Merkle sidecar covers more entries than the chain has"}
	case from == c.n:
		if c.n == 0 {
			return nil
		}
		h, err := c.tree.leafHashAt(c.n - 1)
		if err != nil {
			return err
		}
		if h == leafHash(c.last) {
			return nil
		}
	case c.n-from <= 4096:
		if ok, err := c.catchUpTree(from); err != nil || ok {
			return err
		}
	}
	return c.rebuildTree()
}

// catchUpTree recomputes the sidecar's leaves from on (trusting those before) from the chain's
// last lines, and writes what the sidecar lacks or holds wrong; ok is false when those lines do
// not link up with the sidecar (then the caller rebuilds it whole). Leaves it only appends are
// fsynced now unless a deferred flush will (later.go); a repair is fsynced now.
func (c *Chain) catchUpTree(from int64) (ok bool, err error) {
	k := c.n - from
	lines, start, err := tailLines(c.f, c.size, int(k))
	if err != nil || int64(len(lines)) != k || (from == 0 && start != 0) {
		return false, err
	}
	var prev [32]byte
	if from > 0 {
		if prev, err = c.entryHashBefore(lines[0]); err != nil {
			return false, err
		}
	}
	fr, err := c.tree.frontierAt(from)
	if err != nil {
		return false, err
	}
	var want []byte // the stored hashes of leaves from … n-1
	var h lineHasher
	for i, l := range lines {
		body := l[:len(l)-1]
		pl, p, _ := checkLine(body)
		if p != "" || pl.seq != from+int64(i) || pl.prev != prev || pl.sum(body, &h) != pl.hash {
			return false, nil
		}
		if i == 0 && from > 0 {
			lh, err := c.tree.leafHashAt(from - 1)
			if err != nil || lh != leafHash(pl.prev) {
				return false, err
			}
		}
		prev = pl.hash
		for _, sh := range fr.add(leafHash(pl.hash)) {
			want = append(want, sh[:]...)
		}
	}
	base := tlog.StoredHashCount(from) * tlog.HashSize
	have := make([]byte, tlog.StoredHashCount(c.tree.leaves)*tlog.HashSize-base)
	if _, err := c.tree.f.ReadAt(have, base); err != nil {
		return false, fmt.Errorf("read sidecar %s: %w", c.tree.f.Name(), err)
	}
	repair := !bytes.Equal(have, want[:len(have)])
	if !repair {
		want, base = want[len(have):], base+int64(len(have))
	}
	if len(want) > 0 {
		if _, err := c.tree.f.WriteAt(want, base); err != nil {
			return false, fmt.Errorf("write sidecar %s: %w", c.tree.f.Name(), err)
		}
	}
	c.tree.leaves = c.n
	if len(want) == 0 || !repair && c.deferring() {
		return true, nil
	}
	if err := c.tree.f.Sync(); err != nil {
		return false, fmt.Errorf("sync sidecar %s: %w", c.tree.f.Name(), err)
	}
	return true, nil
}

// entryHashBefore returns the prev of a line (the hash of the entry before it).
func (c *Chain) entryHashBefore(line []byte) ([32]byte, error) {
	pl, p, _ := checkLine(line[:len(line)-1])
	if p != "" {
		return [32]byte{}, nil // the caller's own checks fail on this line
	}
	return pl.prev, nil
}

// rebuildTree recomputes the whole sidecar from the chain, verifying the chain as it goes.
func (c *Chain) rebuildTree() error {
	if err := c.tree.reset(); err != nil {
		return err
	}
	w, err := c.tree.writer()
	if err != nil {
		return err
	}
	v := &verifier{opts: VerifyOptions{Name: c.path}}
	if _, err := v.run(io.NewSectionReader(c.f, 0, c.size), w.add); err != nil {
		return err
	}
	return w.finish()
}

// treeHead returns the head of the first n entries from the sidecar, in O(log n).
func (c *Chain) treeHead(n int64) (Head, error) {
	if n == 0 {
		return Head{Origin: EmptyOrigin, Root: emptyRoot}, nil
	}
	root, err := tlog.TreeHash(n, &c.tree)
	if err != nil {
		return Head{}, fmt.Errorf("chain sidecar: %w", err)
	}
	return Head{Origin: originOf(c.first), Size: n, Root: root}, nil
}

// readAnchor reads the anchored head; ok is false when there is no anchor (none set, or none
// written yet).
func (c *Chain) readAnchor() (ah Head, ok bool, err error) {
	if c.opts.Anchor == "" {
		return Head{}, false, nil
	}
	return readAnchor(c.opts.Anchor)
}

// checkAnchor checks that the chain extends the anchored head ah. A mismatch is first blamed on
// the sidecar (rebuilt from the chain and checked again) before the chain is called rewritten.
func (c *Chain) checkAnchor(ah Head) error {
	if ah.Size > c.n {
		return &AnchorError{File: c.path, Anchor: c.opts.Anchor, AnchoredSize: ah.Size, Size: c.n, Cut: true}
	}
	for attempt := 0; ; attempt++ {
		h, err := c.treeHead(ah.Size)
		if err != nil {
			return err
		}
		if h.Root == ah.Root {
			return nil
		}
		if attempt > 0 {
			return &AnchorError{File: c.path, Anchor: c.opts.Anchor, AnchoredSize: ah.Size, Size: c.n, Detail: fmt.Sprintf("root %s, anchored %s", b64(h.Root), b64(ah.Root))}
		}
		if err := c.rebuildTree(); err != nil {
			return err
		}
	}
}

// anchorIfBehind stores the current head in the anchor when it is missing or older.
func (c *Chain) anchorIfBehind() error {
	if c.opts.Anchor == "" {
		return nil
	}
	ah, ok, err := readAnchor(c.opts.Anchor)
	if err != nil {
		return err
	}
	if ok && ah.Size >= c.n {
		return nil
	}
	return c.anchor(false) // what syncTree trusted may be a deferring writer's unsynced sidecar
}

// anchor stores the current head in the anchor, or hands that over (later.go) when appends
// defer it. The sidecar is fsynced first unless synced says it is durable already: the
// anchored size promises that much of the sidecar survives a power cut (FORMAT.md §6.3).
func (c *Chain) anchor(synced bool) error {
	if c.opts.Anchor == "" {
		return nil
	}
	h, err := c.treeHead(c.n)
	if err != nil {
		return err
	}
	if c.deferring() {
		c.handOver(h)
		return nil
	}
	if !synced {
		if err := c.tree.f.Sync(); err != nil {
			return fmt.Errorf("sync sidecar %s: %w", c.tree.f.Name(), err)
		}
	}
	return writeAnchor(c.opts.Anchor, h)
}

// Append adds an entry of the given kind with data (which must marshal with encoding/json to a
// JSON object) and returns it once it is durable: the line is written in one write and
// fsynced, then the sidecar and the anchor are updated (made durable before it returns, or,
// with Options.SyncLater, by the flush it hands over). It refuses to write after a torn line
// (*TornError) or onto a chain that does not extend its anchor (*AnchorError). If the line was
// written but updating the sidecar or anchor failed, the entry is returned with the error.
func (c *Chain) Append(kind string, data any) (Entry, error) {
	if err := checkKind(kind); err != nil {
		return Entry{}, err
	}
	canon, err := canonicalData(data)
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	err = c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		e, err = c.appendLocked(kind, canon)
		return err
	})
	return e, err
}

func (c *Chain) appendLocked(kind string, canon []byte) (Entry, error) {
	now := time.Now
	if c.opts.Clock != nil {
		now = c.opts.Clock
	}
	tm := now().UTC().Format(time.RFC3339Nano)
	seq, prev := c.n, c.last
	line, hash := encodeEntry(seq, tm, kind, canon, prev)
	if len(line) > MaxLineBytes {
		return Entry{}, fmt.Errorf("%w: the entry would be a %d-byte line, over the limit of %d: record a digest or a reference instead of the content", ErrBadData, len(line), MaxLineBytes)
	}
	line = append(line, '\n')
	if _, err := c.f.Write(line); err != nil {
		c.valid = false
		if terr := c.f.Truncate(c.size); terr != nil {
			return Entry{}, fmt.Errorf("append to chain: %w; removing the partial line also failed (%v): the chain now ends in a torn line", err, terr)
		}
		return Entry{}, fmt.Errorf("append to chain: %w (nothing was written)", err)
	}
	if err := c.f.Sync(); err != nil {
		c.valid = false
		c.f.Truncate(c.size) // not acknowledged: take it back where the kernel still lets us
		return Entry{}, fmt.Errorf("sync chain: %w (the entry is not recorded)", err)
	}
	c.size += int64(len(line))
	c.n++
	c.last = hash
	if seq == 0 {
		c.first = hash
	}
	c.restamp()
	e := Entry{Seq: seq, Time: tm, Kind: kind, Data: canon, Prev: hex.EncodeToString(prev[:]), Hash: hex.EncodeToString(hash[:])}
	if err := c.appendTree(seq, hash); err != nil {
		c.valid = false
		return e, fmt.Errorf("entry %d is recorded, but updating the Merkle sidecar failed (it is rebuilt on the next open): %w", seq, err)
	}
	if err := c.anchor(true); err != nil {
		return e, fmt.Errorf("entry %d is recorded, but anchoring the new head failed: %w", seq, err)
	}
	return e, nil
}

// appendTree writes leaf seq's stored hashes to the sidecar and fsyncs it, unless a deferred
// flush will (later.go).
func (c *Chain) appendTree(seq int64, hash [32]byte) error {
	if c.tree.leaves != seq {
		return fmt.Errorf("sidecar covers %d entries, want %d", c.tree.leaves, seq)
	}
	hashes, err := tlog.StoredHashesForRecordHash(seq, leafHash(hash), &c.tree)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(hashes)*tlog.HashSize)
	for _, h := range hashes {
		buf = append(buf, h[:]...)
	}
	if _, err := c.tree.f.WriteAt(buf, tlog.StoredHashIndex(0, seq)*tlog.HashSize); err != nil {
		return err
	}
	if !c.deferring() {
		if err := c.tree.f.Sync(); err != nil {
			return err
		}
	}
	c.tree.leaves = seq + 1
	return nil
}

// Record appends an entry and returns its seq: the Recorder interface that leaf modules define.
func (c *Chain) Record(kind string, data any) (int64, error) {
	e, err := c.Append(kind, data)
	return e.Seq, err
}

// Head returns the head of the whole chain, including entries other processes appended.
func (c *Chain) Head() (Head, error) {
	var h Head
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		var err error
		h, err = c.treeHead(c.n)
		return err
	})
	return h, err
}

// HeadAt returns the head of the chain's first size entries.
func (c *Chain) HeadAt(size int64) (Head, error) {
	var h Head
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		if size < 0 || size > c.n {
			return fmt.Errorf("no head of size %d: the chain has %d entries", size, c.n)
		}
		var err error
		h, err = c.treeHead(size)
		return err
	})
	return h, err
}

// Entry returns entry seq. It scans the chain from the start (O(n)): entries are found by
// position, and the chain keeps no offset index.
func (c *Chain) Entry(seq int64) (Entry, error) {
	var size, n int64
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		size, n = c.size, c.n
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	if seq < 0 || seq >= n {
		return Entry{}, fmt.Errorf("no entry %d: the chain has %d entries (seq 0 to %d)", seq, n, n-1)
	}
	var e Entry
	err = scanLines(io.NewSectionReader(c.f, 0, size), func(line []byte, i int64) (bool, error) {
		if i < seq {
			return true, nil
		}
		pl, p, detail := checkLine(line)
		if p != "" {
			return false, &VerifyError{File: c.path, Line: i + 1, Seq: i, Problem: p, Detail: detail}
		}
		var h lineHasher
		if pl.seq != seq || pl.sum(line, &h) != pl.hash {
			return false, &VerifyError{File: c.path, Line: i + 1, Seq: i, Problem: ProblemHashMismatch, Detail: "the entry does not check (run verify)"}
		}
		var err error
		e, err = decodeEntry(line)
		return false, err
	})
	return e, err
}

// scanLines calls fn with each line of r (without its LF) and its 0-based index, until fn
// returns false.
func scanLines(r io.Reader, fn func(line []byte, i int64) (bool, error)) error {
	br := newLineReader(r)
	for i := int64(0); ; i++ {
		b, err := br.ReadSlice('\n')
		if len(b) == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read chain line %d: %w", i+1, err)
		}
		more, err := fn(b[:len(b)-1], i)
		if err != nil || !more {
			return err
		}
	}
}
