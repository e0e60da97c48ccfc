package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sync/errgroup"
)

// Kept is a path a restore left alone, and why.
type Kept struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// rules is the union of several .rewindignore files: a path excluded by any of them is never
// touched by a restore (the live rules, the target checkpoint's and the pre-rewind state's).
type rules []*Ignore

// Match implements matcher.
func (r rules) Match(path string, isDir bool) bool {
	for _, m := range r {
		if m.Match(path, isDir) {
			return true
		}
	}
	return false
}

func (r rules) excluded(path string, isDir bool) bool {
	for _, m := range r {
		if m.Excluded(path, isDir) {
			return true
		}
	}
	return false
}

// target is a checkpoint loaded for a restore: metadata, verified manifest and its ignore rules.
type target struct {
	meta    *Checkpoint
	entries []Entry
	ignore  *Ignore
}

// loadTarget reads everything a restore to id needs and refuses a manifest that could make the
// restore touch the state directory; nothing in the workspace is touched before this succeeds.
func (s *Store) loadTarget(id string) (*target, error) {
	meta, err := s.readCheckpoint(id)
	if err != nil {
		return nil, err
	}
	entries, err := s.readManifest(meta.Manifest)
	if err != nil {
		return nil, err
	}
	if err := s.checkStateDir(entries); err != nil {
		return nil, err
	}
	t := &target{meta: meta, entries: entries}
	if t.ignore, err = s.ignoreOf(entries); err != nil {
		return nil, err
	}
	return t, nil
}

// checkStateDir refuses entries inside the state directory, or a non-directory on its way.
func (s *Store) checkStateDir(entries []Entry) error {
	for _, sr := range s.stateRel {
		for i := range entries {
			p := entries[i].Path
			if p == sr || strings.HasPrefix(p, sr+"/") {
				return &ManifestError{Entry: i, Path: p, Reason: fmt.Sprintf("inside the state directory %s, which a restore never touches", sr)}
			}
			if strings.HasPrefix(sr, p+"/") && entries[i].Type != TypeDir {
				return &ManifestError{Entry: i, Path: p, Reason: fmt.Sprintf("a %s on the way to the state directory %s", entries[i].Type, sr)}
			}
		}
	}
	return nil
}

// ignoreOf returns the .rewindignore rules stored in a manifest, or nil.
func (s *Store) ignoreOf(entries []Entry) (*Ignore, error) {
	for i := range entries {
		if entries[i].Path == IgnoreFile && entries[i].Type == TypeFile {
			r, err := s.objects.open(entries[i].Blob)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			b, err := io.ReadAll(io.LimitReader(r, 1<<20))
			if err != nil {
				return nil, err
			}
			return ParseIgnore(b), nil
		}
	}
	return nil, nil
}

// plan is what a restore will do.
type plan struct {
	changes []Change // to apply, sorted by path
	kept    []Kept
}

// planRestore compares the live entries with the target's and drops what must not be touched:
// paths excluded by any of the rules, paths the target did not capture (TypeSkipped), and special
// files that the target does not replace.
func planRestore(live, want []Entry, r rules) plan {
	var p plan
	for _, c := range diffEntries(live, want) {
		switch {
		case c.To != nil && c.To.Type == TypeSkipped:
			p.kept = append(p.kept, Kept{c.Path, "not captured by the target checkpoint (" + c.To.Reason + "); left as it is"})
		case c.To == nil && c.From.Type == TypeSkipped:
			p.kept = append(p.kept, Kept{c.Path, c.From.Reason + ": never deleted by a restore"})
		case len(r) > 0 && c.To != nil && r.excluded(c.Path, c.To.Type == TypeDir):
			p.kept = append(p.kept, Kept{c.Path, "excluded by " + IgnoreFile + "; not restored"})
		case len(r) > 0 && c.From != nil && r.excluded(c.Path, c.From.Type == TypeDir):
			p.kept = append(p.kept, Kept{c.Path, "excluded by " + IgnoreFile + "; not touched"})
		default:
			p.changes = append(p.changes, c)
		}
	}
	return p
}

// tmpPrefix starts the names of a restore's temporary files in the workspace; a crash can leave
// one, which the recovery's restore deletes like any path the target does not have.
const tmpPrefix = ".rewind-tmp-"

