package restore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// remove deletes the live entry of c, if it is still what the live capture saw. A directory that
// still holds paths the restore does not touch (excluded, uncaptured, or created during the
// restore) is kept, and nothing replaces it.
func (a *applier) remove(c *manifest.Change) error {
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
	err = platform.RemoveInRoot(a.root, c.Path) // unlink or rmdir: never follows a symlink; on Windows, held is tried again briefly
	if fi.IsDir() {
		a.forgetVerified(c.Path)
	}
	if err != nil && fi.IsDir() && platform.IsNotEmpty(err) {
		if c.Kind == manifest.ChangeType {
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
