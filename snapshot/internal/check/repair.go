package check

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// storeFromLive repairs missing and damaged contents that a file of the workspace still has: the
// file is copied into objects/tmp and, if the copy hashes to the content's name, a damaged loose
// copy is moved aside and the new one renamed into place (a loose copy is read before a packed
// one, so it also replaces a damaged packed copy).
func (c *checker) storeFromLive(ctx context.Context) error {
	if len(c.bad) == 0 {
		return nil
	}
	live, err := c.Store.LiveFiles(ctx)
	if err != nil {
		return err
	}
	for i := range live {
		e := &live[i]
		b, ok := c.bad[e.Blob]
		if e.Type != manifest.TypeFile || !ok {
			continue
		}
		stored, err := c.storeFrom(e.Blob, filepath.Join(c.Root, e.Path))
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
	f, err := platform.OpenNoFollow(full)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if err := os.MkdirAll(c.Objects.TmpDir(), 0o700); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(c.Objects.TmpDir(), "obj-*")
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
	name := c.Objects.Path(h)
	if _, err := os.Lstat(name); err == nil {
		if err := c.moveAside(c.rel(name)); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return false, err
	}
	if err := durable.RenameDirUnsynced(tmp.Name(), name); err != nil { // its folders are flushed below
		return false, fmt.Errorf("store %s again: %w", h, err)
	}
	// The whole content is read before its chunks: a damaged chunk list goes aside.
	if list := c.Objects.ListPath(h); c.Objects.HasList(h) {
		if err := c.moveAside(c.rel(list)); err != nil {
			return false, err
		}
	}
	// The fan-out folder may be new: its entry in objects/ is flushed too.
	return true, objects.FsyncAll([]string{filepath.Dir(name), filepath.Dir(filepath.Dir(name))}, platform.OpenToFlush)
}
