package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// CheckOptions chooses how deep Check looks and whether it repairs.
type CheckOptions struct {
	// ReadData re-hashes every stored content a checkpoint needs, reading the whole store;
	// without it a content is only checked to exist with the size its manifest gives.
	ReadData bool
	// Repair fixes what can be fixed without losing anything, rebuilding before it moves
	// anything aside: a pack's lost index is written back (checkindex.go), a missing or damaged
	// content that a workspace file still has is stored again from it (a damaged copy is moved
	// aside to quarantine/), a stat cache that is damaged or vouches wrongly is dropped (the next
	// checkpoint rebuilds it), and files left by interrupted writes are moved aside to
	// quarantine/. Nothing a checkpoint needs is ever removed.
	Repair bool
}

// CheckReport is what Check found, section by section (FORMAT.md, "Check").
type CheckReport struct {
	Sections []CheckSection `json:"sections"`
}

// CheckSection is one part of the store and what was wrong with it.
type CheckSection struct {
	Name     string    `json:"name"`     // "checkpoints", "manifests", "objects", "packs", "position", "statCache", "leftovers"
	Checked  int       `json:"checked"`  // items checked: files, manifests, contents, entries
	Problems []Problem `json:"problems"` // never nil
}

// Problem is one thing Check found wrong: what, where, and what to do.
type Problem struct {
	Kind        string   `json:"kind"`                  // stable identifier, see FORMAT.md "Check"
	Where       string   `json:"where"`                 // the file, relative to the state directory
	Path        string   `json:"path,omitempty"`        // the workspace path concerned, if any
	What        string   `json:"what"`                  // what is wrong
	Fix         string   `json:"fix"`                   // what to do
	Checkpoints []string `json:"checkpoints,omitempty"` // the checkpoints it affects
	Repaired    bool     `json:"repaired"`              // Repair fixed it
	// Benign: it harms nothing and goes by itself (a leftover the next writer or gc removes):
	// reported, but no reason for check to fail.
	Benign bool `json:"benign,omitempty"`
}

// Check verifies the whole store against its format: every checkpoint's metadata and manifest
// parse and hash to their names, every content a manifest names is stored (and with ReadData
// hashes to its name), every pack index reads, the position names a checkpoint, and every stat
// cache entry that vouches for a file matches the file's content (each such file is read). It
// holds the writers' lock, so it sees no write in progress, and reports what interrupted writes
// left. With Repair it fixes what it can without losing anything (see CheckOptions).
func (s *Store) Check(ctx context.Context, opts CheckOptions) (*CheckReport, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := &checker{s: s, opts: opts, bad: map[Hash]badObject{}, quarantine: filepath.Join(s.state, "quarantine", time.Now().UTC().Format("20060102T150405.000000000Z"))}
	cps := c.checkpoints()
	var rebuilt []Problem
	if opts.Repair { // before anything reads the packs: the manifests' trees may be in them
		if rebuilt, err = c.rebuildPacks(cps); err != nil {
			return nil, err
		}
	}
	needs := c.manifests(cps)
	packed := c.packs(rebuilt)
	if err := c.objects(ctx, needs, packed); err != nil {
		return nil, err
	}
	c.position()
	if err := c.statCache(ctx, packed); err != nil {
		return nil, err
	}
	if opts.Repair {
		if err := c.storeFromLive(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.leftovers(); err != nil {
		return nil, err
	}
	rep := &CheckReport{Sections: make([]CheckSection, len(c.sections))}
	for i, sec := range c.sections {
		rep.Sections[i] = *sec
	}
	return rep, nil
}

// checker holds one Check's state.
type checker struct {
	s          *Store
	opts       CheckOptions
	sections   []*CheckSection
	quarantine string // where Repair moves files aside
	bad        map[Hash]badObject
}

// badObject is a content reported missing or damaged: its problem, which Repair may fix from
// a workspace file that still has the content.
type badObject struct {
	sec *CheckSection
	i   int // index in sec.Problems
}

func (c *checker) section(name string) *CheckSection {
	sec := &CheckSection{Name: name, Problems: []Problem{}}
	c.sections = append(c.sections, sec)
	return sec
}

func (c *checker) rel(name string) string {
	if r, err := filepath.Rel(c.s.state, name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}

// need is a content some checkpoints' manifests name.
type need struct {
	size        int64
	path        string   // one path that has it
	checkpoints []string // the checkpoints that need it
}

// checkpoints reads every checkpoint's metadata; the readable ones are returned.
func (c *checker) checkpoints() []*Checkpoint {
	sec := c.section("checkpoints")
	names, err := platform.ReadDirNames(filepath.Join(c.s.state, "checkpoints"))
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "checkpoints-unreadable", Where: "checkpoints/", What: err.Error(),
			Fix: "make the state directory readable by this user"})
		return nil
	}
	slices.Sort(names)
	var out []*Checkpoint
	for _, n := range names {
		if !validID(n) {
			continue // temporary files are leftovers
		}
		sec.Checked++
		cp, err := c.s.readCheckpoint(n)
		if err != nil {
			var ce *CorruptError
			what := err.Error()
			if errors.As(err, &ce) {
				what = ce.Reason
			}
			sec.Problems = append(sec.Problems, Problem{Kind: "checkpoint-corrupt", Where: "checkpoints/" + n, What: what,
				Fix:         "restore this file from a backup of the state directory; until then list, gc and rewinds to it fail (move it out of checkpoints/ to go on without it)",
				Checkpoints: []string{n}})
			continue
		}
		out = append(out, cp)
	}
	return out
}

