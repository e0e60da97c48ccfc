package restore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// put makes the live path of c equal c.To.
func (a *applier) put(c *manifest.Change) error {
	e := c.To
	if a.skipBlocked(e.Path) {
		return nil
	}
	if err := a.checkParents(e.Path); err != nil {
		return err
	}
	var err error
	switch e.Type {
	case manifest.TypeDir:
		if c.Kind == manifest.ChangeMode {
			return nil // step 4 sets it
		}
		err = a.makeDir(e)
	case manifest.TypeFile:
		if c.Kind == manifest.ChangeMode {
			err = a.chmodFile(c)
		} else {
			err = a.writeFile(c)
		}
	case manifest.TypeSymlink:
		err = a.putSymlink(c)
	default:
		return nil
	}
	if err != nil || a.isBlocked(e.Path) {
		return err // or left alone after all (changed or created during the restore): not written
	}
	a.touch(e.Path)
	return nil
}

// makeDir creates the directory e, writable by its owner only until step 4 sets its mode. A
// directory already there is one step 1 kept (it holds excluded paths); anything else there was
// created during the restore and is left alone.
func (a *applier) makeDir(e *manifest.Entry) error {
	err := a.root.Mkdir(e.Path, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if fi, lerr := a.root.Lstat(e.Path); lerr == nil && fi.IsDir() {
			err = nil
		} else if lerr == nil {
			a.leave(e.Path, reasonCreated, true, true)
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("create directory %s: %w", a.full(e.Path), err)
	}
	return nil
}

// putSymlink creates c.To's symlink beside its path and renames it over the path, if the live
// path may be replaced.
func (a *applier) putSymlink(c *manifest.Change) error {
	e := c.To
	tmp := tempSibling(e.Path)
	if err := a.root.Symlink(e.Target, tmp); err != nil {
		return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
	}
	if err := a.renameOver(tmp, c); err != nil {
		return fmt.Errorf("create symlink %s: %w", a.full(e.Path), err)
	}
	return nil
}

// renameOver renames the temporary sibling tmp over c's path if the live path may be replaced
// (replaceable), and removes tmp otherwise.
func (a *applier) renameOver(tmp string, c *manifest.Change) error {
	ok, err := a.replaceable(c)
	if err == nil && ok {
		err = platform.RenameInRoot(a.root, tmp, c.Path) // on Windows, a file held open is tried again briefly
	}
	if err != nil || !ok {
		a.root.Remove(tmp)
	}
	return err
}
