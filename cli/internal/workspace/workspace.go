package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/trust"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot"
)

// LegacyDir is where stores lived before they left the workspace: <root>/.rewind. Open and
// Init move such a store into the state base (migrate.go).
const LegacyDir = ".rewind"

// FormatVersion is the store layout this program reads and writes. Version 2 split manifests by
// directory and added the stat cache's log; version 3 stores large files in chunks
// (snapshot/FORMAT.md). Each reads every older store as it is; an older store is marked 3 when
// this program opens it, so that an older agent-rewind, which cannot read what this one writes,
// says to upgrade instead of failing on a manifest or calling a chunked content missing.
const FormatVersion = 3

// ErrNotInitialized reports a workspace that has no store yet.
var ErrNotInitialized = errors.New("no agent-rewind state here")

// ErrStateInWorkspace reports a workspace that contains the state folder (the user's home,
// say): it can have no store, since a checkpoint would capture every store and a rewind change
// them.
var ErrStateInWorkspace = errors.New("the workspace contains agent-rewind's state folder")

// Log receives the one-line notices a person should see once: a store moved out of the
// workspace, a workspace found again after a move, a history left at the same path by an
// earlier folder. It is stderr: an MCP server's stdout carries only the protocol.
var Log io.Writer = os.Stderr

// Workspace is an opened workspace.
type Workspace struct {
	Root     string   // absolute path of the workspace root, symlinks resolved
	Meta     string   // the store, set by Open and Init: <state base>/stores/<ID>, or a legacy <Root>/.rewind not yet moved
	ID       string   // the store's id ("" for a legacy store that could not be moved yet)
	Base     string   // the state base (StateBase)
	Identity Identity // the root folder's identity, which finds the store again
	Info     Record   // the store's description (store.json), set by Open and Init
	// ChainSyncLater, set before the first Record by a guard server, defers the chain's
	// sidecar and anchor to its group commit (hashchain.Options.SyncLater); nil: each entry is
	// durable whole when Record returns.
	ChainSyncLater func(key string, flush func() error)

	anchor string   // the chain's anchor file
	metaID Identity // the store folder's identity when opened (Check)
	found  *Record  // the store's record as Probe read it, for OpenStore to use without reading again
	mu     sync.Mutex
	chain  *hashchain.Chain // opened by the first Record, closed by Close
}

// Open opens the workspace at root, which must already have a store (or a legacy .rewind/,
// which is moved into the state base first).
func Open(root string) (*Workspace, error) {
	w, err := At(root)
	if err != nil {
		return nil, err
	}
	return w, w.open(false)
}

// Init opens the workspace at root, creating its store on first use.
func Init(root string) (*Workspace, error) {
	w, err := At(root)
	if err != nil {
		return nil, err
	}
	return w, w.open(true)
}

// At returns the workspace at root (an existing folder; symlinks resolved) without finding,
// reading or creating its store: Meta is empty until Open or Init, which also refuse a
// workspace that contains the state folder (ErrStateInWorkspace).
func At(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", root, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w (pass an existing folder with --workspace)", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory (pass a folder with --workspace)", root)
	}
	id, err := identityOf(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", root, err)
	}
	base, err := TrustedStateBase()
	if err != nil {
		return nil, err
	}
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		base = resolved
	}
	return &Workspace{Root: abs, Base: base, Identity: id}, nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// open finds the workspace's store (moving a legacy one out of the workspace first) and, with
// create, makes one when there is none.
func (w *Workspace) open(create bool) error {
	if within(w.Base, w.Root) {
		return fmt.Errorf("%w: the state folder %s is inside the workspace %s: a checkpoint would capture it and a rewind, git clean or rm -rf could erase it; choose a folder outside the workspace with --state-dir or %s", ErrStateInWorkspace, w.Base, w.Root, StateDirEnv)
	}
	if rec := w.found; rec != nil {
		w.found = nil
		return w.use(*rec)
	}
	reg := registry{w.Base}
	rec, ok, err := reg.find(w.Identity)
	if err != nil {
		return err
	}
	if ok {
		return w.use(rec)
	}
	if st, err := os.Lstat(w.legacyDir()); err == nil && st.IsDir() {
		return w.migrate()
	}
	if !create {
		return &notInitializedError{w}
	}
	return w.create()
}

// notInitializedError is ErrNotInitialized for one workspace. Its message is made only when it
// is printed: the hint scans the registry, which a guard's hot path must not pay for.
type notInitializedError struct{ w *Workspace }

func (e *notInitializedError) Error() string {
	return fmt.Sprintf("%v: %s has no store in %s (run \"agent-rewind checkpoint\" there first, or pass --workspace)%s", ErrNotInitialized, e.w.Root, e.w.Base, e.w.earlierHint())
}

