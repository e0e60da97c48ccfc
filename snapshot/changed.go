package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// Changed is a change watcher's promise: since checkpoint Since was captured, nothing in the
// workspace changed but Paths and what lies under them. A checkpoint given it (CheckpointChanged)
// starts from Since's manifest and the stat cache and looks only at those paths, instead of
// walking the whole tree. The promise must cover changes made while Since was being captured:
// the watcher's position must be taken before that capture began.
type Changed struct {
	Since string   // a checkpoint id; the hint is used only while it is the current position
	Paths []string // slash-separated, relative to the root, any order; a directory covers its subtree

	// Why some paths are named whatever changed, which the checkpoint reports (Walk):
	Mounts []string // mount points below the root among Paths: the watcher cannot see into them
	Linked int      // how many of Paths name a file with more than one name (one name changed)
}

// Walk says how a checkpoint found the workspace's paths.
type Walk struct {
	Mode   string   `json:"mode"`             // "full" (every directory read) or "changed" (only Changed.Paths)
	Paths  int      `json:"paths,omitempty"`  // with "changed": how many paths the hint named
	Mounts []string `json:"mounts,omitempty"` // with "changed": the mount points among them, read whole at every checkpoint
	Linked int      `json:"linked,omitempty"` // with "changed": how many of them name a file with more than one name
	Reason string   `json:"reason,omitempty"` // with "full": why no hint was used, when one was offered or expected
}

// walk is how a checkpoint that used h found its paths.
func (h *Changed) walk() Walk {
	return Walk{Mode: "changed", Paths: len(h.Paths), Mounts: h.Mounts, Linked: h.Linked}
}

// maxChanged caps the paths a hint may name: past it a full walk costs about the same.
const maxChanged = 10000

// scanChanged is walk narrowed by a hint: Since's entries, minus every changed path and its
// subtree, plus what each changed path holds now (its whole subtree read again for a directory).
// Files keep their stat from the stat cache, so the capture's cache pass treats them as a walk's.
// It returns a nil scan and the reason when the hint cannot be trusted: the caller walks.
func (s *Store) scanChanged(ctx context.Context, ign walk.Matcher, h *Changed, idx *statcache.Index, seen *atomic.Int64) (*walk.Scan, string, error) {
	if len(h.Paths) > maxChanged {
		return nil, fmt.Sprintf("%d changed paths, more than %d", len(h.Paths), maxChanged), nil
	}
	base, why, err := s.hintBase(h)
	if base == nil {
		return nil, why, err
	}
	top, why := outermost(h)
	if why != "" {
		return nil, why, nil
	}
	out, dirs := keptEntries(base, top)
	kept := len(out)
	w := walk.NewWalker(ctx, s.root, s.stateRel, ign, seen)
	out, err = s.readChanged(w, ign, top, dirs, out)
	if err != nil {
		return nil, "", err
	}
	out = mergeRead(out, kept)
	if why, err := s.statsFromCache(out, idx); why != "" || err != nil {
		return nil, why, err
	}
	seen.Store(int64(len(out)))
	slices.Sort(w.Excluded)
	return &walk.Scan{Entries: out, Excluded: w.Excluded, ExcludedCount: w.NExcl}, "", nil
}

// mergeRead sorts es by path, whose first n entries (the position's, kept) are sorted already
// and the rest (what the changed paths hold now) usually few: those are sorted and merged in,
// rather than all sorted again (a sort of every entry was a tenth of the CPU of a rewind's
// hinted safety checkpoint at 2,000 files).
func mergeRead(es []walk.LiveEntry, n int) []walk.LiveEntry {
	read := es[n:]
	slices.SortFunc(read, func(a, b walk.LiveEntry) int { return strings.Compare(a.Path, b.Path) })
	if n == 0 || len(read) == 0 || es[n-1].Path < read[0].Path {
		return es
	}
	out := make([]walk.LiveEntry, 0, len(es))
	i, j := 0, n
	for i < n && j < len(es) {
		if es[i].Path < es[j].Path {
			out = append(out, es[i])
			i++
		} else {
			out = append(out, es[j])
			j++
		}
	}
	out = append(out, es[i:n]...)
	return append(out, es[j:]...)
}

// hintBase returns the manifest of the checkpoint h is relative to, or nil and why when that is
// not the current position.
func (s *Store) hintBase(h *Changed) (base []Entry, why string, err error) {
	pos, err := s.readPosition()
	if err != nil {
		return nil, "", err
	}
	if pos.Current == "" || pos.Current != h.Since {
		return nil, fmt.Sprintf("the hint is relative to checkpoint %q, the current position is %q", h.Since, pos.Current), nil
	}
	cp, err := s.readCheckpoint(pos.Current)
	if err != nil {
		return nil, "", err
	}
	base, err = s.readManifest(cp.Manifest)
	if err != nil {
		return nil, "", err
	}
	return base, "", nil
}

// keptEntries returns base's entries that are neither a changed path (top, sorted) nor under
// one, and the directories among them.
func keptEntries(base []Entry, top []string) ([]walk.LiveEntry, map[string]bool) {
	under := func(p string) bool { // p is a changed path or lies under one
		if _, ok := slices.BinarySearch(top, p); ok {
			return true
		}
		for a := path.Dir(p); a != "."; a = path.Dir(a) {
			if _, ok := slices.BinarySearch(top, a); ok {
				return true
			}
		}
		return false
	}
	out := make([]walk.LiveEntry, 0, len(base)+len(top))
	dirs := map[string]bool{}
	for i := range base {
		if under(base[i].Path) {
			continue
		}
		out = append(out, walk.LiveEntry{Entry: base[i]})
		if base[i].Type == TypeDir {
			dirs[base[i].Path] = true
		}
	}
	return out, dirs
}

