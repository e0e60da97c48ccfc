package snapshot

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The benchmarks run on genTree workspaces (see helpers_test.go). Each reports the figure the
// issue's goals are stated in; tools/bench compares the same operations with a shadow git
// repository and `find` on 50,000 files. Sizes: -bench with the default 2,000 files; set
// REWIND_BENCH_FILES to change it.
func benchFiles() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("REWIND_BENCH_FILES"), &n); err == nil && n > 0 {
		return n
	}
	return 2000
}

func benchTree(b *testing.B) (root string, bytes int64) {
	b.Helper()
	root = filepath.Join(b.TempDir(), "ws")
	os.Mkdir(root, 0o755)
	bytes = genTree(b, root, benchFiles(), 1)
	return root, bytes
}

// BenchmarkStatWalk is the denominator: a bare lstat walk of the tree, as `find` does.
func BenchmarkStatWalk(b *testing.B) {
	root, _ := benchTree(b)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if _, err := os.Lstat(p); err == nil {
				n++
			}
			return nil
		})
	}
}

// BenchmarkCheckpointFirst: the first checkpoint, storing every content. Reports the store's
// size relative to the workspace's bytes.
func BenchmarkCheckpointFirst(b *testing.B) {
	root, bytes := benchTree(b)
	b.SetBytes(bytes)
	b.ResetTimer()
	var ratio float64
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(filepath.Join(root, ".rewind"))
		s := mustOpen(b, root, Options{})
		b.StartTimer()
		if _, err := s.Checkpoint(ctx, "first"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ratio = float64(dirSize(b, filepath.Join(root, ".rewind"))) / float64(bytes)
		b.StartTimer()
	}
	b.ReportMetric(ratio, "store/workspace")
}

// BenchmarkCheckpointNoChange: a checkpoint of an unchanged workspace (compare with StatWalk).
func BenchmarkCheckpointNoChange(b *testing.B) {
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		b.Fatal(err)
	}
	backdateIndex(b, s)
	b.ResetTimer()
	for b.Loop() {
		c, err := s.Checkpoint(ctx, "again")
		if err != nil {
			b.Fatal(err)
		}
		if c.Hashed != 0 {
			b.Fatalf("hashed %d files of an unchanged tree", c.Hashed)
		}
	}
}

// BenchmarkCheckpoint10Changes: a checkpoint after 10 files changed (compare with StatWalk).
func BenchmarkCheckpoint10Changes(b *testing.B) {
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		b.Fatal(err)
	}
	files := benchFileList(b, root, 10)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		changeFiles(files, i)
		i++
		backdateIndex(b, s)
		b.StartTimer()
		c, err := s.Checkpoint(ctx, "ten")
		if err != nil {
			b.Fatal(err)
		}
		if c.Hashed != 10 {
			b.Fatalf("hashed %d, want 10", c.Hashed)
		}
	}
}

// BenchmarkRewind10Changes: rewinding 10 changed files (safety checkpoint included).
func BenchmarkRewind10Changes(b *testing.B) {
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		b.Fatal(err)
	}
	files := benchFileList(b, root, 10)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		changeFiles(files, i)
		i++
		backdateIndex(b, s)
		b.StartTimer()
		res, err := s.Rewind(ctx, first.ID, RestoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changes) != 10 {
			b.Fatalf("%d changes", len(res.Changes))
		}
	}
}

// BenchmarkRewind10ChangesHint is BenchmarkRewind10Changes with a watcher's hint naming the
// changed files: the safety checkpoint does not walk the tree.
func BenchmarkRewind10ChangesHint(b *testing.B) {
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		b.Fatal(err)
	}
	files := benchFileList(b, root, 10)
	rel := make([]string, len(files))
	for j, f := range files {
		r, _ := filepath.Rel(root, f)
		rel[j] = filepath.ToSlash(r)
	}
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		changeFiles(files, i)
		i++
		backdateIndex(b, s)
		cur, err := s.Current()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.Rewind(ctx, first.ID, RestoreOptions{Changed: &Changed{Since: cur, Paths: rel}})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changes) != 10 || res.SafetyResult.Walk.Mode != "changed" {
			b.Fatalf("%d changes, walk %+v", len(res.Changes), res.SafetyResult.Walk)
		}
	}
}

// BenchmarkKillSoak runs the SIGKILL crash trials (100 per iteration) on a 400-file tree.
func BenchmarkKillSoak(b *testing.B) {
	for b.Loop() {
		killTrials(b, 100, 400)
	}
}

// benchFileList returns n regular files of the tree, spread over it.
func benchFileList(b *testing.B, root string, n int) []string {
	var all []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && filepath.Base(filepath.Dir(p)) != ".rewind" && !isUnder(p, filepath.Join(root, ".rewind")) {
			all = append(all, p)
		}
		return nil
	})
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, all[i*len(all)/n])
	}
	return out
}

func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkStatCacheSample: what a checkpoint spends checking the stat cache (sample.go): reading
// again a random sample of the files the cache vouches for. Compare with CheckpointNoChange,
// which includes it; the ratio is the sample's share of a no-change checkpoint.
func BenchmarkStatCacheSample(b *testing.B) {
	root, _ := benchTree(b)
	s := mustOpen(b, root, Options{})
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		b.Fatal(err)
	}
	backdateIndex(b, s)
	c, err := s.captureLive(ctx, false)
	if err != nil {
		b.Fatal(err)
	}
	var vouched []int
	for i := range c.scan.Entries {
		if e := &c.scan.Entries[i]; e.Type == TypeFile && e.St.Size <= sampleMaxSize {
			vouched = append(vouched, i)
		}
	}
	k := sampleCount(len(vouched))
	b.ReportMetric(float64(k), "files/op")
	b.ResetTimer()
	for b.Loop() {
		wrong, err := s.verifySample(ctx, c.scan.Entries, pickSample(vouched, k))
		if err != nil || len(wrong) > 0 {
			b.Fatal(err, wrong)
		}
	}
}

// changeFiles gives each of files a new content, different in round i from every other round.
func changeFiles(files []string, i int) {
	for _, f := range files {
		os.WriteFile(f, fmt.Appendf(nil, "change %d of %s\n", i, f), 0o644)
	}
}
