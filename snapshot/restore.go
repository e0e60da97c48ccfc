package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// Kept is a path a restore left alone, and why.
type Kept struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Live is set on a path that was in use: not captured by the safety checkpoint (a socket, a
	// file that kept changing), or changed or created after it, during the restore. The restore
	// did not change it, so nothing of it was lost; the target's version of it was not restored.
	// Running the same restore again once nothing writes to it restores that version (the state
	// it has then is checkpointed first, like any other).
	Live bool `json:"live,omitempty"`
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
	// shared are the folders whose tree equals the live capture's (loadTargetLive), in the order
	// of their contents' paths: entries lists the folders but not what is in them, which is the
	// live workspace's, so a restore has nothing to do there.
	shared []string
}

// loadTarget reads everything a restore to id needs and refuses a manifest that could make the
// restore touch the state directory; nothing in the workspace is touched before this succeeds.
func (s *Store) loadTarget(id string) (*target, error) {
	return s.loadTargetLive(id, nil)
}

// loadTargetLive is loadTarget that neither reads nor lists the contents of the target's folders
// whose tree equals the live workspace's as the capture c encoded it (its safety checkpoint's):
// those are t.shared. A rewind of a few changes then reads, and compares, the trees of the
// changed folders and their ancestors, not the whole manifest. The folders in the state
// directory's way and the root's .rewindignore are always listed: a shared folder holds neither
// (the capture never lists the state directory).
func (s *Store) loadTargetLive(id string, c *capture) (*target, error) {
	meta, err := s.readCheckpoint(id)
	if err != nil {
		return nil, err
	}
	t := &target{meta: meta}
	var known manifest.KnownTree
	if c != nil && c.trees != nil {
		known = func(dir string, h Hash) ([]Entry, bool) {
			if got, ok := c.trees[dir]; !ok || got != h {
				return nil, false
			}
			t.shared = append(t.shared, dir)
			return nil, true
		}
	}
	entries, _, err := s.readManifestKnown(meta.Manifest, known)
	if err != nil {
		return nil, err
	}
	if err := s.checkStateDir(entries); err != nil {
		return nil, err
	}
	t.entries = entries
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
			r, err := s.objects.Open(entries[i].Blob)
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
// paths excluded by any of the rules, paths the target did not capture (TypeSkipped), paths
// whose live state was not captured (a live TypeSkipped: changing it would lose what nothing
// holds), and everything under a path kept for one of these reasons (a folder that holds a
// kept path is never removed nor replaced).
func planRestore(live, want []Entry, r rules) plan {
	var p plan
	kept := map[string]bool{} // kept paths -> whether kept because in use (Kept.Live)
	keep := func(c *Change, reason string, inUse bool) {
		p.kept = append(p.kept, Kept{Path: c.Path, Reason: reason, Live: inUse})
		kept[c.Path] = inUse
	}
	for _, c := range diffEntries(live, want) {
		if under, inUse, ok := keptAncestor(kept, c.Path); ok {
			keep(&c, "inside "+under+", which the restore left alone", inUse)
			continue
		}
		switch {
		case c.To != nil && c.To.Type == TypeSkipped:
			keep(&c, "not captured by the target checkpoint ("+c.To.Reason+"); left as it is", false)
		case c.To == nil && c.From.Type == TypeSkipped && c.From.Reason == reasonUnstable:
			keep(&c, c.From.Reason+": not captured by the safety checkpoint, so left as it is; the target does not have it", true)
		case c.To == nil && c.From.Type == TypeSkipped:
			keep(&c, c.From.Reason+": never deleted by a restore", false)
		case c.From != nil && c.From.Type == TypeSkipped:
			keep(&c, c.From.Reason+": not captured by the safety checkpoint, so left as it is; the target's "+c.To.Type.String()+" there was not restored", true)
		case len(r) > 0 && c.To != nil && r.excluded(c.Path, c.To.Type == TypeDir):
			keep(&c, "excluded by "+IgnoreFile+"; not restored", false)
		case len(r) > 0 && c.From != nil && r.excluded(c.Path, c.From.Type == TypeDir):
			keep(&c, "excluded by "+IgnoreFile+"; not touched", false)
		default:
			p.changes = append(p.changes, c)
		}
	}
	return p
}

// reasonUnstable is the skip reason of a file that kept changing while a checkpoint read it
// (hashEntry): a file in use, unlike a socket or FIFO, which no restore ever deletes.
const reasonUnstable = "changed while being read"

// keptAncestor returns the nearest ancestor of p in kept, and its Live flag.
func keptAncestor(kept map[string]bool, p string) (string, bool, bool) {
	if len(kept) == 0 {
		return "", false, false
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			if inUse, ok := kept[p[:i]]; ok {
				return p[:i], inUse, true
			}
		}
	}
	return "", false, false
}

