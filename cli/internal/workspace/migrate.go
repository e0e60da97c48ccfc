package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// migrate moves a legacy <root>/.rewind store into the state base, under the registry's lock
// and the store's own writer lock. Every step can be killed and is redone by the next open:
//
//  1. .gitignore ("*") in the legacy folder, so git never stages it meanwhile;
//  2. store.json in the legacy folder, with the new id (kept by a redo);
//  3. the chain verified against its old, path-keyed anchor, which is copied to the new one;
//  4. the identity bound to the id (found only once the store is in place);
//  5. the folder renamed into stores/; across file systems, copied to tmp/, compared file by
//     file, its chain verified again, renamed into stores/, and only then the legacy removed
//     (a kill before the removal is finished by the next open: use).
//
// A legacy store whose chain does not verify is not moved: it keeps working in place (every
// writer reports the broken chain, as before) and the message says why.
func (w *Workspace) migrate() error {
	return w.unlessRegistered(w.migrateLocked)
}

// migrateLocked is migrate under the registry's lock.
func (w *Workspace) migrateLocked(reg registry) error {
	legacy := w.legacyDir()
	if _, err := os.Lstat(legacy); err != nil {
		return w.createLocked()
	}
	release, err := lockFile(filepath.Join(legacy, "lock"))
	if err != nil {
		return err
	}
	defer release()
	if err := ignoreAll(legacy); err != nil {
		return fmt.Errorf("make git ignore %s: %w", legacy, err)
	}
	if _, err := os.Stat(filepath.Join(legacy, "format")); errors.Is(err, fs.ErrNotExist) {
		if err := writeFormat(legacy); err != nil {
			return err
		}
	}
	rec := Record{Version: RecordVersion, Root: w.Root, Identity: w.Identity, Created: time.Now().UTC(), MigratedFrom: legacy}
	if old, err := readRecordIn(legacy); err == nil && validID(old.ID) {
		rec.ID, rec.Created = old.ID, old.Created // a redo keeps the id of the interrupted move
	} else if rec.ID, err = newID(); err != nil {
		return err
	}
	if err := writeRecord(legacy, rec); err != nil {
		return err
	}
	oldAnchor, err := hashchain.AnchorPath(w.Root)
	if err != nil {
		return err
	}
	if err := verifyChain(legacy, oldAnchor); err != nil {
		w.ID, w.Meta, w.anchor = "", legacy, oldAnchor
		fmt.Fprintf(Log, "agent-rewind: the store %s was not moved out of the workspace, because its chain does not verify (%v); it keeps working in place until the chain is repaired (agent-rewind chain verify)\n", legacy, err)
		w.metaID, _ = identityOf(legacy)
		return w.checkFormat()
	}
	if err := copyFile(oldAnchor, reg.anchor(rec.ID)); err != nil {
		return fmt.Errorf("copy the chain's anchor: %w", err)
	}
	if err := reg.bind(w.Identity, rec.ID); err != nil {
		return err
	}
	dst := reg.storeDir(rec.ID)
	err = durable.Rename(legacy, dst)
	if errors.Is(err, errCrossDevice) {
		err = copyStore(legacy, dst, filepath.Join(w.Base, "tmp", rec.ID), reg.anchor(rec.ID))
	}
	if err != nil {
		return fmt.Errorf("move the store %s to %s: %w (it stays where it is and keeps working)", legacy, dst, err)
	}
	if err := durable.SyncDir(w.Root); err != nil {
		return err
	}
	os.RemoveAll(filepath.Dir(oldAnchor))
	fmt.Fprintf(Log, "agent-rewind: moved this workspace's store from %s to %s, outside the workspace, where git clean and rm -rf cannot reach it; \"agent-rewind store\" shows where it is\n", legacy, dst)
	return w.use(rec)
}

// createLocked makes a new store for a caller that holds the registry's lock.
func (w *Workspace) createLocked() error {
	id, err := newID()
	if err != nil {
		return err
	}
	reg := registry{w.Base}
	dir := reg.storeDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create the store %s: %w", dir, err)
	}
	rec := Record{Version: RecordVersion, ID: id, Root: w.Root, Identity: w.Identity, Created: time.Now().UTC()}
	if err := initStore(dir, rec); err != nil {
		return err
	}
	if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := reg.bind(w.Identity, id); err != nil {
		return err
	}
	return w.use(rec)
}

// readRecordIn reads the store.json in dir.
func readRecordIn(dir string) (Record, error) {
	return registry{filepath.Dir(filepath.Dir(dir))}.record(filepath.Base(dir))
}

// verifyChain verifies the chain in dir (if there is one) against the anchored head.
func verifyChain(dir, anchor string) error {
	chain := filepath.Join(dir, ChainFile)
	if _, err := os.Stat(chain); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var opts hashchain.VerifyOptions
	if text, err := os.ReadFile(anchor); err == nil {
		h, _, err := hashchain.ParseHead(text)
		if err != nil {
			return fmt.Errorf("the anchor %s is damaged: %w", anchor, err)
		}
		opts.Head = &h
	}
	_, err := hashchain.VerifyFile(chain, opts)
	return err
}

// copyStore copies the store src to dst through tmp (across file systems), compares every
// file's size, verifies the copied chain, and removes src only once dst is in place.
func copyStore(src, dst, tmp, anchor string) error {
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(tmp), 0o700); err != nil {
		return err
	}
	if err := copyTree(src, tmp); err != nil {
		return err
	}
	if err := sameTree(src, tmp); err != nil {
		return fmt.Errorf("the copy differs from the original (%w); nothing was removed", err)
	}
	if err := verifyChain(tmp, anchor); err != nil {
		return fmt.Errorf("the copied chain does not verify (%w); nothing was removed", err)
	}
	if err := durable.Rename(tmp, dst); err != nil {
		return err
	}
	return os.RemoveAll(src)
}

// copyTree copies the folder src to dst: folders, regular files (fsynced) and symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // sockets and the like: nothing of the store
	})
}

// copyFile copies the regular file src to dst durably (a missing src copies nothing).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	return durable.WriteFile(dst, b, 0o600)
}

// sameTree compares the names, types and sizes of every entry under a and b.
func sameTree(a, b string) error {
	sizes := map[string]int64{}
	err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			st, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(a, p)
			sizes[rel] = st.Size()
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(b, p)
		st, err := d.Info()
		if err != nil {
			return err
		}
		want, ok := sizes[rel]
		if !ok || want != st.Size() {
			return fmt.Errorf("%s: %d bytes, the original %d", rel, st.Size(), want)
		}
		delete(sizes, rel)
		return nil
	})
	if err != nil {
		return err
	}
	for rel := range sizes {
		return fmt.Errorf("%s was not copied", rel)
	}
	return nil
}

// lockFile takes an exclusive lock (flock(2), LockFileEx) on name (made if missing) until release is called.
func lockFile(name string) (release func(), err error) {
	f, err := lockfile.Open(name, lockfile.Exclusive)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
