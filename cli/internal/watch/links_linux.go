package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// Files with more than one name. inotify reports a change under the name it was made through
// (the folder's watch sees that name): a write through a reports a, not b or sub/c, other names
// of the same file. So the watcher gives each such file a watch of its own, which sees a change
// made through any name (one outside the workspace too), and reports every name it knows for the
// file. It learns names when it reads a folder (at start, and a folder made or moved in) and from
// the event of each name made (a link, a rename). A file whose own watch is new while it already
// has more links than names the watcher knows (ln a b, where a had one name: the watcher sees b
// made, not a) may have a name the watcher does not know: before its next answer the watcher
// reads every folder again for them (learnNames), and reports each name it learns as changed.

// fileMask is what a file's own watch reports: its content or metadata changed (through any name).
// IN_MASK_ADD: should the path have become a folder meanwhile, its folder watch keeps its events.
const fileMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_DONT_FOLLOW | unix.IN_MASK_ADD

// linked is a file with more than one link: the names the watcher knows for it in the workspace.
type linked struct {
	names map[string]bool
	nlink uint64 // its links when its watch was made
}

// maxLearnRounds bounds how often learnNames reads the folders again in one answer: each time
// a file it did not know is linked while it reads, it must read them again.
const maxLearnRounds = 3

// track records that rel is a name of a regular file with nlink links, nlink > 1, and watches
// that file. It reports whether the name is new for the file. Called with mu held.
func (t *tree) track(rel string, nlink uint64) (bool, error) {
	wd, err := syscall.InotifyAddWatch(t.fd, t.path(rel), fileMask)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return false, nil // gone again: its folder's event covers it
		}
		if errors.Is(err, syscall.ENOSPC) {
			return false, fmt.Errorf("%w, at %s", limitErr(err), filepath.Join(t.root, rel))
		}
		return false, fmt.Errorf("watch %s: %w", filepath.Join(t.root, rel), err)
	}
	if _, ok := t.wds[wd]; ok || wd == t.cookieWd {
		return false, nil // a folder now: its parent's event covers it
	}
	if old, ok := t.names[rel]; ok {
		if old == wd {
			return false, nil
		}
		t.untrack(rel) // the name is another file's now
	}
	l := t.files[wd]
	if l == nil {
		l = &linked{names: map[string]bool{}, nlink: nlink}
		t.files[wd] = l
		t.unsure[wd] = true
	}
	l.names[rel] = true
	t.names[rel] = wd
	return true, nil
}

// untrack forgets name rel (removed, moved away, or another file's now), and the file's watch
// with its last name. Called with mu held.
func (t *tree) untrack(rel string) {
	wd, ok := t.names[rel]
	if !ok {
		return
	}
	delete(t.names, rel)
	l := t.files[wd]
	delete(l.names, rel)
	if len(l.names) == 0 {
		syscall.InotifyRmWatch(t.fd, uint32(wd))
		delete(t.files, wd)
		delete(t.unsure, wd)
	}
}

// fileEvent records an event of a file's own watch: every name it has changed. Called with mu
// held.
func (t *tree) fileEvent(wd int, l *linked, mask uint32) {
	if mask&syscall.IN_IGNORED != 0 { // the file is gone (its last link removed)
		for p := range l.names {
			delete(t.names, p)
		}
		delete(t.files, wd)
		delete(t.unsure, wd)
		return
	}
	for p := range l.names {
		t.mark(p)
	}
}

// nameEvent follows the names of linked files through an event of folder entry rel, which is
// not a folder: a name made (created, linked, moved in) is looked at, one gone is forgotten.
// Called with mu held.
func (t *tree) nameEvent(rel string, mask uint32) error {
	if mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_DELETE|syscall.IN_MOVED_FROM) == 0 {
		return nil
	}
	t.untrack(rel)
	if mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) == 0 {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(t.path(rel), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink < 2 {
		return nil // gone again (its event follows), not a file, or one name only
	}
	_, err := t.track(rel, uint64(st.Nlink))
	return err
}

// lookIn looks at the entries ents of folder rel (open as f) that are not folders: it tracks
// the regular files with more than one link, calling learned for each name new to the watcher,
// and notes those that are mount points (a file bind-mounted there). Called with mu held.
func (t *tree) lookIn(rel string, f *os.File, ents []os.DirEntry, learned func(string)) error {
	fd := -1
	for _, e := range ents {
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 { // a symlink is never a mount point
			continue
		}
		if fd < 0 {
			fd = int(f.Fd())
		}
		var st unix.Statx_t
		if err := unix.Statx(fd, e.Name(), unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_TYPE|unix.STATX_NLINK|unix.STATX_MNT_ID, &st); err != nil {
			continue // gone meanwhile: its folder's event covers it
		}
		p := join(rel, e.Name())
		if st.Mnt_id != t.rootID.mnt {
			t.mountPoints[p] = true
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink < 2 {
			continue
		}
		isNew, err := t.track(p, uint64(st.Nlink))
		if err != nil {
			return err
		}
		if isNew && learned != nil {
			learned(p)
		}
	}
	return nil
}

// learnNames reads every watched folder again when a file has a watch of its own made with
// fewer names known than it has links, and records each name it learns as changed (a change
// made through another name since may not have been reported under it). It returns why it
// refuses to answer when links keep being made to files it did not know while it reads. Called
// with mu held.
func (t *tree) learnNames() (refused string, err error) {
	for round := 0; ; round++ {
		for wd := range t.unsure {
			if l := t.files[wd]; l == nil || uint64(len(l.names)) >= l.nlink {
				delete(t.unsure, wd) // every link is a name it knows
			}
		}
		if len(t.unsure) == 0 {
			return "", nil
		}
		if round == maxLearnRounds { // still unsure: the next answer reads them again
			return "files with more than one name kept being linked while the watcher looked for their names", nil
		}
		clear(t.unsure) // a file linked meanwhile gets a new watch, and is unsure again
		dirs := slices.Collect(maps.Keys(t.dirs))
		for _, d := range dirs {
			f, err := os.Open(t.path(d))
			if err != nil {
				continue // removed meanwhile: its parent's event covers it
			}
			ents, _ := f.ReadDir(-1)
			err = t.lookIn(d, f, ents, t.mark)
			f.Close()
			if err != nil {
				return "", err
			}
		}
	}
}
