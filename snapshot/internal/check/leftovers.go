package check

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// leftovers reports (and with Repair moves aside) what interrupted writes of this module left:
// temporary files of durable writes, staged objects and files, and packs an interrupted write
// cut short. The lock is held, so none of them belongs to a write in progress; each is benign
// (nothing refers to it, and the next writer or gc removes it).
func (c *checker) leftovers() error {
	sec := c.section("leftovers")
	var found []string
	// In the state directory itself only this module's files are ours (other modules write
	// theirs there under their own locks).
	stateNames, err := platform.ReadDirNames(c.StateDir)
	if err != nil {
		return err
	}
	for _, dir := range []string{"checkpoints", "manifests"} {
		names, err := platform.ReadDirNames(filepath.Join(c.StateDir, dir))
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.HasPrefix(n, ".tmp-") {
				found = append(found, filepath.Join(dir, n))
			}
		}
	}
	objLeft, err := c.Objects.Leftovers()
	if err != nil {
		return err
	}
	found = append(found, objLeft...)
	for _, n := range stateNames {
		if c.Store.OwnTemp(n) {
			found = append(found, n)
		}
	}
	slices.Sort(found)
	sec.Checked = len(found)
	for _, rel := range found {
		by := "the next checkpoint, rewind or gc removes it"
		if d := filepath.Dir(rel); d == "checkpoints" || d == "manifests" { // staged there by versions before 2026-12
			by = "gc removes it"
		}
		p := Problem{Kind: "leftover", Where: filepath.ToSlash(rel), Benign: true,
			What: "left by an interrupted write; nothing refers to it",
			Fix:  by + "; check --repair moves it aside to quarantine/ now"}
		if c.Options.Repair {
			if err := c.moveAside(rel); err != nil {
				return err
			}
			p.Repaired = true
		}
		sec.Problems = append(sec.Problems, p)
	}
	return nil
}

// moveAside moves the state directory's file rel into the quarantine directory, keeping its
// relative path, durably.
func (c *checker) moveAside(rel string) error {
	to := filepath.Join(c.quarantine, rel)
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return fmt.Errorf("move %s aside: %w", rel, err)
	}
	from := filepath.Join(c.StateDir, rel)
	if err := durable.Rename(from, to); err != nil {
		return fmt.Errorf("move %s aside: %w", rel, err)
	}
	return durable.SyncDir(filepath.Dir(from))
}
