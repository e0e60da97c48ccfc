package walk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// LiveEntry is a path of the live workspace: its manifest entry (Blob filled in once known) and
// the lstat it was seen with.
type LiveEntry struct {
	manifest.Entry
	St     platform.Stat
	Cached bool // a file whose Blob the stat cache vouched for (not read, but maybe sampled)
}

// Scan is the result of walking the live workspace.
type Scan struct {
	Entries       []LiveEntry // sorted by path
	Excluded      []string    // excluded paths (an excluded directory counts once), sorted, capped
	ExcludedCount int
}

// MaxReported caps the excluded paths listed in a result; the count is always exact.
const MaxReported = 100

// Walker walks the workspace with a fixed set of workers. Each worker goes depth-first through
// its own stack of directories and hands work to the shared stack only when another worker is
// idle: a no-change checkpoint is a stat walk, and a goroutine per directory (the walk's first
// form) spent more time in the scheduler (wakeups, runqueue steals that sleep) than in lstat.
type Walker struct {
	root     string
	stateRel []string // the state directory relative to root (see Store.stateRel)
	ignore   Matcher  // exclusion rules
	ctx      context.Context
	seen     *atomic.Int64

	mu       sync.Mutex
	wake     sync.Cond
	shared   []string            // directories waiting for any worker
	pending  int                 // directories found and not yet read, in every stack
	idle     int                 // workers waiting on wake
	err      error               // the first error; it stops every worker
	dirs     map[string]*dirList // directory (relative, "" for the root) -> its entries
	Excluded []string            // excluded paths found, in no order (an excluded directory counts once)
	NExcl    int                 // how many
}

// Matcher decides exclusion; *Ignore implements it, and unions of rules are built for restores.
type Matcher interface {
	Match(path string, isDir bool) bool
}

// Walk lists every path under root that is neither the state directory nor excluded.
func Walk(ctx context.Context, root string, stateRel []string, ign Matcher, par int, seen *atomic.Int64) (*Scan, error) {
	w := NewWalker(ctx, root, stateRel, ign, seen)
	if err := w.Run([]string{""}, par); err != nil {
		return nil, err
	}
	entries := w.Emit("", make([]LiveEntry, 0, seen.Load()))
	slices.Sort(w.Excluded)
	if len(w.Excluded) > MaxReported {
		w.Excluded = w.Excluded[:MaxReported]
	}
	return &Scan{Entries: entries, Excluded: w.Excluded, ExcludedCount: w.NExcl}, nil
}

// NewWalker returns a walker of the tree at root.
func NewWalker(ctx context.Context, root string, stateRel []string, ign Matcher, seen *atomic.Int64) *Walker {
	w := &Walker{root: root, stateRel: stateRel, ignore: ign, ctx: ctx, seen: seen, dirs: map[string]*dirList{}}
	w.wake.L = &w.mu
	return w
}

// Run reads the directories starts (relative; "" is the root) and everything below them, with
// par workers, and returns the first error.
func (w *Walker) Run(starts []string, par int) error {
	if len(starts) == 0 {
		return nil
	}
	w.shared, w.pending = slices.Clone(starts), len(starts)
	var wg sync.WaitGroup
	for range max(par, 1) - 1 {
		wg.Go(w.work)
	}
	w.work()
	wg.Wait()
	return w.err
}

// work reads directories until every directory is read or one failed.
func (w *Walker) work() {
	var local []string
	for {
		if len(local) == 0 {
			w.mu.Lock()
			for len(w.shared) == 0 && w.pending > 0 && w.err == nil {
				w.idle++
				w.wake.Wait()
				w.idle--
			}
			if w.pending == 0 || w.err != nil {
				w.mu.Unlock()
				w.wake.Broadcast()
				return
			}
			local = append(local, w.shared[len(w.shared)-1])
			w.shared = w.shared[:len(w.shared)-1]
			w.mu.Unlock()
		}
		rel := local[len(local)-1]
		local = local[:len(local)-1]
		subdirs, err := w.dir(rel)
		local = append(local, subdirs...)
		w.mu.Lock()
		w.pending += len(subdirs) - 1
		if err != nil && w.err == nil {
			w.err = err
		}
		// Give half of the local stack (its oldest, usually the largest subtrees) to idle workers.
		if w.idle > 0 && len(local) > 1 {
			n := len(local) / 2
			w.shared = append(w.shared, local[:n]...)
			local = append(local[:0], local[n:]...)
			w.wake.Broadcast()
		}
		done := w.pending == 0 || w.err != nil
		w.mu.Unlock()
		if done {
			w.wake.Broadcast()
			return
		}
	}
}

// dirList is one directory's entries as the walk found them, in name order: paths and lstats
// side by side, and the few symlinks' targets apart. It holds no pointer but the paths (which
// the listing allocated already), so the collector has little to scan, and each liveEntry (144
// bytes) is built once, in emit's output, not once per directory and copied again.
type dirList struct {
	paths []string
	st    []platform.Stat
	links []dirLink // in the order of their entries
}

// dirLink is the target of the symlink paths[i]; "" for one not captured (see dir).
type dirLink struct {
	i      int
	target string
}