// allEntries returns every entry of t: its own, with the shared folders' contents taken from the
// live capture c they equal.
func (s *Store) allEntries(t *target, c *capture) ([]Entry, error) {
	if len(t.shared) == 0 {
		return t.entries, nil
	}
	entries, _, err := s.readManifestKnown(t.meta.Manifest, c.liveSubtree)
	return entries, err
}

// entriesExcept returns the capture's entries but for the contents of the folders shared (as
// target.shared: in the order of their contents' paths), which a restore compares with nothing.
func (c *capture) entriesExcept(shared []string) []Entry {
	live := c.scan.Entries
	n := len(live)
	for _, d := range shared {
		lo, hi := c.contents(d)
		n -= hi - lo
	}
	out := make([]Entry, 0, n)
	i := 0
	for _, d := range shared {
		lo, hi := c.contents(d)
		for ; i < lo; i++ {
			out = append(out, live[i].Entry)
		}
		i = max(i, hi)
	}
	for ; i < len(live); i++ {
		out = append(out, live[i].Entry)
	}
	return out
}

// contents returns the range of the capture's entries under folder d.
func (c *capture) contents(d string) (lo, hi int) {
	live := c.scan.Entries
	at := func(p string) int {
		i, _ := slices.BinarySearchFunc(live, p, func(e walk.LiveEntry, p string) int { return strings.Compare(e.Path, p) })
		return i
	}
	return at(d + "/"), at(d + "0") // '0' follows '/': every path under d sorts between the two
}

// stat returns the stat the capture recorded for p.
func (c *capture) stat(p string) (platform.Stat, bool) {
	es := c.scan.Entries
	i, ok := slices.BinarySearchFunc(es, p, func(e walk.LiveEntry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return platform.Stat{}, false
	}
	return es[i].St, true
}

// tmpPrefix starts the names of a restore's temporary files in the workspace; a crash can leave
// one, which the recovery's restore deletes like any path the target does not have.
const tmpPrefix = ".rewind-tmp-"

// applier carries out a plan inside an os.Root, which guarantees that no operation leaves the
// workspace whatever the file system holds; on top of that every parent directory is checked
// with lstat to be a real directory, and final components are never followed, so nothing is
// written through a symlink.
//
// It changes only what the live capture saw: before it replaces or deletes a live path it checks
// that the path still has the stat that capture recorded (the safety checkpoint holds exactly
// that state), and before it creates a path that nothing occupied, that nothing occupies it now.
// A path that changed or appeared since (a log a dev server appends to, a file an agent's tool
// writes during the rewind) is left alone and reported, never overwritten: the safety checkpoint
// does not hold its present content. A small window remains between that check and the rename or
// unlink that follows it (microseconds), which no portable call closes.
type applier struct {
	s        *Store
	root     *os.Root
	seen     func(p string) (platform.Stat, bool) // the live capture's stat of p
	mu       sync.Mutex                           // guards the maps and kept: files are written in parallel
	verified map[string]bool                      // directories checked to be real directories
	touched  map[string]bool                      // paths written or chmodded (their stat changed)
	blocked  map[string]bool                      // paths left alone while applying: nothing under them is written
	kept     []Kept
	done     *atomic.Int64
}

// apply carries out p against the live state c. It returns the paths it changed and what it had
// to leave alone.
func (s *Store) apply(ctx context.Context, p *plan, c *capture) (touched map[string]bool, kept []Kept, err error) {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	var done atomic.Int64
	stop := s.progress("restore", func() Progress { return Progress{Done: done.Load(), Total: int64(len(p.changes))} })
	defer stop()
	if s.beforeApply != nil {
		s.beforeApply()
	}
	a := &applier{s: s, root: root, seen: c.stat, verified: map[string]bool{}, touched: map[string]bool{}, blocked: map[string]bool{}, done: &done}
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
		if !a.isBlocked(c.Path) {
			dirModes = append(dirModes, c.To)
		}
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
		if err := a.chmodDir(dirModes[i]); err != nil {
			return nil, nil, err
		}
	}
	return a.touched, a.kept, nil
}

