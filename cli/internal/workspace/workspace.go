package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/agent-rewind/rewind/cli/internal/durable"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/regular"
)

// MetaDir is the name of the state directory at the workspace root.
const MetaDir = ".rewind"

// FormatVersion is the .rewind/ layout this program reads and writes.
const FormatVersion = 1

// ErrNotInitialized reports a workspace with no .rewind/ directory yet.
var ErrNotInitialized = errors.New("no agent-rewind state here")

// Workspace is an opened workspace.
type Workspace struct {
	Root string // absolute path of the workspace root, symlinks resolved
	Meta string // Root/.rewind

	mu    sync.Mutex
	chain *hashchain.Chain // opened by the first Record, closed by Close
}

// Open opens the workspace at root, which must already hold a .rewind/ directory.
func Open(root string) (*Workspace, error) {
	w, err := At(root)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(w.Meta); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s/ directory (run \"agent-rewind checkpoint\" there first, or pass --workspace)", ErrNotInitialized, w.Root, MetaDir)
	}
	return w, w.checkFormat()
}

// Init opens the workspace at root, creating its .rewind/ directory on first use.
func Init(root string) (*Workspace, error) {
	w, err := At(root)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(w.Meta, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create %s: %w", w.Meta, err)
	}
	err = w.checkFormat()
	if errors.Is(err, fs.ErrNotExist) {
		err = durable.WriteFile(w.Path("format"), []byte(strconv.Itoa(FormatVersion)+"\n"))
		if err == nil {
			err = durable.SyncDir(w.Root)
		}
	}
	return w, err
}

// At returns the workspace at root (an existing folder; symlinks resolved) without reading or
// creating its .rewind/ directory.
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
	meta := filepath.Join(abs, MetaDir)
	if st, err := os.Lstat(meta); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%s exists but is not a directory: agent-rewind keeps its state there; move that file away", meta)
	}
	return &Workspace{Root: abs, Meta: meta}, nil
}

// checkFormat reads .rewind/format; fs.ErrNotExist means a fresh directory.
func (w *Workspace) checkFormat() error {
	b, err := regular.ReadFile(w.Path("format"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("read %s: %w", w.Path("format"), err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 1 {
		return fmt.Errorf("%s holds %q, not a format version: the state directory is damaged; restore it from a backup", w.Path("format"), strings.TrimSpace(string(b)))
	}
	if v > FormatVersion {
		return fmt.Errorf("%s is format %d, newer than this agent-rewind understands (%d): upgrade agent-rewind", w.Meta, v, FormatVersion)
	}
	return nil
}

// Path joins elem onto the .rewind/ directory.
func (w *Workspace) Path(elem ...string) string {
	return filepath.Join(append([]string{w.Meta}, elem...)...)
}