func (e *notInitializedError) Unwrap() error { return ErrNotInitialized }

// earlierHint names the stores a person may want to continue here: of an earlier folder at
// this path, or of a gone folder with this folder's name (moved here from another file system).
func (w *Workspace) earlierHint() string {
	if prev := w.earlier(); len(prev) > 0 {
		r := prev[len(prev)-1]
		return fmt.Sprintf("; a store of an earlier folder at this path exists (store %s, created %s): to continue its history here, run \"agent-rewind store --adopt %s\"", r.ID, r.Created.Local().Format(time.DateTime), r.ID)
	}
	if orig, cp, ok := w.copyOf(); ok {
		if alive, _ := (registry{w.Base}).alive(orig); !alive {
			return fmt.Sprintf("; if this folder was moved here from %s (that folder is gone, and this one holds what its checkpoint %s holds), run \"agent-rewind store --adopt %s\" to continue its history (store %s)", orig.Root, cp, orig.ID, orig.ID)
		}
		return fmt.Sprintf("; %s looks like a copy of %s (it holds what that folder's checkpoint %s holds): to continue that history here, its checkpoints and its spent effects, run \"agent-rewind store --adopt %s\"", w.Root, orig.Root, cp, orig.ID)
	}
	reg := registry{w.Base}
	recs, _, _ := reg.all()
	for _, r := range recs {
		if filepath.Base(r.Root) != filepath.Base(w.Root) || r.Root == w.Root {
			continue
		}
		if alive, _ := reg.alive(r); !alive {
			return fmt.Sprintf("; if this folder was moved here from %s (another file system, so it is a new folder to agent-rewind), run \"agent-rewind store --adopt %s\" to continue its history (store %s)", r.Root, r.ID, r.ID)
		}
	}
	return "; \"agent-rewind gc --orphans --dry-run\" lists the stores whose folder is gone, which \"agent-rewind store --adopt ID\" continues here"
}

// earlier returns the records of stores made for another folder at this workspace's path,
// oldest first. It scans the registry: only for messages, never on a command's hot path.
func (w *Workspace) earlier() []Record {
	recs, _, _ := registry{w.Base}.all()
	var out []Record
	for _, r := range recs {
		if r.Root == w.Root && !r.Identity.same(w.Identity) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return a.Created.Compare(b.Created) })
	return out
}

// create makes a new store for the workspace, under the registry's lock. The identity entry is
// written last: a store killed half-made is never found, and is listed by gc --orphans.
func (w *Workspace) create() error {
	return w.unlessRegistered(func(registry) error {
		return w.createNew()
	})
}

// createNew is create under the registry's lock. A new folder at the path of an earlier one,
// or one that looks like a copy of another workspace (copyOf), starts a new history and is told
// so, with the way to continue the other's instead (store --adopt), which its record offers.
func (w *Workspace) createNew() error {
	prev := w.earlier()
	if err := w.createLocked(); err != nil {
		return err
	}
	if len(prev) > 0 {
		p := prev[len(prev)-1]
		fmt.Fprintf(Log, "agent-rewind: %s is a new folder (not the one that had store %s at this path), so it starts a new history in store %s; to continue the old one instead, run \"agent-rewind store --adopt %s\"\n", w.Root, p.ID, w.ID, p.ID)
		return w.offer(p.ID)
	}
	if orig, cp, ok := w.copyOf(); ok {
		what := "looks like a copy of " + orig.Root
		if alive, _ := (registry{w.Base}).alive(orig); !alive {
			what = "looks like " + orig.Root + " moved or copied here (that folder is gone)"
		}
		fmt.Fprintf(Log, "agent-rewind: %s %s (it holds what that folder's checkpoint %s holds), so it starts a new history in store %s, and the effects spent there are not spent here; to continue that history here instead, its checkpoints and its spent effects, run \"agent-rewind store --adopt %s\"\n", w.Root, what, cp, w.ID, orig.ID)
		return w.offer(orig.ID)
	}
	return nil
}

// offer notes in the new store's record that store id's history was offered to it.
func (w *Workspace) offer(id string) error {
	w.Info.Offered = id
	return writeRecord(w.Meta, w.Info)
}

