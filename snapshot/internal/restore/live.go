package restore

import (
	"errors"
	"io/fs"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Reasons for paths left alone while applying (Kept.Reason).
const (
	reasonChanged = "changed after the safety checkpoint captured it (in use during the restore?): left as it is, so nothing of it is lost; the target's version was not restored"
	reasonCreated = "created during the restore, after the safety checkpoint: left as it is, so nothing of it is lost; the target's version was not restored"
	reasonInside  = "inside a path the restore left alone; not restored"
)

func (a *applier) touch(p string) {
	a.mu.Lock()
	a.touched[p] = true
	a.mu.Unlock()
}

// leave records that p is left alone, and why; with block, nothing under p is written either.
func (a *applier) leave(p, reason string, inUse, block bool) {
	a.mu.Lock()
	a.kept = append(a.kept, Kept{Path: p, Reason: reason, Live: inUse})
	if block {
		a.blocked[p] = true
	}
	a.mu.Unlock()
}

// isBlocked reports whether p or one of its parents was left alone by leave(…, block).
func (a *applier) isBlocked(p string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.blocked) == 0 {
		return false
	}
	for i := len(p); i > 0; i-- {
		if (i == len(p) || p[i] == '/') && a.blocked[p[:i]] {
			return true
		}
	}
	return false
}

// skipBlocked reports whether p is under a path left alone, reporting p too unless it is that
// path itself (already reported).
func (a *applier) skipBlocked(p string) bool {
	if !a.isBlocked(p) {
		return false
	}
	a.mu.Lock()
	reported := a.blocked[p]
	a.mu.Unlock()
	if !reported {
		a.leave(p, reasonInside, true, false)
	}
	return true
}

// unchanged reports whether the live path p still has the stat the live capture recorded (fi is
// its lstat now), so that replacing or deleting it loses nothing the safety checkpoint lacks.
// Directories are only checked to be directories: the restore itself changes their stat.
func (a *applier) unchanged(p string, fi fs.FileInfo) bool {
	was, ok := a.o.Seen(p)
	if !ok {
		return false
	}
	if fi.IsDir() {
		return was.IsDir()
	}
	st, ok := platform.FileInfoStat(fi)
	if !ok { // Windows: a FileInfo has no file ID nor change time; the path is statted for them
		var err error
		if st, err = platform.Lstat(a.full(p)); err != nil {
			return false
		}
	}
	return st == was
}

// vacant reports whether nothing occupies p, where the restore creates a path (an added one, or
// one whose live entry step 1 removed); something there appeared during the restore and is left
// alone.
func (a *applier) vacant(p string) (bool, error) {
	_, err := a.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	a.leave(p, reasonCreated, true, true)
	return false, nil
}

// replaceable reports whether the live p may be replaced by a rename: for a change of content or
// target, it must still be what the live capture saw; for a creation, nothing may be there.
func (a *applier) replaceable(c *manifest.Change) (bool, error) {
	if c.Kind != manifest.ChangeModified && c.Kind != manifest.ChangeMode {
		return a.vacant(c.Path)
	}
	fi, err := a.root.Lstat(c.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // deleted since: the target's version harms nothing
	}
	if err != nil {
		return false, err
	}
	if !a.unchanged(c.Path, fi) {
		a.leave(c.Path, reasonChanged, true, true)
		return false, nil
	}
	return true, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special file"
}
