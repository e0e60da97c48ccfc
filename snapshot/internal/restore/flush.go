package restore

import (
	"io/fs"
	"os"
	"path"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Flush makes a restore's changes in the workspace root durable: the files written and the
// directories whose entries changed (touched, as Apply returns it). The caller's journal must
// stay until it returns: a crash before then redoes the restore. Above a few dozen paths one
// syncfs of the whole file system is cheaper than an fsync each. On Windows (FlushedByWriter)
// writeFile flushed each file through its own handle and NTFS logs the names: nothing is left.
func Flush(root string, touched map[string]bool) error {
	if platform.FlushedByWriter {
		return nil
	}
	if len(touched) > objects.FewFiles/2 {
		return platform.SyncFS(root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	var files, dirs []string
	seen := map[string]bool{}
	for p := range touched {
		files = append(files, p)
		if d := path.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	// Files and directories together: the order in which they reach the disk does not matter,
	// since the journal stays until every one has (a crash before that redoes the restore).
	// Files that are gone or are symlinks (no-follow opens fail) are covered by their directory.
	var g errgroup.Group
	g.Go(func() error {
		return objects.FsyncAll(dirs, func(d string) (*os.File, error) {
			f, err := platform.OpenDirInRoot(r, d)
			if err != nil {
				return nil, fs.ErrNotExist // removed itself: its parent is in the set
			}
			return f, nil
		})
	})
	g.Go(func() error {
		return objects.FsyncAll(files, func(p string) (*os.File, error) {
			// No blocking and the type check: a FIFO put there since must neither block nor
			// fail the restore (fsync of a FIFO is EINVAL); it is not restored content.
			f, err := platform.OpenInRoot(r, p)
			if err != nil {
				return nil, fs.ErrNotExist
			}
			if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
				f.Close()
				return nil, fs.ErrNotExist
			}
			return f, nil
		})
	})
	return g.Wait()
}