// copyOf returns the store of another folder whose workspace the folder w looks like a copy of
// (snapshot.Resembles), and that store's current checkpoint: the oldest such store, the
// original's rather than that of an earlier copy. It reads each store's record, position and
// top folder: only when a store is made, or for the message of a folder that has none.
func (w *Workspace) copyOf() (Record, string, bool) {
	recs, _, _ := registry{w.Base}.all()
	slices.SortFunc(recs, func(a, b Record) int { return a.Created.Compare(b.Created) })
	for _, r := range recs {
		if r.ID == w.ID || r.Root == w.Root {
			continue
		}
		if cp, ok := snapshot.Resembles(registry{w.Base}.storeDir(r.ID), w.Root); ok {
			return r, cp, true
		}
	}
	return Record{}, "", false
}

// unlessRegistered runs fn under the registry's lock, unless the folder already has a store
// there (another process made or moved it meanwhile): then it uses that store.
func (w *Workspace) unlessRegistered(fn func(reg registry) error) error {
	reg := registry{w.Base}
	unlock, err := reg.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if rec, ok, err := reg.find(w.Identity); err != nil || ok {
		if err != nil {
			return err
		}
		return w.use(rec)
	}
	return fn(reg)
}

// writeFormat writes the format file of the store in dir: this program's FormatVersion.
func writeFormat(dir string) error {
	return durable.WriteFile(filepath.Join(dir, "format"), []byte(strconv.Itoa(FormatVersion)+"\n"), 0o600)
}

// initStore writes a new store's .gitignore, format file and record into dir.
func initStore(dir string, rec Record) error {
	if err := ignoreAll(dir); err != nil {
		return err
	}
	if err := writeFormat(dir); err != nil {
		return err
	}
	return writeRecord(dir, rec)
}

// use opens the store of rec: it notes a move of the workspace folder in the record, and
// finishes a migration that was killed before it removed the legacy folder.
func (w *Workspace) use(rec Record) error {
	reg := registry{w.Base}
	w.ID, w.Meta, w.anchor, w.Info = rec.ID, reg.storeDir(rec.ID), reg.anchor(rec.ID), rec
	if err := w.checkFormat(); err != nil {
		return err
	}
	if rec.Root != w.Root {
		from := rec.Root
		rec.Root, w.Info.Root = w.Root, w.Root
		if err := writeRecord(w.Meta, rec); err != nil {
			return fmt.Errorf("note the workspace's new path in its store: %w", err)
		}
		fmt.Fprintf(Log, "agent-rewind: workspace found at its new path %s (it was %s); its store %s follows it\n", w.Root, from, rec.ID)
	}
	if rec.MigratedFrom == w.legacyDir() {
		if _, err := os.Lstat(rec.MigratedFrom); err == nil {
			if err := os.RemoveAll(rec.MigratedFrom); err != nil {
				return fmt.Errorf("remove %s, already moved to %s: %w (remove it by hand)", rec.MigratedFrom, w.Meta, err)
			}
			fmt.Fprintf(Log, "agent-rewind: removed %s, left behind by an interrupted move of the store to %s\n", rec.MigratedFrom, w.Meta)
		}
	}
	// The base is trusted (At); what is below it is too, unless another user made it while the
	// base was open to them, or root did (a command run with sudo).
	if err := trust.Within(w.Base, w.Meta); err != nil {
		return fmt.Errorf("the store of workspace %s is not safe to use: %w", w.Root, err)
	}
	var err error
	w.metaID, err = identityOf(w.Meta)
	return err
}

func (w *Workspace) legacyDir() string { return filepath.Join(w.Root, LegacyDir) }

// checkFormat reads the store's format file; fs.ErrNotExist means a fresh directory.
func (w *Workspace) checkFormat() error {
	b, err := regular.ReadFile(w.Path("format"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the store %s of workspace %s has no format file: it is damaged or was removed; restore it from a backup, or remove %s to start a new history: %w", w.Meta, w.Root, w.Meta, err)
		}
		return fmt.Errorf("read %s: %w", w.Path("format"), err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 1 {
		return fmt.Errorf("%s holds %q, not a format version: the store is damaged; restore it from a backup", w.Path("format"), strings.TrimSpace(string(b)))
	}
	if v > FormatVersion {
		return fmt.Errorf("%s is format %d, newer than this agent-rewind understands (%d): upgrade agent-rewind", w.Meta, v, FormatVersion)
	}
	if v < FormatVersion {
		if err := writeFormat(w.Meta); err != nil {
			return fmt.Errorf("mark the store %s as format %d: %w", w.Meta, FormatVersion, err)
		}
		fmt.Fprintf(Log, "agent-rewind: the store %s is now format %d (everything in it is read as before; agent-rewind versions older than this one will ask to be upgraded)\n", w.Meta, FormatVersion)
	}
	return nil
}

// Path joins elem onto the store's folder.
func (w *Workspace) Path(elem ...string) string {
	return filepath.Join(append([]string{w.Meta}, elem...)...)
}