func (a *applier) full(p string) string { return filepath.Join(a.s.root, p) }

// checkParents verifies that every parent directory of p is a real directory (not a symlink).
// Each is checked with one lstat of its full path, top down, so that every component above it is
// already known to be a directory (through the os.Root, each check would open every component
// again: 15 opens for a file five folders deep). The check does not write; what follows it goes
// through the os.Root, which no symlink put there since can lead out of the workspace.
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
		fi, err := os.Lstat(a.full(d))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsafePath, a.full(d), objects.Bare(err))
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

// leave records that p is left alone, and why; with block, nothing under p is written either.
func (a *applier) leave(p, reason string, inUse, block bool) {
	a.mu.Lock()
	a.kept = append(a.kept, Kept{Path: p, Reason: reason, Live: inUse})
	if block {
		a.blocked[p] = true
	}
	a.mu.Unlock()
}

// isBlocked reports whether p or one of its parents was left alone by leave(…, block).
func (a *applier) isBlocked(p string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.blocked) == 0 {
		return false
	}
	for i := len(p); i > 0; i-- {
		if (i == len(p) || p[i] == '/') && a.blocked[p[:i]] {
			return true
		}
	}
	return false
}

// Reasons for paths left alone while applying (Kept.Reason).
const (
	reasonChanged = "changed after the safety checkpoint captured it (in use during the restore?): left as it is, so nothing of it is lost; the target's version was not restored"
	reasonCreated = "created during the restore, after the safety checkpoint: left as it is, so nothing of it is lost; the target's version was not restored"
)

// unchanged reports whether the live path p still has the stat the live capture recorded (fi is
// its lstat now), so that replacing or deleting it loses nothing the safety checkpoint lacks.
// Directories are only checked to be directories: the restore itself changes their stat.
func (a *applier) unchanged(p string, fi fs.FileInfo) bool {
	was, ok := a.seen(p)
	if !ok {
		return false
	}
	if fi.IsDir() {
		return was.Mode&syscall.S_IFMT == syscall.S_IFDIR
	}
	st, ok := platform.FileInfoStat(fi)
	return ok && st == was
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

// remove deletes the live entry of c, if it is still what the live capture saw. A directory that
// still holds paths the restore does not touch (excluded, uncaptured, or created during the
// restore) is kept, and nothing replaces it.
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
	if !a.unchanged(c.Path, fi) {
		a.leave(c.Path, reasonChanged, true, true)
		return nil
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
			a.leave(c.Path, fmt.Sprintf("directory holds paths a restore never touches (excluded, not captured, or created during the restore): kept, and the target's %s there was not restored; move them away and run the restore again to get it", c.To.Type), false, true)
		} else {
			a.leave(c.Path, "directory holds excluded or uncaptured paths; kept", false, false)
		}
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", a.full(c.Path), err)
	}
	a.touch(c.Path)
	return nil
}

// vacant reports whether nothing occupies p, where the restore creates a path (an added one, or
// one whose live entry step 1 removed); something there appeared during the restore and is left
// alone.
func (a *applier) vacant(p string) (bool, error) {
	_, err := a.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	a.leave(p, reasonCreated, true, true)
	return false, nil
}

// replaceable reports whether the live p may be replaced by a rename: for a change of content or
// target, it must still be what the live capture saw; for a creation, nothing may be there.
func (a *applier) replaceable(c *Change) (bool, error) {
	if c.Kind != ChangeModified && c.Kind != ChangeMode {
		return a.vacant(c.Path)
	}
	fi, err := a.root.Lstat(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // deleted since: the target's version harms nothing
	}
	if err != nil {
		return false, err
	}
	if !a.unchanged(c.Path, fi) {
		a.leave(c.Path, reasonChanged, true, true)
		return false, nil
	}
	return true, nil
}