// manifests reads the manifest of every readable checkpoint and returns the contents they need.
func (c *checker) manifests(cps []*Checkpoint) map[Hash]*need {
	sec := c.section("manifests")
	users := map[Hash][]string{}
	var order []Hash
	for _, cp := range cps {
		if users[cp.Manifest] == nil {
			order = append(order, cp.Manifest)
		}
		users[cp.Manifest] = append(users[cp.Manifest], cp.ID)
	}
	needs := map[Hash]*need{}
	for _, h := range order {
		sec.Checked++
		where := "manifests/" + h.String()
		entries, err := c.s.readManifest(h)
		if err != nil {
			p := Problem{Kind: "manifest-corrupt", Where: where, What: err.Error(), Checkpoints: users[h],
				Fix: "restore this manifest from a backup of the state directory; the checkpoints that use it cannot be rewound to or diffed until then"}
			var ce *CorruptError
			if errors.As(err, &ce) {
				p.What = ce.Reason
				if strings.Contains(ce.Reason, "missing") {
					p.Kind = "manifest-missing"
				}
			}
			sec.Problems = append(sec.Problems, p)
			continue
		}
		for i := range entries {
			e := &entries[i]
			if e.Type != TypeFile {
				continue
			}
			n := needs[e.Blob]
			if n == nil {
				n = &need{size: e.Size, path: e.Path}
				needs[e.Blob] = n
			}
			for _, id := range users[h] {
				if !slices.Contains(n.checkpoints, id) {
					n.checkpoints = append(n.checkpoints, id)
				}
			}
		}
	}
	return needs
}

// packs reads every pack index and returns where each packed content is, from the readable ones
// (and from the trailer of a pack whose index file is missing: the next writer rebuilds it).
// rebuilt are the problems rebuildPacks repaired.
func (c *checker) packs(rebuilt []Problem) map[Hash]objects.PackLoc {
	sec := c.section("packs")
	sec.Problems = append(sec.Problems, rebuilt...)
	sec.Checked += len(rebuilt)
	out := map[Hash]objects.PackLoc{}
	c.indexless(sec, out)
	ids, err := c.s.objects.PackIDs()
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "packs-unreadable", Where: "packs/", What: err.Error(),
			Fix: "make the state directory readable by this user"})
		return out
	}
	slices.Sort(ids)
	for _, id := range ids {
		sec.Checked++
		entries, err := c.s.objects.ReadPackIdx(id)
		if err != nil {
			what := err.Error()
			var ce *CorruptError
			if errors.As(err, &ce) {
				what = ce.Reason
			}
			sec.Problems = append(sec.Problems, Problem{Kind: "pack-corrupt", Where: "packs/" + id + ".idx", What: what,
				Fix: "restore packs/" + id + ".pack and .idx from a backup of the state directory; the contents it held are reported missing below"})
			continue
		}
		pack := c.s.objects.PackPath(id)
		for _, e := range entries {
			if _, dup := out[e.Hash]; !dup {
				out[e.Hash] = objects.PackLoc{Pack: pack, PackEntry: e}
			}
		}
	}
	return out
}

