package watch

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// What the watch cannot vouch for, named in every answer to be read whole.
//
// Reparse points below the root (junctions, volume mount points, symlinks, cloud files): the
// watch reports a change to the reparse point itself, never one behind it, and the checkpoint
// does not follow them either; naming them costs a look each, and holds whatever they are.
//
// Files with more than one name (NTFS hard links): the system reports a change under the name
// it was made through, and nothing under the file's other names, one outside the workspace
// included. So every name in the workspace of such a file is named in every answer. The
// watcher learns them when it reads a folder (at start, and a folder made or moved in) and from
// each name made. A name made for a file that has more links than names the watcher knows
// (a file with one name, linked: the watcher sees the new name, not which file it was) makes it
// read the whole tree again before its next answer (relearn), naming what it learns as changed.

// linkedFile is a file with more than one link: the names the watcher knows for it.
type linkedFile struct{ names map[string]bool }

// look reads what rel is now: a reparse point is named from now on, a folder is read with
// everything under it, a file with more than one link has its name learned (learned, when not
// nil, is called with each name new to the watcher). Called with mu held.
func (t *tree) look(rel string, learned func(string)) error {
	if rel != "" && (rel == t.skipRel || t.skipRel != "" && strings.HasPrefix(rel, t.skipRel+"/")) {
		return nil
	}
	attrs, err := attributes(t.full(rel))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil // gone again: its removal is reported
	case err != nil && rel == "":
		return err
	case err != nil:
		t.special[rel] = true // unreadable: read whole every time
		return nil
	case rel != "" && attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		t.special[rel] = true
		return nil
	case attrs&windows.FILE_ATTRIBUTE_DIRECTORY == 0:
		t.lookFile(rel, learned)
		return nil
	}
	t.dirAttrs[rel] = attrs
	ents, err := os.ReadDir(t.full(rel))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if rel == "" {
			return err
		}
		t.special[rel] = true
		return nil
	}
	for _, e := range ents {
		if err := t.look(join(rel, e.Name()), learned); err != nil {
			return err
		}
	}
	return nil
}

// lookFile learns file rel's name when it has more than one link. Called with mu held.
func (t *tree) lookFile(rel string, learned func(string)) {
	k, nlink, err := linksOf(t.full(rel))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return
	case err != nil:
		t.special[rel] = true // its links cannot be told: read whole every time
		return
	case nlink < 2:
		t.untrack(rel)
		return
	}
	if old, ok := t.names[rel]; ok && old == k {
		return
	}
	t.untrack(rel) // the name is another file's now
	l := t.files[k]
	if l == nil {
		l = &linkedFile{names: map[string]bool{}}
		t.files[k] = l
	}
	l.names[rel] = true
	t.names[rel] = k
	if learned != nil {
		learned(rel)
	} else if len(l.names) < int(nlink) {
		t.unsure = true
	}
}

// untrack forgets name rel of a linked file. Called with mu held.
func (t *tree) untrack(rel string) {
	k, ok := t.names[rel]
	if !ok {
		return
	}
	delete(t.names, rel)
	l := t.files[k]
	delete(l.names, rel)
	if len(l.names) == 0 {
		delete(t.files, k)
	}
}

// forget forgets what the watcher knew at and under rel, removed or moved away. Called with mu
// held.
func (t *tree) forget(rel string) {
	under := func(p string) bool { return p == rel || strings.HasPrefix(p, rel+"/") }
	for p := range t.special {
		if under(p) {
			delete(t.special, p)
		}
	}
	for p := range t.names {
		if under(p) {
			t.untrack(p)
		}
	}
	for p := range t.dirAttrs {
		if under(p) {
			delete(t.dirAttrs, p)
		}
	}
}

// relearn reads the whole tree again for the names of linked files, naming each one it learns
// as changed (a change made through another name may not have been reported under it). Called
// with mu held.
func (t *tree) relearn() error {
	t.unsure = false
	return t.look("", t.mark)
}

// attributes are path's file attributes, a reparse point's own.
func attributes(path string) (uint32, error) {
	p, err := windows.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return 0, err
	}
	a, err := windows.GetFileAttributes(p)
	if err != nil {
		return 0, &os.PathError{Op: "GetFileAttributes", Path: path, Err: err}
	}
	return a, nil
}