// applier carries out a plan inside an os.Root, which guarantees that no operation leaves the
// workspace whatever the file system holds; on top of that every parent directory is checked
// with lstat to be a real directory, and final components are never followed, so nothing is
// written through a symlink.
type applier struct {
	s        *Store
	root     *os.Root
	mu       sync.Mutex      // guards the maps and kept: files are written in parallel
	verified map[string]bool // directories checked to be real directories
	touched  map[string]bool // paths written or chmodded (their stat changed)
	kept     []Kept
	done     *atomic.Int64
}

// apply carries out p. It returns the paths it changed and what it had to leave alone.
func (s *Store) apply(ctx context.Context, p *plan, want []Entry) (touched map[string]bool, kept []Kept, err error) {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	var done atomic.Int64
	stop := s.progress("restore", func() Progress { return Progress{Done: done.Load(), Total: int64(len(p.changes))} })
	defer stop()
	a := &applier{s: s, root: root, verified: map[string]bool{}, touched: map[string]bool{}, done: &done}
	// 1. Remove, deepest first: what the target does not have, and what changes type.
	for i := len(p.changes) - 1; i >= 0; i-- {
		c := &p.changes[i]
		if c.From == nil || (c.Kind != ChangeDeleted && c.Kind != ChangeType) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := a.remove(c); err != nil {
			return nil, nil, err
		}
		if c.Kind == ChangeDeleted {
			done.Add(1)
		}
	}
	// 2. Directories, parents first; they stay writable (0700) until step 4.
	var dirModes []*Entry
	for i := range p.changes {
		c := &p.changes[i]
		if c.To == nil || c.To.Type != TypeDir {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := a.put(c); err != nil {
			return nil, nil, err
		}
		dirModes = append(dirModes, c.To)
		done.Add(1)
	}
	// 3. Files and symlinks: their parents exist now, so they are independent and written in
	// parallel (a rewind across an npm install rewrites tens of thousands).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Parallelism)
	for i := range p.changes {
		c := &p.changes[i]
		if c.To == nil || c.To.Type == TypeDir {
			continue
		}
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := a.put(c)
			done.Add(1)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// 4. Directory modes, deepest first, so a read-only directory is filled before it is locked.
	for i := len(dirModes) - 1; i >= 0; i-- {
		e := dirModes[i]
		if err := a.checkParents(e.Path); err != nil {
			return nil, nil, err
		}
		fi, err := root.Lstat(e.Path)
		if err != nil || !fi.IsDir() {
			return nil, nil, fmt.Errorf("%w: %s is no longer a directory", ErrUnsafePath, a.full(e.Path))
		}
		if err := root.Chmod(e.Path, fileMode(e.Mode)); err != nil {
			return nil, nil, err
		}
		a.touch(e.Path)
	}
	return a.touched, a.kept, nil
}

func (a *applier) full(p string) string { return filepath.Join(a.s.root, p) }

// checkParents verifies that every parent directory of p is a real directory (not a symlink).
func (a *applier) checkParents(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		a.mu.Lock()
		ok := a.verified[d]
		a.mu.Unlock()
		if ok {
			continue
		}
		fi, err := a.root.Lstat(d)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsafePath, a.full(d), err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is a %s, not a directory; nothing is written through it (move it away and retry)", ErrUnsafePath, a.full(d), describeMode(fi.Mode()))
		}
		a.mu.Lock()
		a.verified[d] = true
		a.mu.Unlock()
	}
	return nil
}

func (a *applier) touch(p string) {
	a.mu.Lock()
	a.touched[p] = true
	a.mu.Unlock()
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}