// put makes the live path of c equal c.To.
func (a *applier) put(c *Change) error {
	e := c.To
	if a.isBlocked(e.Path) {
		a.mu.Lock()
		reported := a.blocked[e.Path]
		a.mu.Unlock()
		if !reported {
			a.leave(e.Path, "inside a path the restore left alone; not restored", true, false)
		}
		return nil
	}
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
			} else if lerr == nil {
				a.leave(e.Path, reasonCreated, true, true)
				return nil
			}
		}
		if err != nil {
			return fmt.Errorf("create directory %s: %w", a.full(e.Path), err)
		}
	case TypeFile:
		if c.Kind == ChangeMode {
			if err := a.chmodFile(c); err != nil {
				return err
			}
		} else if err := a.writeFile(c); err != nil {
			return err
		}
	case TypeSymlink:
		tmp := tempSibling(e.Path)
		if err := a.root.Symlink(e.Target, tmp); err != nil {
			return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
		}
		ok, err := a.replaceable(c)
		if err == nil && ok {
			err = a.root.Rename(tmp, e.Path)
		}
		if err != nil || !ok {
			a.root.Remove(tmp)
		}
		if err != nil {
			return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
		}
		if !ok {
			return nil
		}
	default:
		return nil
	}
	if a.isBlocked(e.Path) {
		return nil // left alone after all (changed or created during the restore): not written
	}
	a.touch(e.Path)
	return nil
}

