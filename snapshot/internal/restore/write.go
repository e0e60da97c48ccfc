package restore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TempPrefix starts the names of a restore's temporary files in the workspace; a crash can leave
// one, which the recovery's restore deletes like any path the target does not have.
const TempPrefix = ".rewind-tmp-"

// bufPool holds the copy buffers of writeFile, one per file written in parallel.
var bufPool = sync.Pool{New: func() any { b := make([]byte, objects.SmallFile); return &b }}

// writeFile writes c.To's content to a temporary file beside it, sets its mode and renames it
// over the path, which replaces the name, never the inode it named: a reader sees the old file
// or the new one, never a mix, and other hard links to the old file keep the old file. The
// content is verified against its hash while copied; a damaged object fails before the rename.
func (a *applier) writeFile(c *manifest.Change) error {
	e := c.To
	src, err := a.o.Source.Open(e.Blob)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := tempSibling(e.Path)
	f, err := platform.CreateInRoot(a.root, tmp, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", a.full(e.Path), err)
	}
	bp := bufPool.Get().(*[]byte)
	_, err = io.CopyBuffer(f, src, *bp)
	bufPool.Put(bp)
	if err == nil && platform.FlushedByWriter {
		err = f.Sync() // before the mode may make it read-only: Flush cannot open it again to
	}
	if err == nil {
		err = platform.Fchmod(f, fileMode(e.Mode))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		a.root.Remove(tmp)
	} else {
		err = a.renameOver(tmp, c)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", a.full(e.Path), err)
	}
	return nil
}

// chmodFile restores the mode of a file whose content is right. It changes the mode of the very
// inode it verified (fchmod on a descriptor opened without following symlinks, after checking
// the stat; on Windows the read-only attribute alone), and only when that inode has no other link: chmod through a hard link would change
// the other names too, which may lie outside the workspace (pnpm's store, a `cp -al` copy). A
// file with other links gets a new inode instead, as a content change does (writeFile).
func (a *applier) chmodFile(c *manifest.Change) error {
	f, err := platform.OpenInRoot(a.root, c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return a.writeFile(c) // deleted since: the target's file harms nothing
	}
	if err != nil {
		if platform.IsSymlinkRefused(err) {
			a.leave(c.Path, reasonChanged, true, true) // a symlink now
			return nil
		}
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	defer f.Close()
	st, links, err := platform.FstatLinks(f)
	if err != nil {
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	if was, seen := a.o.Seen(c.Path); !seen || st != was {
		a.leave(c.Path, reasonChanged, true, true)
		return nil
	}
	if links > 1 {
		f.Close()
		return a.writeFile(c)
	}
	if err := platform.Fchmod(f, fileMode(c.To.Mode)); err != nil {
		return fmt.Errorf("restore the mode of %s: %w", a.full(c.Path), err)
	}
	return nil
}

// chmodDir sets a restored directory's mode (step 4), on a descriptor opened without following
// symlinks, so the mode lands on that directory and nothing else.
func (a *applier) chmodDir(e *manifest.Entry) error {
	if err := a.checkParents(e.Path); err != nil {
		return err
	}
	f, err := platform.OpenDirInRoot(a.root, e.Path)
	if err != nil {
		return fmt.Errorf("%w: %s is no longer a directory (%v)", ErrUnsafePath, a.full(e.Path), err)
	}
	defer f.Close()
	if err := platform.Fchmod(f, fileMode(e.Mode)); err != nil {
		return err
	}
	a.touch(e.Path)
	return nil
}

// tempSibling names a new temporary file in p's directory, so that a rename puts it at p.
func tempSibling(p string) string {
	return filepath.Join(filepath.Dir(p), TempPrefix+objects.RandomHex(8))
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