// objects checks that every needed content is stored with its size, and with ReadData that it
// hashes to its name.
func (c *checker) objects(ctx context.Context, needs map[Hash]*need, packed map[Hash]objects.PackLoc) error {
	sec := c.section("objects")
	hashes := make([]Hash, 0, len(needs))
	for h := range needs {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b Hash) int { return strings.Compare(string(a[:]), string(b[:])) })
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := needs[h]
		sec.Checked++
		loose := c.s.objects.Path(h)
		where := c.rel(loose)
		problem := func(kind, what, fix string) {
			sec.Problems = append(sec.Problems, Problem{Kind: kind, Where: where, Path: n.path, What: what, Fix: fix, Checkpoints: n.checkpoints})
			if kind != "object-unreadable" {
				c.bad[h] = badObject{sec, len(sec.Problems) - 1}
			}
		}
		const restore = "if a file in the workspace still has this content, check --repair stores it again from there; " +
			"otherwise restore it from a backup of the state directory: until then the checkpoints listed cannot restore this file"
		var size int64
		var open func() (io.ReadCloser, error)
		if fi, err := os.Lstat(loose); err == nil {
			size = fi.Size()
			open = func() (io.ReadCloser, error) { return regular.Open(loose) }
		} else if loc, ok := packed[h]; ok {
			where = fmt.Sprintf("%s (offset %d)", c.rel(loc.Pack), loc.Off)
			size = loc.Size
			open = func() (io.ReadCloser, error) {
				f, err := regular.Open(loc.Pack)
				if err != nil {
					return nil, err
				}
				return objects.SectionCloser{SectionReader: io.NewSectionReader(f, loc.Off, loc.Size), File: f}, nil
			}
		} else if list := c.s.objects.ListPath(h); c.s.objects.HasList(h) {
			where = c.rel(list)
			if kind, at, what := c.chunked(h, n.size, packed); kind != "" {
				if at != "" {
					where = at
				}
				problem(kind, fmt.Sprintf("content %s of %q: %s", h, n.path, what), restore)
			}
			continue
		} else {
			problem("object-missing", fmt.Sprintf("content %s of %q is stored neither loose, nor in a pack, nor in chunks", h, n.path), restore)
			continue
		}
		if size != n.size {
			problem("object-corrupt", fmt.Sprintf("stored content is %d bytes, the manifest says %d", size, n.size), restore)
			continue
		}
		if !c.opts.ReadData {
			continue
		}
		got, err := hashReader(open)
		if err != nil {
			problem("object-unreadable", err.Error(), "make it readable")
			continue
		}
		if got != h {
			problem("object-corrupt", fmt.Sprintf("stored content hashes to %s, not to its name", got), restore)
		}
	}
	return nil
}

func hashReader(open func() (io.ReadCloser, error)) (Hash, error) {
	var h Hash
	r, err := open()
	if err != nil {
		return h, err
	}
	defer r.Close()
	hasher := sha256.New()
	if _, err := io.Copy(hasher, r); err != nil {
		return h, err
	}
	hasher.Sum(h[:0])
	return h, nil
}

// position checks that the position file reads and names a checkpoint that exists.
func (c *checker) position() {
	sec := c.section("position")
	sec.Checked = 1
	pos, err := c.s.readPosition()
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "position-corrupt", Where: "position", What: err.Error(),
			Fix: "rewind to a checkpoint (agent-rewind list shows them): it writes the position anew"})
		return
	}
	for _, id := range []string{pos.Current, safetyOf(pos)} {
		if id == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(c.s.state, "checkpoints", id)); errors.Is(err, fs.ErrNotExist) {
			sec.Problems = append(sec.Problems, Problem{Kind: "position-dangling", Where: "position", Checkpoints: []string{id},
				What: fmt.Sprintf("names checkpoint %s, which does not exist", id),
				Fix:  "restore checkpoints/" + id + " from a backup of the state directory, or rewind to another checkpoint"})
		}
	}
}

func safetyOf(p *position) string {
	if p.Last == nil {
		return ""
	}
	return p.Last.Safety
}

