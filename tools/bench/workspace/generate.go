package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Result describes a generated tree.
type Result struct {
	Shape         Shape  `json:"shape"`
	Regular       int    `json:"regular_files"`
	Executables   int    `json:"executables"`
	Symlinks      int    `json:"symlinks"`
	Dirs          int    `json:"dirs"`
	EmptyDirs     int    `json:"empty_dirs"`
	Bytes         int64  `json:"bytes"`
	ListingSHA256 string `json:"listing_sha256"` // see the package doc
}

// ErrNotEmpty reports a target directory that already holds something: the generator never
// writes into, or over, an existing tree.
var ErrNotEmpty = errors.New("workspace: target directory is not empty")

// Generate writes the tree for s under root, which must be absent or an empty directory. Files
// are written in parallel (GOMAXPROCS workers); the result does not depend on their order.
func Generate(ctx context.Context, root string, s Shape) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Result{}, fmt.Errorf("workspace: create %s: %w", root, err)
	}
	if ents, err := os.ReadDir(root); err != nil {
		return Result{}, fmt.Errorf("workspace: read %s: %w", root, err)
	} else if len(ents) > 0 {
		return Result{}, fmt.Errorf("%w: %s has %d entries (choose a new or empty directory)", ErrNotEmpty, root, len(ents))
	}

	p := makePlan(s)
	res := Result{Shape: s, Dirs: len(p.dirs), EmptyDirs: p.emptyDirs}
	var lst listing
	for _, d := range p.dirs {
		full := filepath.Join(root, filepath.FromSlash(d))
		if err := os.Mkdir(full, 0o755); err != nil {
			return res, fmt.Errorf("workspace: %w", err)
		}
		if err := os.Chmod(full, 0o755); err != nil { // whatever the umask
			return res, fmt.Errorf("workspace: %w", err)
		}
		lst.add('d', 0o755, 0, "", d)
	}

	sums := make([]string, len(p.files))
	if err := writeFiles(ctx, root, p.files, sums); err != nil {
		return res, err
	}
	for i, f := range p.files {
		switch f.kind {
		case kindLink:
			if err := os.Symlink(f.target, filepath.Join(root, filepath.FromSlash(f.path))); err != nil {
				return res, fmt.Errorf("workspace: %w", err)
			}
			sum := sha256.Sum256([]byte(f.target))
			lst.add('l', 0o777, int64(len(f.target)), hex.EncodeToString(sum[:]), f.path)
			res.Symlinks++
		default:
			lst.add('f', f.mode(), f.size, sums[i], f.path)
			res.Regular++
			res.Bytes += f.size
			if f.exec {
				res.Executables++
			}
		}
	}
	res.ListingSHA256 = lst.sum()
	return res, nil
}

// mode is the permission bits of a regular file.
func (f file) mode() fs.FileMode {
	if f.exec {
		return 0o755
	}
	return 0o644
}

// writeFiles writes every regular file of files in parallel and stores each content's hex
// SHA-256 in sums at the file's index.
func writeFiles(ctx context.Context, root string, files []file, sums []string) error {
	work := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	fail := func(err error) { once.Do(func() { firstErr = err }) }
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			bw := bufio.NewWriterSize(nil, 256<<10)
			h := sha256.New()
			for i := range work {
				sum, err := writeFile(root, files[i], i, bw, h)
				if err != nil {
					fail(err)
					continue
				}
				sums[i] = sum
			}
		})
	}
	for i, f := range files {
		if f.kind == kindLink {
			continue
		}
		if ctx.Err() != nil {
			fail(ctx.Err())
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}

// writeFile writes one regular file through bw, hashing it with h, and returns the hex digest.
func writeFile(root string, f file, index int, bw *bufio.Writer, h hash.Hash) (string, error) {
	full := filepath.Join(root, filepath.FromSlash(f.path))
	out, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode())
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	h.Reset()
	bw.Reset(io.MultiWriter(out, h))
	if f.kind == kindText {
		err = writeText(bw, f, index)
	} else {
		err = writeBinary(bw, f)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.Chmod(f.mode()) // whatever the umask
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("workspace: write %s: %w", full, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
