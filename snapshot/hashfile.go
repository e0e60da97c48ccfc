package snapshot

import (
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

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// errChanged says a file changed between its stat and the end of its read.
var errChanged = errors.New("file changed while being read")

// readTries is how many times a file that keeps changing is read before it is reported skipped.
const readTries = 3

// hashEntry hashes (and stages) the file e, retrying while it changes under us; a file that keeps
// changing becomes a TypeSkipped entry, so a torn read is never stored.
func (s *Store) hashEntry(e *walk.LiveEntry, stg *objects.Stager, bytes *atomic.Int64) error {
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
		st, lerr := platform.Lstat(full)
		if try+1 == readTries || lerr != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			e.Type, e.Mode, e.Size, e.Reason = TypeSkipped, 0, 0, "changed while being read"
			return nil
		}
		e.St, e.Size, e.Mode = st, st.Size, st.Mode&0o7777
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, objects.SmallFile); return &b }}

// tinyFile is the size up to which a file is read into a buffer of tinyPool: most files of a
// workspace are that small, and a no-change checkpoint reads a sample of them only, which then
// costs a few small buffers rather than a megabyte per worker (which a short-lived process
// allocates fresh, and which brings its first garbage collection closer).
const tinyFile = 64 << 10

var tinyPool = sync.Pool{New: func() any { b := make([]byte, tinyFile); return &b }}

// racyWindow is how recent a file's ctime may be, at the start of its read, for the read to need
// a second one. File timestamps come from a coarse clock (a few ms), so a write during a read may
// leave the stat unchanged; but it sets ctime to at least the read's start minus that granularity.
// A file whose ctime is older than the read's start by more than racyWindow was not written while
// read; a more recent one is read twice, and the two hashes must agree.
const racyWindow = 100 * time.Millisecond

// hashFile reads the file full, which lstat saw as want, and returns its hash. It opens without
// following a link (platform.OpenNoFollow) and compares fstat before and after the read with want: any difference means the
// file changed (errChanged) and nothing is staged. A recently changed file is read twice (see
// racyWindow), so a read torn by a concurrent writer is never stored.
func hashFile(full string, want platform.Stat, stg *objects.Stager, bytes *atomic.Int64) (Hash, error) {
	var h Hash
	readStart := time.Now().UnixNano()
	// A FIFO swapped in since the lstat does not block the open (fstat then differs from want).
	f, err := platform.OpenNoFollow(full)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || platform.IsSymlinkRefused(err) {
			return h, errChanged
		}
		return h, fmt.Errorf("read %s: %w (%s)", walk.ShortPath(full), err, walk.ReadAdvice(err))
	}
	defer f.Close()
	st1, err := platform.Fstat(f)
	if err != nil {
		return h, err
	}
	if st1 != want {
		return h, errChanged
	}
	pool := &bufPool
	if st1.Size <= tinyFile {
		pool = &tinyPool
	}
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf := *bp
	if st1.Size <= objects.SmallFile {
		return hashSmallFile(f, full, st1, buf, readStart, stg, bytes)
	}
	return hashLargeFile(f, full, st1, buf, readStart, stg, bytes)
}

// hashSmallFile is hashFile of a file of at most objects.SmallFile bytes, open as f with the
// stat st: read whole into buf, hashed, staged if new.
func hashSmallFile(f *os.File, full string, st platform.Stat, buf []byte, readStart int64, stg *objects.Stager, bytes *atomic.Int64) (Hash, error) {
	var h Hash
	data := buf[:st.Size]
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
	if st2, err := platform.Fstat(f); err != nil || st2 != st {
		return h, errChanged
	}
	if err := confirmQuiet(f, st, readStart, h); err != nil {
		return h, err
	}
	bytes.Add(st.Size)
	if stg != nil {
		return h, stg.PutBytes(h, data)
	}
	return h, nil
}

// hashLargeFile is hashFile of a larger file: streamed to a staging file while hashed, or, over
// objects.ChunkedFile, stored in chunks as it is read.
func hashLargeFile(f *os.File, full string, st platform.Stat, buf []byte, readStart int64, stg *objects.Stager, bytes *atomic.Int64) (Hash, error) {
	var h Hash
	var err error
	hasher := sha256.New()
	var w io.Writer = hasher
	var tmp *os.File
	chunked := stg != nil && st.Size > objects.ChunkedFile // stored in chunks (objects/chunked.go)
	if stg != nil && !chunked {
		if tmp, err = stg.TempFile(); err != nil {
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
	var n int64
	var chunks []objects.ChunkRef
	if chunked {
		chunks, n, err = stg.PutChunks(countingReader{f, bytes}, hasher)
	} else {
		n, err = io.CopyBuffer(w, countingReader{f, bytes}, buf)
	}
	if err != nil {
		return h, fmt.Errorf("read %s: %w", full, err)
	}
	hasher.Sum(h[:0])
	if st2, err := platform.Fstat(f); err != nil || st2 != st || n != st.Size {
		return h, errChanged
	}
	if err := confirmQuiet(f, st, readStart, h); err != nil {
		return h, err
	}
	if chunked {
		return h, stg.PutList(h, chunks)
	}
	if tmp != nil {
		if err := tmp.Close(); err != nil {
			return h, err
		}
		name := tmp.Name()
		tmp = nil
		return h, stg.Adopt(h, name, n)
	}
	return h, nil
}

// confirmQuiet re-reads a file changed within racyWindow of its read and checks that it still
// hashes to h with the same stat; otherwise errChanged.
func confirmQuiet(f *os.File, st platform.Stat, readStart int64, h Hash) error {
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
	if st2, err := platform.Fstat(f); err != nil || st2 != st || n != st.Size || again != h {
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