// statCache checks every entry of the stat cache that vouches for a live file (its stat matches
// and it is not racily clean): that its content is stored, and by reading the file that it is
// the file's content.
func (c *checker) statCache(ctx context.Context, packed map[Hash]objects.PackLoc) error {
	sec := c.section("statCache")
	name := filepath.Join(c.s.state, "index")
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	drop := func(p Problem) {
		p.Where = "index"
		p.Fix = "run check --repair: it drops the stat cache, and the next checkpoint reads every file and rebuilds it"
		sec.Problems = append(sec.Problems, p)
	}
	if err != nil {
		drop(Problem{Kind: "stat-cache-corrupt", What: err.Error()})
		return c.dropCache(sec)
	}
	if _, _, err := statcache.Decode(data); err != nil {
		drop(Problem{Kind: "stat-cache-corrupt", What: err.Error() + " (checkpoints ignore it and read every file)"})
		return c.dropCache(sec)
	}
	idx, _, err := statcache.Load(name) // with its log applied: what a checkpoint trusts
	if err != nil {
		return err
	}
	entries := idx.Entries
	var n atomic.Int64
	for i := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := &entries[i]
		sec.Checked++
		if statcache.IsDir(e) {
			c.statCacheDir(e, idx, packed, drop)
			continue
		}
		if manifest.CheckPath(e.Path) != nil {
			drop(Problem{Kind: "stat-cache-corrupt", Path: e.Path, What: "an entry's path is not a workspace path"})
			continue
		}
		full := filepath.Join(c.s.root, e.Path)
		live, err := platform.Lstat(full)
		if err != nil || !idx.Clean(e, live) {
			continue // the cache does not vouch for this file now: a checkpoint reads it
		}
		if _, ok := packed[e.Blob]; !ok {
			if _, err := os.Lstat(c.s.objects.Path(e.Blob)); err != nil && !c.s.objects.HasList(e.Blob) {
				drop(Problem{Kind: "stat-cache-unstored", Path: e.Path,
					What: fmt.Sprintf("vouches for content %s, which is not stored: the next checkpoint would name a content it cannot restore", e.Blob)})
				continue
			}
		}
		h, err := hashFile(full, e.St, nil, &n)
		if err != nil {
			continue // changed while being read, or unreadable: not evidence either way
		}
		if h != e.Blob {
			drop(Problem{Kind: "stat-cache-stale", Path: e.Path,
				What: fmt.Sprintf("vouches for content %s, but the file holds %s: a checkpoint would record the wrong content without reading it", e.Blob, h)})
		}
	}
	if len(sec.Problems) > 0 {
		return c.dropCache(sec)
	}
	return nil
}

// statCacheDir checks a directory entry of the stat cache (treecache.go): that the tree it
// vouches for, while the directory's stat is the entry's, is stored (the root's as a manifest).
// Whether the tree is the directory's is what a checkpoint decides from its children's entries.
func (c *checker) statCacheDir(e *statcache.Entry, idx *statcache.Index, packed map[Hash]objects.PackLoc, drop func(Problem)) {
	if e.Path != "" && manifest.CheckPath(e.Path) != nil {
		drop(Problem{Kind: "stat-cache-corrupt", Path: e.Path, What: "an entry's path is not a workspace path"})
		return
	}
	live, err := platform.Lstat(filepath.Join(c.s.root, e.Path))
	if err != nil || !idx.Clean(e, live) {
		return // not vouched for now: a checkpoint encodes the tree
	}
	stored := filepath.Join(c.s.state, "manifests", e.Blob.String())
	if e.Path != "" {
		if _, ok := packed[e.Blob]; ok {
			return
		}
		stored = c.s.objects.Path(e.Blob)
	}
	if _, err := os.Lstat(stored); err != nil {
		drop(Problem{Kind: "stat-cache-unstored", Path: e.Path,
			What: fmt.Sprintf("vouches for directory tree %s, which is not stored: the next checkpoint would name a tree it cannot restore", e.Blob)})
	}
}

// dropCache removes the stat cache when repairing and marks the section's problems repaired.
func (c *checker) dropCache(sec *CheckSection) error {
	if !c.opts.Repair {
		return nil
	}
	name := filepath.Join(c.s.state, "index")
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop the stat cache: %w", err)
	}
	if err := statcache.RemoveLog(name); err != nil {
		return fmt.Errorf("drop the stat cache: %w", err)
	}
	for i := range sec.Problems {
		sec.Problems[i].Repaired = true
	}
	return nil
}