// readChanged appends to out what each changed path holds now (nothing for one gone, excluded,
// or whose directory is not among dirs), a directory's whole subtree read again by w.
func (s *Store) readChanged(w *walk.Walker, ign walk.Matcher, top []string, dirs map[string]bool, out []walk.LiveEntry) ([]walk.LiveEntry, error) {
	var walked []string
	for _, p := range top {
		if slices.Contains(s.stateRel, p) || excludedAncestor(ign, p) {
			continue
		}
		if d := path.Dir(p); d != "." && !dirs[d] {
			continue // its directory is gone, excluded, or not a directory: the path is not there
		}
		e, ok, err := s.entryAt(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if ign.Match(p, e.Type == TypeDir) {
			w.Exclude(p)
			continue
		}
		out = append(out, e)
		if e.Type == TypeDir {
			walked = append(walked, p)
		}
	}
	if err := w.Run(walked, s.opts.Parallelism); err != nil {
		return nil, err
	}
	for _, p := range walked {
		out = w.Emit(p, out)
	}
	return out, nil
}

// statsFromCache gives the unchanged files of out (sorted) their stat from the stat cache; one
// the cache does not vouch for with the manifest's content is looked at again, and why names
// one that changed without the watcher seeing it (the hint is then not trusted).
func (s *Store) statsFromCache(out []walk.LiveEntry, idx *statcache.Index) (why string, err error) {
	j := 0
	for i := range out {
		e := &out[i]
		if e.Type != TypeFile || e.St != (platform.Stat{}) {
			continue
		}
		for j < len(idx.Entries) && idx.Entries[j].Path < e.Path {
			j++
		}
		if j < len(idx.Entries) && idx.Entries[j].Path == e.Path && idx.Entries[j].Blob == e.Blob {
			e.St = idx.Entries[j].St
			continue
		}
		now, ok, err := s.entryAt(e.Path)
		if err != nil {
			return "", err
		}
		if !ok || now.Type != TypeFile {
			return fmt.Sprintf("%s changed without the watcher seeing it", e.Path), nil
		}
		*e = now
	}
	return "", nil
}

// outermost returns the hint's paths, sorted, without those under another (a changed directory
// is read again whole), or why the hint cannot be used.
func outermost(h *Changed) (top []string, why string) {
	paths := slices.Clone(h.Paths)
	for _, p := range paths {
		if p == "" || p == "." || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
			return nil, fmt.Sprintf("changed path %q is the root or not a clean relative path", p)
		}
		if p == IgnoreFile {
			return nil, IgnoreFile + " changed"
		}
	}
	slices.Sort(paths)
	top = paths[:0]
	for _, p := range paths {
		if n := len(top); n > 0 && (p == top[n-1] || strings.HasPrefix(p, top[n-1]+"/")) {
			continue
		}
		top = append(top, p)
	}
	return top, ""
}

// excludedAncestor reports whether a directory above p is excluded (a walk never enters it).
func excludedAncestor(ign walk.Matcher, p string) bool {
	for a := path.Dir(p); a != "."; a = path.Dir(a) {
		if ign.Match(a, true) {
			return true
		}
	}
	return false
}

// entryAt is what a walk records for path p (see walker.dir), and false if p is not there.
func (s *Store) entryAt(p string) (walk.LiveEntry, bool, error) {
	full := filepath.Join(s.root, filepath.FromSlash(p))
	st, err := platform.Lstat(full)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return walk.LiveEntry{}, false, nil
		}
		return walk.LiveEntry{}, false, fmt.Errorf("stat %s: %w", full, err)
	}
	if strings.IndexByte(p, 0) >= 0 || len(p) > manifest.MaxPathLen {
		return walk.LiveEntry{}, false, fmt.Errorf("path %q cannot be captured (longer than %d bytes); list it in %s", p, manifest.MaxPathLen, IgnoreFile)
	}
	e := walk.LiveEntry{Entry: Entry{Path: p, Mode: st.Mode & 0o7777}, St: st}
	switch typ := st.Mode & syscall.S_IFMT; typ {
	case syscall.S_IFREG:
		e.Type, e.Size = TypeFile, st.Size
	case syscall.S_IFDIR:
		e.Type = TypeDir
	case syscall.S_IFLNK:
		t, err := os.Readlink(full)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EINVAL) {
				return walk.LiveEntry{}, false, nil
			}
			return walk.LiveEntry{}, false, fmt.Errorf("read symlink %s: %w", full, err)
		}
		if t == "" || len(t) > manifest.MaxPathLen {
			e.Type, e.Mode, e.Reason = TypeSkipped, 0, "symlink target empty or too long"
			break
		}
		e.Type, e.Target, e.Size = TypeSymlink, t, int64(len(t))
	default:
		e.Type, e.Mode, e.Reason = TypeSkipped, 0, walk.SpecialKind(typ)
	}
	return e, true, nil
}

// reuseUnchanged is the current position, reused, when hint says nothing changed since it; nil
// when the hint is about another checkpoint (the capture then decides).
func (s *Store) reuseUnchanged(hint *Changed) *CheckpointResult {
	pos, err := s.readPosition()
	if err != nil || pos.Current == "" || pos.Current != hint.Since {
		return nil
	}
	cur, err := s.readCheckpoint(pos.Current)
	if err != nil {
		return nil
	}
	return &CheckpointResult{Checkpoint: *cur, Reused: true, Walk: hint.walk()}
}
