package baseline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

func tree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	if _, err := workspace.Generate(context.Background(), root, workspace.Shape{Files: 200, Bytes: 400 << 10, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestShadowGitCheckpointAndRestore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the shadow-git baseline cannot be tested")
	}
	ctx := context.Background()
	root := tree(t)
	if err := os.Mkdir(filepath.Join(root, ".rewind"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(root, ".rewind", "keep")
	if err := os.WriteFile(keep, []byte("state"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := InitShadowGit(ctx, filepath.Join(t.TempDir(), "shadow.git"), root, "/.rewind/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Wall <= 0 || s.MaxRSS <= 0 {
		t.Errorf("checkpoint sample %+v", s)
	}
	rev, err := g.Head(ctx)
	if err != nil || len(rev) < 40 {
		t.Fatalf("head %q, %v", rev, err)
	}
	// git tracks no empty directories, and "git clean -fd" removes them: restore once so that
	// the reference state is what git can give back, then change, checkpoint and restore again.
	if _, err := g.Restore(ctx, rev); err != nil {
		t.Fatal(err)
	}
	before, err := workspace.Listing(root, ".rewind")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.MakeChanges(root, 10, 5, ".rewind"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Restore(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if after, err := workspace.Listing(root, ".rewind"); err != nil || after != before {
		t.Errorf("after git reset+clean the tree differs from the checkpoint (%v)", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "state" {
		t.Errorf("git clean touched the excluded .rewind/: %q %v", b, err)
	}
	if n, err := g.Size(); err != nil || n == 0 {
		t.Errorf("size %d, %v", n, err)
	}
	if _, err := InitShadowGit(ctx, g.GitDir, root); err == nil {
		t.Error("InitShadowGit over an existing repository succeeded")
	}
}

func TestStatWalkAndFind(t *testing.T) {
	root := tree(t)
	if err := os.MkdirAll(filepath.Join(root, ".rewind", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	all, err := StatWalk(root)
	if err != nil {
		t.Fatal(err)
	}
	some, err := StatWalk(root, ".rewind")
	if err != nil {
		t.Fatal(err)
	}
	if all != some+2 {
		t.Errorf("skipping .rewind/ saw %d of %d entries, want 2 fewer", some, all)
	}
	if _, err := exec.LookPath("find"); err != nil {
		t.Skip("find is not installed")
	}
	s, err := Find(context.Background(), root, ".rewind")
	if err != nil || s.Wall <= 0 {
		t.Errorf("find: %+v, %v", s, err)
	}
	if _, err := Find(context.Background(), filepath.Join(root, "no-such-dir")); err == nil {
		t.Error("find of a missing directory succeeded")
	}
	if s, err := True(context.Background()); err != nil || s.MaxRSS <= 0 {
		t.Errorf("true: %+v, %v", s, err)
	}
	if n, err := DirBytes(root); err != nil || n != 400<<10 {
		t.Errorf("DirBytes = %d, %v; want %d", n, err, 400<<10)
	}
}

func TestMinimalGo(t *testing.T) {
	m, err := BuildMinimalGo(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := m.Run(t.Context()); err != nil || s.Wall <= 0 {
		t.Fatalf("run: %+v, %v", s, err)
	}
}

func TestMinimalServed(t *testing.T) {
	m, err := StartMinimalServed(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := m.Run(t.Context(), bytes.Repeat([]byte("x"), 100<<10)); err != nil || s.Wall <= 0 {
		t.Fatalf("run: %+v, %v", s, err)
	}
	m.Stop()
	if _, err := m.Run(t.Context(), []byte("{}")); err == nil {
		t.Fatal("the client succeeded with its server stopped: it measures no round trip")
	}
}
