package hashchain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// The anchor (FORMAT.md §7) is a copy of the chain's latest head kept outside the workspace, so
// that cutting or rewriting the chain file inside it is noticed on the next open.

// AnchorPath returns the path-keyed anchor file for the workspace at root, as agent-rewind used
// before its stores left the workspace (it now keys anchors by store id, hashchain/FORMAT.md §7):
// $REWIND_STATE_DIR/<hex SHA-256 of the absolute root>/head, where REWIND_STATE_DIR defaults to
// $XDG_STATE_HOME/agent-rewind, or ~/.local/state/agent-rewind.
func AnchorPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("anchor for workspace %q: %w", root, err)
	}
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:]), "head"), nil
}

// StateDir returns the directory that holds anchors: $REWIND_STATE_DIR, else
// $XDG_STATE_HOME/agent-rewind (when absolute, as the XDG spec requires), else
// ~/.local/state/agent-rewind.
func StateDir() (string, error) {
	if d := os.Getenv("REWIND_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agent-rewind"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory for the chain's anchor: %w (set REWIND_STATE_DIR or HOME)", err)
	}
	return filepath.Join(home, ".local", "state", "agent-rewind"), nil
}

// readAnchor reads the anchored head; ok is false when there is none yet.
func readAnchor(path string) (h Head, ok bool, err error) {
	b, err := regular.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Head{}, false, nil
	}
	if err != nil {
		return Head{}, false, fmt.Errorf("read chain anchor: %w", err)
	}
	h, _, err = ParseHead(b)
	if err != nil {
		return Head{}, false, fmt.Errorf("chain anchor %s is damaged: %w (remove it to anchor the chain as it is now)", path, err)
	}
	return h, true, nil
}

// writeAnchor stores h durably at path, creating its directory (0700) on first use.
func writeAnchor(path string, h Head) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create anchor directory: %w", err)
		}
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	if err := durable.WriteFile(path, []byte(h.Checkpoint()), 0o600); err != nil {
		return fmt.Errorf("write chain anchor %s: %w", path, err)
	}
	return nil
}
