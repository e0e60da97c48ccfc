package snapshot

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// What a store knows of its workspace lets a new folder be recognised as a copy of it (cp -a,
// rsync -a, a backup restored): a copy is a new folder to whoever finds stores by the folder's
// identity, and would start an empty history and forget the effects spent in the original.

// resembleSample is how many of the stat cache's files Resembles compares.
const resembleSample = 64

// Resembles reports whether the folder root holds what the store in stateDir last saw of its own
// workspace, and returns the store's current checkpoint. It reads the store without opening it
// (no lock, no recovery, nothing written), and only a few files of root:
//
//   - every entry of the current checkpoint's top folder is in root with the same type, and a
//     file or folder with the same mode, a file with the same size, a symlink with the same
//     target (root may hold more: what the store's rules exclude is copied too);
//   - and the files of the stat cache, a sample of up to 64 spread over it, are in root with the
//     same size and modification time (to the nanosecond, or to the second for a copy that
//     kept seconds only: sameTime) for at least 7 in 8 of them (the original may have changed
//     since its last checkpoint);
//     without a stat cache, every file of the top folder up to 1 MiB has the same content.
func Resembles(stateDir, root string) (checkpoint string, ok bool) {
	s := &Store{state: stateDir}
	pos, err := s.readPosition()
	if err != nil || pos.Current == "" {
		return "", false
	}
	cp, err := s.readCheckpoint(pos.Current)
	if err != nil {
		return "", false
	}
	top, err := s.topEntries(cp.Manifest)
	if err != nil || len(top) == 0 {
		return "", false
	}
	for _, e := range top {
		if !liveMatches(filepath.Join(root, e.Path), e, false) {
			return "", false
		}
	}
	idx, _, err := statcache.Load(filepath.Join(stateDir, "index"))
	var files []*statcache.Entry
	if err == nil {
		for i := range idx.Entries {
			if e := &idx.Entries[i]; !statcache.IsDir(e) && manifest.CheckPath(e.Path) == nil {
				files = append(files, e)
			}
		}
	}
	if len(files) == 0 { // no stat cache: the top folder's small files by content
		hashed := 0
		for _, e := range top {
			if e.Type == TypeFile && e.Size <= 1<<20 {
				if !liveMatches(filepath.Join(root, e.Path), e, true) {
					return "", false
				}
				hashed++
			}
		}
		return cp.ID, hashed > 0
	}
	n := min(len(files), resembleSample)
	same := 0
	for i := range n {
		e := files[i*len(files)/n]
		if st, err := platform.Lstat(filepath.Join(root, e.Path)); err == nil && st.Size == e.St.Size && st.Mode == e.St.Mode && sameTime(st.Mtime, e.St.Mtime) {
			same++
		}
	}
	return cp.ID, same*8 >= n*7
}

// sameTime reports whether the modification time copy (ns) is the time orig kept: the same to
// the nanosecond (cp -a, rsync -a), or the same second where the copy kept seconds only (tar,
// some backups). Files made anew in the same second differ in their nanoseconds.
func sameTime(copy, orig int64) bool {
	return copy == orig || copy%1e9 == 0 && copy/1e9 == orig/1e9
}

// topEntries returns the entries of manifest h's top folder.
func (s *Store) topEntries(h Hash) ([]Entry, error) {
	b, err := s.readManifestRoot(h)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte(manifest.Magic)) {
		return manifest.ParseTree(b)
	}
	all, err := ParseManifest(b) // a store written before trees
	if err != nil {
		return nil, err
	}
	var top []Entry
	for _, e := range all {
		if !strings.Contains(e.Path, "/") {
			top = append(top, e)
		}
	}
	return top, nil
}

// liveMatches reports whether the path p holds what e records: type, mode, size or target, and
// with content, a file's content.
func liveMatches(p string, e Entry, content bool) bool {
	st, err := platform.Lstat(p)
	if err != nil {
		return false
	}
	mode := st.Mode & 0o7777
	switch e.Type {
	case TypeFile:
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size != e.Size || mode != e.Mode {
			return false
		}
		return !content || fileHashes(p, e.Blob)
	case TypeDir:
		return st.Mode&syscall.S_IFMT == syscall.S_IFDIR && mode == e.Mode
	case TypeSymlink:
		target, err := os.Readlink(p)
		return err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFLNK && target == e.Target
	}
	return true // a path not captured: whatever it is
}

// fileHashes reports whether the regular file p's content hashes to h.
func fileHashes(p string, h Hash) bool {
	f, err := regular.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return false
	}
	var got Hash
	d.Sum(got[:0])
	return got == h
}
