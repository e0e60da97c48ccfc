package walk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWalkOrder: the walk emits paths in byte order without a global sort; names that sort
// around "/" ("a-b", "a.b", "a!", "a 1" before "a/…", "a0" after; folders "c", "c-", "c--" whose
// subtrees come in the reverse order) are where that could go wrong.
func TestWalkOrder(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/x", "a/b/c", "a/b-c", "a/b/d/e", "a-b", "a.b", "a!", "a 1", "a0", "ab/c", "ab-/d", "b", "a/b.c", "a/b0", "c/q", "c-/q", "c--/q", "c.x"} {
		put(t, root, p, "x", 0o644)
	}
	os.MkdirAll(filepath.Join(root, "empty/dir"), 0o755)
	n := 28
	// Windows makes a symlink only with Developer Mode or a privilege, and Wine 8 makes one it
	// then cannot find: the walk lists it where it exists.
	if os.Symlink("a", filepath.Join(root, "a-link")) == nil {
		if _, err := os.Lstat(filepath.Join(root, "a-link")); err == nil {
			n++
		}
	}
	var seen atomic.Int64
	sc, err := Walk(ctx, root, nil, (*Ignore)(nil), 4, &seen)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range sc.Entries {
		got = append(got, e.Path)
	}
	want := slices.Clone(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(got) != n {
		t.Fatalf("walk order:\n%q\nwant:\n%q", got, want)
	}
}

// TestWalkWorkers: the worker pool lists exactly what filepath.WalkDir lists, whatever the
// number of workers (more workers than directories, one worker, many), on a tree wide and deep
// enough that workers hand directories to each other; and it uses no more than its workers.
func TestWalkWorkers(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i))
		for j := range i % 7 {
			d = filepath.Join(d, fmt.Sprintf("s%d", j))
		}
		os.MkdirAll(d, 0o755)
		for k := range 5 {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", k)), []byte("x"), 0o644)
		}
	}
	var want []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p != root {
			rel, _ := filepath.Rel(root, p)
			want = append(want, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(want)
	for _, par := range []int{1, 2, 3, 16, 200} {
		before := runtime.NumGoroutine()
		var seen atomic.Int64
		sc, err := Walk(ctx, root, nil, (*Ignore)(nil), par, &seen)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range sc.Entries {
			got = append(got, e.Path)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("par %d: walk listed %d paths, WalkDir %d:\n%q\nwant\n%q", par, len(got), len(want), got, want)
		}
		if seen.Load() != int64(len(want)) {
			t.Fatalf("par %d: seen %d, want %d", par, seen.Load(), len(want))
		}
		// Other tests' goroutines may still be ending (tests run in parallel): a worker left
		// behind stays, so give the count a moment to settle before judging it.
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(2 * time.Second); n > before && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(10 * time.Millisecond)
		}
		if n > before {
			t.Fatalf("par %d: %d goroutines left running after the walk (%d before)", par, n, before)
		}
	}
}

// TestWalkErrorStopsWorkers: an unreadable directory fails the walk with its name, and no
// worker is left waiting (the walk returns at all, with any number of workers).
func TestWalkErrorStopsWorkers(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads every directory")
	}
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no modes: chmod 0 leaves a folder readable (only an ACL would not)")
	}
	root := t.TempDir()
	for i := range 30 {
		os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%02d/a/b", i)), 0o755)
	}
	bad := filepath.Join(root, "d17/a")
	os.Chmod(bad, 0)
	t.Cleanup(func() { os.Chmod(bad, 0o755) })
	for _, par := range []int{1, 2, 8} {
		var seen atomic.Int64
		_, err := Walk(ctx, root, nil, (*Ignore)(nil), par, &seen)
		if err == nil || !strings.Contains(err.Error(), bad) || !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("par %d: err = %v, want permission denied naming %s", par, err, bad)
		}
	}
}

// TestWalkCanceled: a canceled context stops the walk with the context's error.
func TestWalkCanceled(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755)
	c, cancel := context.WithCancel(ctx)
	cancel()
	var seen atomic.Int64
	if _, err := Walk(c, root, nil, (*Ignore)(nil), 2, &seen); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
