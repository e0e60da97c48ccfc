//go:build unix

package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// TestMigrationKilled: a migration across file systems (copy, compare, verify, then remove) is
// killed with SIGKILL at random points; the next command finishes or redoes it, and nothing is
// lost: every checkpoint is listed, the chain verifies, the spent effect is refused.
func TestMigrationKilled(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "rewind-e2e-state-")
	if err != nil {
		t.Skip("no /dev/shm, so no second file system:", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	var a, b syscall.Stat_t
	syscall.Stat(shm, &a)
	syscall.Stat(os.TempDir(), &b)
	if a.Dev == b.Dev {
		t.Skip("/dev/shm is on the temporary folder's file system")
	}
	t.Setenv(workspace.StateDirEnv, shm)
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	var window time.Duration
	for trial := range 8 {
		root, cp, before := legacyWorkspace(t, 400)
		cmd := exec.Command(bin, "list")
		cmd.Dir = root
		delay := killTrial(t, cmd, trial, r, &window)
		l := ok(t, root, "--json", "list")
		if !strings.Contains(l.stdout, cp) || !strings.Contains(l.stdout, "later") {
			t.Fatalf("trial %d (killed after %v): list after the kill lost checkpoints:\n%s\nstderr %s", trial, delay, l.stdout, l.stderr)
		}
		if _, err := os.Lstat(filepath.Join(root, workspace.LegacyDir)); !os.IsNotExist(err) {
			t.Fatalf("trial %d (killed after %v): .rewind/ still in the workspace: %v", trial, delay, err)
		}
		verifyChain(t, root)
		if g := guard(t, root, deployEffect, "--json"); g.code != 2 {
			t.Fatalf("trial %d (killed after %v): the spent effect was admitted: %+v", trial, delay, g)
		}
		ok(t, root, "rewind", cp)
		if d := treeDiff(before, readTree(t, root)); d != "" {
			t.Fatalf("trial %d (killed after %v): rewind not exact:\n%s", trial, delay, d)
		}
	}
}