// entry returns the manifest entry of d's i-th path; link is its target when it is a symlink.
func (d *dirList) entry(i int, link string) LiveEntry {
	st := d.st[i]
	e := LiveEntry{Entry: manifest.Entry{Path: d.paths[i], Mode: st.Mode & 0o7777}, St: st}
	switch typ := st.Mode & syscall.S_IFMT; typ {
	case syscall.S_IFREG:
		e.Type = manifest.TypeFile
		e.Size = st.Size
	case syscall.S_IFDIR:
		e.Type = manifest.TypeDir
	case syscall.S_IFLNK:
		if link == "" {
			e.Type, e.Mode, e.Reason = manifest.TypeSkipped, 0, "symlink target empty or too long"
			break
		}
		e.Type = manifest.TypeSymlink
		e.Target = link
		e.Size = int64(len(link))
	default:
		e.Type, e.Mode, e.Reason = manifest.TypeSkipped, 0, SpecialKind(typ)
	}
	return e
}

// Emit appends the entries under directory rel to out in byte order of their full paths, without
// sorting: a directory's entries are in name order (see dir), and everything under a
// subdirectory sorts by its name followed by "/". So a subdirectory's entries come after its
// siblings whose names extend its own with a byte below '/' ("a-b", "a.txt" before "a/…") and
// before any other later sibling: they wait on a stack, whose top always sorts first (a later
// name that extends an earlier one with a byte below '/' sorts before it once both end in "/").
func (w *Walker) Emit(rel string, out []LiveEntry) []LiveEntry {
	d := w.dirs[rel]
	if d == nil {
		return out
	}
	skip := len(rel) + 1
	if rel == "" {
		skip = 0
	}
	var stack [8]int
	pending := stack[:0]
	links := d.links
	for i, p := range d.paths {
		name := p[skip:]
		for len(pending) > 0 {
			top := d.paths[pending[len(pending)-1]][skip:]
			if len(name) > len(top) && name[:len(top)] == top && name[len(top)] < '/' {
				break // name sorts before top + "/"
			}
			out = w.Emit(d.paths[pending[len(pending)-1]], out)
			pending = pending[:len(pending)-1]
		}
		link := ""
		if len(links) > 0 && links[0].i == i {
			link, links = links[0].target, links[1:]
		}
		out = append(out, d.entry(i, link))
		if d.st[i].Mode&syscall.S_IFMT == syscall.S_IFDIR {
			if _, ok := w.dirs[p]; ok {
				pending = append(pending, i)
			}
		}
	}
	for len(pending) > 0 {
		out = w.Emit(d.paths[pending[len(pending)-1]], out)
		pending = pending[:len(pending)-1]
	}
	return out
}

// dir reads the directory rel and records its entries; it returns its subdirectories to walk.
func (w *Walker) dir(rel string) ([]string, error) {
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	full := w.root
	if rel != "" {
		full = w.root + "/" + rel // both clean: no filepath.Join, whose Clean costs more than a join
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	fd, paths, err := platform.OpenDir(full, prefix)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil // removed or replaced while we walked: it is simply not there now
		}
		return nil, fmt.Errorf("read directory %s: %w (%s)", ShortPath(full), err, ReadAdvice(err))
	}
	defer platform.CloseDir(fd)
	// In name order (they share the prefix): emit relies on it.
	slices.Sort(paths)
	// The kept entries move down in place: paths is this directory's own slice.
	d := &dirList{paths: paths[:0], st: make([]platform.Stat, 0, len(paths))}
	var subdirs []string
	var excl []string
	for _, p := range paths {
		name := p[len(prefix):]
		if len(w.stateRel) > 0 && slices.Contains(w.stateRel, p) {
			continue
		}
		st, err := platform.LstatAt(fd, full, name)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				continue
			}
			return nil, fmt.Errorf("stat %s: %w", filepath.Join(full, name), err)
		}
		typ := st.Mode & syscall.S_IFMT
		if w.ignore.Match(p, typ == syscall.S_IFDIR) {
			excl = append(excl, p)
			continue
		}
		switch typ {
		case syscall.S_IFDIR:
			subdirs = append(subdirs, p)
		case syscall.S_IFLNK:
			t, err := platform.ReadlinkAt(fd, full, name)
			if err != nil {
				if errors.Is(err, syscall.ENOENT) {
					continue
				}
				return nil, fmt.Errorf("read symlink %s: %w", filepath.Join(full, name), err)
			}
			if len(t) > manifest.MaxPathLen {
				t = "" // not captured (dirList.entry)
			}
			d.links = append(d.links, dirLink{len(d.paths), t})
		}
		if len(p) > manifest.MaxPathLen { // a listed name holds no NUL byte (see platform.OpenDir)
			return nil, fmt.Errorf("path %q cannot be captured (%d bytes, longer than %d, or holding a NUL byte); list it, or a folder above it, in %s", ShortPath(p), len(p), manifest.MaxPathLen, IgnoreFile)
		}
		d.paths = append(d.paths, p)
		d.st = append(d.st, st)
	}
	w.seen.Add(int64(len(d.paths)))
	w.mu.Lock()
	w.dirs[rel] = d
	w.Excluded = append(w.Excluded, excl...)
	w.NExcl += len(excl)
	w.mu.Unlock()
	return subdirs, nil
}

// SpecialKind names the kind of a path that is neither file, directory nor symlink (st_mode&S_IFMT
// typ): the reason a skipped entry gives.
func SpecialKind(typ uint32) string {
	switch typ {
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFIFO:
		return "fifo"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "device"
	}
	return "unknown file type"
}

// Exclude records p, found excluded by the caller outside the walk, as the walk records those
// it finds.
func (w *Walker) Exclude(p string) {
	w.mu.Lock()
	w.Excluded = append(w.Excluded, p)
	w.NExcl++
	w.mu.Unlock()
}
