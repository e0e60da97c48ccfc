package restore

import (
	"path/filepath"
	"slices"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// What the stat cache holds after a restore. An entry of the cache is a fact about a stat, so
// what it held is still true of every path the restore did not touch; these functions say what
// changes, and the caller (who owns the cache file) writes it.

// IndexChanges returns the stat cache's log record of a restore in root (statcache/log.go): set
// are the files it wrote that are the target's (want, sorted by path), with a fresh lstat and
// the target's content; removed is every other path it touched and every directory above one,
// whose cached trees no longer hold. Both are sorted.
func IndexChanges(root string, want []manifest.Entry, touched map[string]bool) (set []statcache.Entry, removed []string) {
	changed := map[string]bool{} // touched paths and every directory above one
	for p := range touched {
		manifest.MarkUp(changed, p)
	}
	for p := range changed {
		if touched[p] {
			if e := find(want, p); e != nil && e.Type == manifest.TypeFile { // a touched path is listed
				if st, ok := restoredStat(root, e); ok {
					set = append(set, statcache.Entry{Path: p, St: st, Blob: e.Blob})
					continue
				}
			}
		}
		removed = append(removed, p)
	}
	statcache.Sort(set)
	slices.Sort(removed)
	return set, removed
}

// Live is what the live capture before a restore saw, as rebuilding the stat cache needs it.
type Live struct {
	Entries  []walk.LiveEntry        // in path order
	Trees    map[string]objects.Hash // the trees it encoded, by folder ("" the root); nil to cache none
	RootStat platform.Stat           // the root folder's stat (Mode 0 when unknown)
}

// IndexEntries returns a whole new stat cache after a restore in root: the target's files
// (want: every entry, in path order), with the stat seen live for files left alone and a fresh
// lstat for files the restore wrote. A target file the restore left alone (excluded) is cached
// only if the live file has its content. The trees the capture encoded stay cached for the
// directories under which the restore touched nothing, unless it changed the root's
// .rewindignore, under whose rules they were made: keptTrees says whether any may be.
func IndexEntries(root string, want []manifest.Entry, live Live, touched map[string]bool) (out []statcache.Entry, keptTrees bool) {
	changed := map[string]bool{} // touched paths and every directory above one
	for p := range touched {
		manifest.MarkUp(changed, p)
	}
	keepTrees := live.Trees != nil && live.RootStat.Mode != 0 && !changed[walk.IgnoreFile]
	if h, ok := live.Trees[""]; ok && keepTrees && !changed[""] {
		out = append(out, statcache.Entry{Path: "", St: live.RootStat, Blob: h})
	}
	ls := live.Entries
	j := 0
	for i := range want {
		w := &want[i]
		for j < len(ls) && ls[j].Path < w.Path {
			j++
		}
		lv := (*walk.LiveEntry)(nil)
		if j < len(ls) && ls[j].Path == w.Path {
			lv = &ls[j]
		}
		switch w.Type {
		case manifest.TypeDir:
			if h, ok := live.Trees[w.Path]; ok && keepTrees && !changed[w.Path] && lv != nil && lv.Type == manifest.TypeDir && lv.St.Mode != 0 {
				out = append(out, statcache.Entry{Path: w.Path, St: lv.St, Blob: h})
			}
		case manifest.TypeFile:
			if touched[w.Path] {
				if st, ok := restoredStat(root, w); ok {
					out = append(out, statcache.Entry{Path: w.Path, St: st, Blob: w.Blob})
				}
				continue
			}
			if lv != nil && lv.Type == manifest.TypeFile && lv.Blob == w.Blob {
				out = append(out, statcache.Entry{Path: w.Path, St: lv.St, Blob: w.Blob})
			}
		}
	}
	return out, keepTrees
}

// restoredStat is the fresh lstat of the file a restore wrote for e, if it is a regular file of
// e's size (anything else is not what the restore wrote, and is not cached).
func restoredStat(root string, e *manifest.Entry) (platform.Stat, bool) {
	st, err := platform.Lstat(filepath.Join(root, e.Path))
	if err != nil || !st.IsRegular() || st.Size != e.Size {
		return platform.Stat{}, false
	}
	return st, true
}