// leftovers reports (and with Repair moves aside) what interrupted writes of this module left:
// temporary files of durable writes, staged objects and files, and packs an interrupted write
// cut short. The lock is held, so none of them belongs to a write in progress; each is benign
// (nothing refers to it, and the next writer or gc removes it).
func (c *checker) leftovers() error {
	sec := c.section("leftovers")
	var found []string
	// In the state directory itself only this module's files are ours (other modules write
	// theirs there under their own locks).
	stateNames, err := platform.ReadDirNames(c.s.state)
	if err != nil {
		return err
	}
	for _, dir := range []string{"checkpoints", "manifests"} {
		names, err := platform.ReadDirNames(filepath.Join(c.s.state, dir))
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.HasPrefix(n, ".tmp-") {
				found = append(found, filepath.Join(dir, n))
			}
		}
	}
	objLeft, err := c.s.objects.Leftovers()
	if err != nil {
		return err
	}
	found = append(found, objLeft...)
	for _, n := range stateNames {
		if lockedTemp(n) {
			found = append(found, n)
		}
	}
	slices.Sort(found)
	sec.Checked = len(found)
	for _, rel := range found {
		by := "the next checkpoint, rewind or gc removes it"
		if d := filepath.Dir(rel); d == "checkpoints" || d == "manifests" { // staged there by versions before 2026-12
			by = "gc removes it"
		}
		p := Problem{Kind: "leftover", Where: filepath.ToSlash(rel), Benign: true,
			What: "left by an interrupted write; nothing refers to it",
			Fix:  by + "; check --repair moves it aside to quarantine/ now"}
		if c.opts.Repair {
			if err := c.moveAside(rel); err != nil {
				return err
			}
			p.Repaired = true
		}
		sec.Problems = append(sec.Problems, p)
	}
	return nil
}

// moveAside moves the state directory's file rel into the quarantine directory, keeping its
// relative path, durably.
func (c *checker) moveAside(rel string) error {
	to := filepath.Join(c.quarantine, rel)
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return fmt.Errorf("move %s aside: %w", rel, err)
	}
	from := filepath.Join(c.s.state, rel)
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("move %s aside: %w", rel, err)
	}
	for _, d := range []string{filepath.Dir(to), filepath.Dir(from)} {
		if err := durable.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// storeFromLive repairs missing and damaged contents that a file of the workspace still has: the
// file is copied into objects/tmp and, if the copy hashes to the content's name, a damaged loose
// copy is moved aside and the new one renamed into place (a loose copy is read before a packed
// one, so it also replaces a damaged packed copy).
func (c *checker) storeFromLive(ctx context.Context) error {
	if len(c.bad) == 0 {
		return nil
	}
	live, err := c.s.captureLive(ctx, false)
	if err != nil {
		return err
	}
	for i := range live.scan.Entries {
		e := &live.scan.Entries[i]
		b, ok := c.bad[e.Blob]
		if e.Type != TypeFile || !ok {
			continue
		}
		stored, err := c.storeFrom(e.Blob, filepath.Join(c.s.root, e.Path))
		if err != nil {
			return err
		}
		if stored {
			p := &b.sec.Problems[b.i]
			p.Repaired = true
			p.What += fmt.Sprintf("; stored again from the workspace file %q", e.Path)
			delete(c.bad, e.Blob)
		}
	}
	return nil
}

// storeFrom copies the file full into the store as object h if it hashes to h, and reports
// whether it did; a file that changed meanwhile is left alone.
func (c *checker) storeFrom(h Hash, full string) (bool, error) {
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if err := os.MkdirAll(c.s.objects.TmpDir(), 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(c.s.objects.TmpDir(), "obj-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	hasher := sha256.New()
	_, err = io.Copy(io.MultiWriter(hasher, tmp), f)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("store %s again from %s: %w", h, full, err)
	}
	var got Hash
	hasher.Sum(got[:0])
	if got != h {
		return false, nil
	}
	name := c.s.objects.Path(h)
	if _, err := os.Lstat(name); err == nil {
		if err := c.moveAside(c.rel(name)); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return false, fmt.Errorf("store %s again: %w", h, err)
	}
	// The whole content is read before its chunks: a damaged chunk list goes aside.
	if list := c.s.objects.ListPath(h); c.s.objects.HasList(h) {
		if err := c.moveAside(c.rel(list)); err != nil {
			return false, err
		}
	}
	return true, objects.FsyncAll([]string{filepath.Dir(name), filepath.Dir(filepath.Dir(name))}, func(n string) (*os.File, error) { return os.Open(n) })
}
