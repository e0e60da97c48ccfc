package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// A copy of a workspace (cp -a, a restored backup) whose original still exists continues the
// original's history in a store of its own: a fork, holding everything the original's store
// holds (checkpoints, contents, the chain and its anchor, the effect ledger, failure memory),
// so that the copy can rewind to the original's checkpoints and the effects spent there stay
// spent. Two folders never share a store.

// forkLinked are the store's folders whose files are written once and never changed: a fork
// hard-links them (they are also most of the bytes); everything else is copied.
var forkLinked = map[string]bool{"objects": true, "packs": true, "manifests": true, "checkpoints": true, "chunklists": true}

// forkLeft are what a fork leaves with the original: each store's own locks and chain stamp
// (kept by inode), the stat cache (it describes the original's files), the change watcher's
// socket and state, the gateway's tape databases (a running gateway may be writing them),
// quarantined files, staged objects, and the record, which the fork writes anew.
var forkLeft = map[string]bool{"lock": true, "chain.lock": true, "maintenance.lock": true, "chain.stamp": true,
	"index": true, "index-log": true, "watch": true, "storage": true, "quarantine": true, RecordFile: true}

// forkWait bounds the wait for each of the original store's locks.
const forkWait = 30 * time.Second

// fork makes a new store for the folder w holding a copy of store rec's history, through tmp/,
// under the original's writers' lock, ledger lock and chain lock (so that the copy is of one
// moment), and binds w's identity to it. A crash before the binding leaves a store no folder
// names, which gc --orphans lists.
func (w *Workspace) fork(reg registry, rec Record) (Record, error) {
	src := reg.storeDir(rec.ID)
	if _, err := os.Lstat(filepath.Join(src, "journal")); err == nil {
		return Record{}, fmt.Errorf("store %s has a rewind or restore in flight: run any agent-rewind command in %s to finish it, then adopt again", rec.ID, rec.Root)
	}
	for _, name := range []string{filepath.Join(src, "lock"), filepath.Join(src, EffectsDir, "lock"), filepath.Join(src, "chain.lock")} {
		release, err := waitLock(name)
		if err != nil {
			return Record{}, fmt.Errorf("copy the history of store %s: %w", rec.ID, err)
		}
		defer release()
	}
	id, err := newID()
	if err != nil {
		return Record{}, err
	}
	// Under the registry's lock no fork or migration is in flight: what tmp/ holds, a killed
	// one left (a migration redoes its copy).
	if err := os.RemoveAll(filepath.Join(w.Base, "tmp")); err != nil {
		return Record{}, err
	}
	tmp := filepath.Join(w.Base, "tmp", id)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o700); err != nil {
		return Record{}, err
	}
	fail := func(err error) (Record, error) {
		os.RemoveAll(tmp)
		return Record{}, fmt.Errorf("copy the history of store %s: %w (nothing was changed)", rec.ID, err)
	}
	if err := forkTree(src, tmp); err != nil {
		return fail(err)
	}
	anchor := reg.anchor(id)
	if b, err := os.ReadFile(reg.anchor(rec.ID)); err == nil {
		if err := os.MkdirAll(filepath.Dir(anchor), 0o700); err != nil {
			return fail(err)
		}
		if err := durable.WriteFile(anchor, b, 0o600); err != nil {
			return fail(err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if err := verifyChain(tmp, anchor); err != nil {
		os.RemoveAll(filepath.Dir(anchor))
		return fail(fmt.Errorf("the copied chain does not verify: %w", err))
	}
	from := rec.ID
	nrec := Record{Version: RecordVersion, ID: id, Root: w.Root, Identity: w.Identity, Created: time.Now().UTC(), ForkedFrom: from}
	if err := writeRecord(tmp, nrec); err != nil {
		return fail(err)
	}
	if err := durable.Rename(tmp, reg.storeDir(id)); err != nil {
		return fail(err)
	}
	return nrec, reg.bind(w.Identity, id)
}

// waitLock takes the exclusive flock on the existing file name, waiting up to forkWait (a store
// without that file has nothing it guards: a no-op).
func waitLock(name string) (func(), error) {
	if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	for deadline := time.Now().Add(forkWait); ; time.Sleep(20 * time.Millisecond) {
		f, err := lockfile.Open(name, lockfile.Exclusive|lockfile.NonBlocking)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is held for more than %s (its workspace is busy): try again when its agent is idle", name, forkWait)
		}
	}
}

// forkTree copies the store src into the new folder dst, as fork says: the write-once folders
// hard-linked (copied where a link cannot be made), the rest copied, what stays with the
// original left out; every folder made is flushed.
func forkTree(src, dst string) error {
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		if forkLeft[d.Name()] && (rel == d.Name() || d.Name() == "lock") || rel == filepath.Join("objects", "tmp") || strings.HasPrefix(d.Name(), ".tmp-") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, to)
			return os.MkdirAll(to, 0o700)
		case d.Type().IsRegular() && forkLinked[top]:
			if err := os.Link(p, to); err == nil {
				return nil
			}
			return copyFile(p, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // nothing else is the store's
	})
	if err != nil {
		return err
	}
	for _, d := range append(dirs, dst) {
		if err := durable.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