// remove deletes the live entry of c. A directory that still holds paths the restore does not
// touch (excluded or special files) is kept, unless the target needs its name for something else.
func (a *applier) remove(c *Change) error {
	if err := a.checkParents(c.Path); err != nil {
		return err
	}
	fi, err := a.root.Lstat(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = a.root.Remove(c.Path) // unlink or rmdir: never follows a symlink
	if fi.IsDir() {
		a.mu.Lock()
		for d := range a.verified {
			if d == c.Path || strings.HasPrefix(d, c.Path+"/") {
				delete(a.verified, d)
			}
		}
		a.mu.Unlock()
	}
	if err != nil && fi.IsDir() && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)) {
		if c.Kind == ChangeType {
			return fmt.Errorf("cannot restore %s as a %s: the directory there holds paths a restore never touches (excluded or special files); move them away and run the command again", a.full(c.Path), c.To.Type)
		}
		a.mu.Lock()
		a.kept = append(a.kept, Kept{c.Path, "directory holds excluded or uncaptured paths; kept"})
		a.mu.Unlock()
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", a.full(c.Path), err)
	}
	a.touch(c.Path)
	return nil
}

// put makes the live path of c equal c.To.
func (a *applier) put(c *Change) error {
	e := c.To
	if err := a.checkParents(e.Path); err != nil {
		return err
	}
	switch e.Type {
	case TypeDir:
		if c.Kind == ChangeMode {
			return nil // step 4 sets it
		}
		err := a.root.Mkdir(e.Path, 0o700)
		if errors.Is(err, fs.ErrExist) {
			if fi, lerr := a.root.Lstat(e.Path); lerr == nil && fi.IsDir() {
				err = nil // a directory kept in step 1 (it holds excluded paths)
			}
		}
		if err != nil {
			return fmt.Errorf("create directory %s: %w", a.full(e.Path), err)
		}
	case TypeFile:
		if c.Kind == ChangeMode {
			fi, err := a.root.Lstat(e.Path)
			if err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("%w: %s is no longer a regular file", ErrUnsafePath, a.full(e.Path))
			}
			if err := a.root.Chmod(e.Path, fileMode(e.Mode)); err != nil {
				return err
			}
		} else if err := a.writeFile(e); err != nil {
			return err
		}
	case TypeSymlink:
		tmp := tempSibling(e.Path)
		if err := a.root.Symlink(e.Target, tmp); err != nil {
			return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
		}
		if err := a.root.Rename(tmp, e.Path); err != nil {
			a.root.Remove(tmp)
			return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
		}
	default:
		return nil
	}
	a.touch(e.Path)
	return nil
}

// writeFile writes e's content to a temporary file beside it, sets its mode and renames it over
// the path: a reader sees the old file or the new one, never a mix. The content is verified
// against its hash while copied; a damaged object fails before the rename.
func (a *applier) writeFile(e *Entry) error {
	src, err := a.s.objects.open(e.Blob)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := tempSibling(e.Path)
	f, err := a.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", a.full(e.Path), err)
	}
	bp := bufPool.Get().(*[]byte)
	_, err = io.CopyBuffer(f, src, *bp)
	bufPool.Put(bp)
	if err == nil {
		err = f.Chmod(fileMode(e.Mode))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.root.Rename(tmp, e.Path)
	}
	if err != nil {
		a.root.Remove(tmp)
		return fmt.Errorf("write %s: %w", a.full(e.Path), err)
	}
	return nil
}

func tempSibling(p string) string {
	return filepath.Join(filepath.Dir(p), tmpPrefix+randomHex(8))
}

// fileMode converts stored permission bits (07777) to an os.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// refreshIndex rebuilds the stat cache after a restore: the target's files, with the stat seen in
// the live capture for files left alone and a fresh lstat for files the restore wrote. A target
// file the restore left alone (excluded) is cached only if the live file has its content.
func (s *Store) refreshIndex(live []liveEntry, want []Entry, touched map[string]bool) error {
	var out []indexEntry
	j := 0
	for i := range want {
		t := &want[i]
		if t.Type != TypeFile {
			continue
		}
		for j < len(live) && live[j].Path < t.Path {
			j++
		}
		if touched[t.Path] {
			st, err := lstatPath(filepath.Join(s.root, t.Path))
			if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == t.Size {
				out = append(out, indexEntry{Path: t.Path, St: st, Blob: t.Blob})
			}
			continue
		}
		if j < len(live) && live[j].Path == t.Path && live[j].Type == TypeFile && live[j].Blob == t.Blob {
			out = append(out, indexEntry{Path: t.Path, St: live[j].St, Blob: t.Blob})
		}
	}
	return s.saveIndex(out)
}