// chmodFile restores the mode of a file whose content is right. It changes the mode of the very
// inode it verified (fchmod on a descriptor opened without following symlinks, after checking
// the stat), and only when that inode has no other link: chmod through a hard link would change
// the other names too, which may lie outside the workspace (pnpm's store, a `cp -al` copy). A
// file with other links gets a new inode instead, as a content change does (writeFile).
func (a *applier) chmodFile(c *Change) error {
	f, err := a.root.OpenFile(c.Path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return a.writeFile(c) // deleted since: the target's file harms nothing
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			a.leave(c.Path, reasonChanged, true, true) // a symlink now
			return nil
		}
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	was, seen := a.seen(c.Path)
	if st, ok := platform.FileInfoStat(fi); !seen || !ok || st != was {
		a.leave(c.Path, reasonChanged, true, true)
		return nil
	}
	if platform.Links(fi) > 1 {
		f.Close()
		return a.writeFile(c)
	}
	if err := f.Chmod(fileMode(c.To.Mode)); err != nil {
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	return nil
}

// chmodDir sets a restored directory's mode (step 4), on a descriptor opened without following
// symlinks, so the mode lands on that directory and nothing else.
func (a *applier) chmodDir(e *Entry) error {
	if err := a.checkParents(e.Path); err != nil {
		return err
	}
	f, err := a.root.OpenFile(e.Path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("%w: %s is no longer a directory (%v)", ErrUnsafePath, a.full(e.Path), err)
	}
	defer f.Close()
	if err := f.Chmod(fileMode(e.Mode)); err != nil {
		return err
	}
	a.touch(e.Path)
	return nil
}

// writeFile writes c.To's content to a temporary file beside it, sets its mode and renames it
// over the path, which replaces the name, never the inode it named: a reader sees the old file
// or the new one, never a mix, and other hard links to the old file keep the old file. The
// content is verified against its hash while copied; a damaged object fails before the rename.
func (a *applier) writeFile(c *Change) error {
	e := c.To
	src, err := a.s.objects.Open(e.Blob)
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
	ok := false
	if err == nil {
		ok, err = a.replaceable(c)
	}
	if err == nil && ok {
		err = a.root.Rename(tmp, e.Path)
	}
	if err != nil || !ok {
		a.root.Remove(tmp)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", a.full(e.Path), err)
	}
	return nil
}

func tempSibling(p string) string {
	return filepath.Join(filepath.Dir(p), tmpPrefix+objects.RandomHex(8))
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

// refreshIndex brings the stat cache up to date after a restore. What the cache held before is
// still true of every path the restore did not touch (an entry is a fact about a stat, and those
// stats did not change), so it only appends one record to the cache's log (statcache/log.go): the
// files the restore wrote, with a fresh lstat and the target's content, and the removal of every
// other path it touched and of the cached trees of the directories above them. It rebuilds the
// whole cache instead when there is no index to add to, when the log is due to be folded, or when
// the restore changed the exclusion rules (which the cached trees were made under).
func (s *Store) refreshIndex(c *capture, t *target, touched map[string]bool) error {
	if len(touched) == 0 {
		return nil
	}
	name := filepath.Join(s.state, "index")
	tail, why := openCache(name)
	if why != "" || touched[IgnoreFile] {
		return s.rebuildIndex(c, t, touched)
	}
	changed := map[string]bool{} // touched paths and every directory above one
	for p := range touched {
		markUp(changed, p)
	}
	var set []statcache.Entry
	var removed []string
	for p := range changed {
		if touched[p] {
			if e := findEntry(t.entries, p); e != nil && e.Type == TypeFile { // a touched path is listed
				st, err := platform.Lstat(filepath.Join(s.root, p))
				if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == e.Size {
					set = append(set, statcache.Entry{Path: p, St: st, Blob: e.Blob})
					continue
				}
			}
		}
		removed = append(removed, p)
	}
	statcache.Sort(set)
	slices.Sort(removed)
	body := statcache.EncodeLogRecord(set, removed)
	if tail.logSize+int64(len(body)) > max(tail.size/4, 64<<10) {
		return s.rebuildIndex(c, t, touched)
	}
	if err := statcache.AppendLog(name, tail.base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// findEntry returns the entry of path p in entries (sorted by path), or nil.
func findEntry(entries []Entry, p string) *Entry {
	i, ok := slices.BinarySearchFunc(entries, p, func(e Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil
	}
	return &entries[i]
}

// rebuildIndex writes a new stat cache after a restore: the target's files, with the stat seen in
// the live capture c for files left alone and a fresh lstat for files the restore wrote. A target
// file the restore left alone (excluded) is cached only if the live file has its content. The
// trees c encoded (a safety checkpoint's) stay cached for the directories under which the restore
// touched nothing: their stat and content are what c saw (treecache.go).
func (s *Store) rebuildIndex(c *capture, t *target, touched map[string]bool) error {
	want, err := s.allEntries(t, c)
	if err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	live := c.scan.Entries
	changed := map[string]bool{} // touched paths and every directory above one
	for p := range touched {
		markUp(changed, p)
	}
	rules := c.rules
	keepTrees := c.trees != nil && c.rulesOK && c.rootSt.Mode != 0 && !changed[IgnoreFile]
	if !keepTrees {
		rules = Hash{}
	}
	var out []statcache.Entry
	if h, ok := c.trees[""]; ok && keepTrees && !changed[""] && c.rootSt.Mode != 0 {
		out = append(out, statcache.Entry{Path: "", St: c.rootSt, Blob: h})
	}
	j := 0
	for i := range want {
		w := &want[i]
		for j < len(live) && live[j].Path < w.Path {
			j++
		}
		lv := (*walk.LiveEntry)(nil)
		if j < len(live) && live[j].Path == w.Path {
			lv = &live[j]
		}
		switch w.Type {
		case TypeDir:
			if h, ok := c.trees[w.Path]; ok && keepTrees && !changed[w.Path] && lv != nil && lv.Type == TypeDir && lv.St.Mode != 0 {
				out = append(out, statcache.Entry{Path: w.Path, St: lv.St, Blob: h})
			}
		case TypeFile:
			if touched[w.Path] {
				st, err := platform.Lstat(filepath.Join(s.root, w.Path))
				if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == w.Size {
					out = append(out, statcache.Entry{Path: w.Path, St: st, Blob: w.Blob})
				}
				continue
			}
			if lv != nil && lv.Type == TypeFile && lv.Blob == w.Blob {
				out = append(out, statcache.Entry{Path: w.Path, St: lv.St, Blob: w.Blob})
			}
		}
	}
	return s.saveIndex(out, rules)
}
