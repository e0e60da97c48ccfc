package snapshot

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// The benchmarks of upkeep, on a store of a genTree workspace (REWIND_BENCH_FILES, 2,000 files
// by default) with 20 checkpoints after the first, 10 changed files each (one small pack each).
// They use only the public API, so the same file measures any version of the package.

// upkeepStore makes that store (in its own state directory, outside the workspace) and returns
// it with its state directory.
func upkeepStore(b *testing.B) (*Store, string) {
	b.Helper()
	root, _ := benchTree(b)
	state := filepath.Join(b.TempDir(), "state")
	s := mustOpen(b, root, Options{StateDir: state})
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		b.Fatal(err)
	}
	files := benchFileList(b, root, 10)
	for i := range 20 {
		changeFiles(files, i)
		if _, err := s.Checkpoint(ctx, fmt.Sprintf("c%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	return s, state
}

// BenchmarkGCKeepAll: a gc that keeps every checkpoint, after one that merged the small packs:
// the mark (every kept manifest, the stat cache, the chunk lists) and a sweep that finds nothing
// to remove (every folder listed, every pack index read).
func BenchmarkGCKeepAll(b *testing.B) {
	s, _ := upkeepStore(b)
	if _, err := s.GC(ctx, GCOptions{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := s.GC(ctx, GCOptions{})
		if err != nil || len(res.Removed) != 0 || res.ObjectsRemoved != 0 {
			b.Fatalf("gc: %+v %v", res, err)
		}
	}
}

// BenchmarkGCKeepLast5: a gc that removes 16 of the 21 checkpoints, with the contents only they
// held, and rewrites the small packs as one; each round on a fresh copy of the store (the copy
// is not timed).
func BenchmarkGCKeepLast5(b *testing.B) {
	s, state := upkeepStore(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "copy")
		if out, err := exec.Command("cp", "-a", state, dir).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		c := mustOpen(b, s.Root(), Options{StateDir: dir})
		b.StartTimer()
		res, err := c.GC(ctx, GCOptions{KeepLast: 5})
		if err != nil || len(res.Removed) != 16 || res.ObjectsRemoved == 0 || res.PacksMerged == 0 {
			b.Fatalf("gc: %+v %v", res, err)
		}
	}
}

// BenchmarkCheck: check without ReadData (every checkpoint, manifest, pack index, content's
// size and stat cache entry; each vouched file is read), and with it (every stored content
// read and hashed as well).
func BenchmarkCheck(b *testing.B) {
	s, _ := upkeepStore(b)
	for _, read := range []bool{false, true} {
		b.Run(fmt.Sprintf("readData=%v", read), func(b *testing.B) {
			for b.Loop() {
				rep, err := s.Check(ctx, CheckOptions{ReadData: read})
				if err != nil {
					b.Fatal(err)
				}
				for _, sec := range rep.Sections {
					if len(sec.Problems) > 0 {
						b.Fatalf("check found problems in %s: %+v", sec.Name, sec.Problems)
					}
				}
			}
		})
	}
}
