package workspace

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// ChangeKind is what a Change did to a path.
type ChangeKind string

// The kinds of change Change makes.
const (
	Modified ChangeKind = "modified" // rewritten with new text of the same size
	Added    ChangeKind = "added"    // a new 4 KiB text file beside an existing one
	Deleted  ChangeKind = "deleted"  // removed
)

// Change is one changed path.
type Change struct {
	Kind ChangeKind `json:"kind"`
	Path string     `json:"path"` // slash-separated, relative to the root
	Size int64      `json:"size"` // bytes written (0 for a deletion)
}

// changeMaxSize bounds the files chosen to modify or delete: the changes an agent makes between
// checkpoints are edits to source files, not rewrites of large binaries.
const changeMaxSize = 1 << 20

// MakeChanges makes n changes to the tree under root, deterministically from seed and the tree's
// current file list: 7 in 10 modify a file (new content, same size), 2 in 10 add a file, 1 in 10
// delete one. The files chosen are distinct regular files of at most 1 MiB; directories named in
// skip (for example ".rewind", a shadow git directory) are never looked into. Applied to the
// same tree with the same seed it makes the same changes, so a rewind measurement can make
// exactly the same ten changes again.
func MakeChanges(root string, n int, seed uint64, skip ...string) ([]Change, error) {
	var candidates []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && slices.Contains(skip, d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() <= changeMaxSize {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			candidates = append(candidates, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace: list %s: %w", root, err)
	}
	if len(candidates) < n {
		return nil, fmt.Errorf("workspace: %d changes asked of a tree with %d files of at most 1 MiB", n, len(candidates))
	}
	slices.Sort(candidates) // WalkDir is lexical already; this makes the order a stated property

	r := splitmix{s: derive(seed, -1)}
	chosen := map[int]bool{}
	out := make([]Change, 0, n)
	for i := range n {
		k := r.intn(len(candidates))
		for chosen[k] {
			k = (k + 1) % len(candidates)
		}
		chosen[k] = true
		rel := candidates[k]
		full := filepath.Join(root, filepath.FromSlash(rel))
		var c Change
		switch i % 10 {
		case 7, 8:
			dir, _ := filepath.Split(rel)
			c = Change{Kind: Added, Path: dir + "new_" + strconv.FormatUint(seed, 10) + "_" + strconv.Itoa(i) + ".txt", Size: 4096}
			if err := rewrite(filepath.Join(root, filepath.FromSlash(c.Path)), c.Size, derive(seed, i), 0o644); err != nil {
				return out, err
			}
		case 9:
			c = Change{Kind: Deleted, Path: rel}
			if err := os.Remove(full); err != nil {
				return out, fmt.Errorf("workspace: %w", err)
			}
		default:
			info, err := os.Lstat(full)
			if err != nil {
				return out, fmt.Errorf("workspace: %w", err)
			}
			c = Change{Kind: Modified, Path: rel, Size: info.Size()}
			if err := rewrite(full, c.Size, derive(seed, i), info.Mode().Perm()); err != nil {
				return out, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// rewrite replaces (or creates) the file at full with size bytes of new text from seed.
func rewrite(full string, size int64, seed uint64, mode fs.FileMode) error {
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = writeText(bw, file{size: size, seed: seed}, -1)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("workspace: rewrite %s: %w", full, err)
	}
	return nil
}

// ChangedBytes returns the bytes written by cs: what a later checkpoint has to store anew.
func ChangedBytes(cs []Change) int64 {
	var n int64
	for _, c := range cs {
		n += c.Size
	}
	return n
}
