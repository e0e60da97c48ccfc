package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var small = Shape{Files: 600, Bytes: 3 << 20, Seed: 7}

func generate(t *testing.T, s Shape) (string, Result) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	res, err := Generate(context.Background(), root, s)
	if err != nil {
		t.Fatal(err)
	}
	return root, res
}

func diskListing(t *testing.T, root string, skip ...string) string {
	t.Helper()
	h, err := Listing(root, skip...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSameSeedSameTree(t *testing.T) {
	a, ra := generate(t, small)
	b, rb := generate(t, small)
	if ra != rb {
		t.Fatalf("two runs of one shape differ:\n%+v\n%+v", ra, rb)
	}
	// What is on disk, read back independently, is what Generate said it wrote, in both trees.
	if la, lb := diskListing(t, a), diskListing(t, b); la != ra.ListingSHA256 || lb != ra.ListingSHA256 {
		t.Fatalf("listing on disk %s / %s, Generate said %s", la, lb, ra.ListingSHA256)
	}
	other := small
	other.Seed++
	_, rc := generate(t, other)
	if rc.ListingSHA256 == ra.ListingSHA256 {
		t.Fatal("seeds 7 and 8 made the same tree")
	}
}

func TestShape(t *testing.T) {
	root, r := generate(t, small)
	if r.Regular+r.Symlinks != small.Files {
		t.Errorf("%d regular files + %d symlinks, want %d in all", r.Regular, r.Symlinks, small.Files)
	}
	if r.Bytes != small.Bytes {
		t.Errorf("%d bytes, want exactly %d", r.Bytes, small.Bytes)
	}
	if r.Executables == 0 || r.Symlinks == 0 || r.EmptyDirs < 2 || r.Dirs < small.Files/12 {
		t.Errorf("missing part of the shape: %+v", r)
	}
	var files, links, execs, empty int
	var bytes int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			links++
		case d.IsDir():
			if ents, _ := os.ReadDir(p); len(ents) == 0 {
				empty++
			}
		default:
			files++
			bytes += info.Size()
			if info.Mode().Perm() == 0o755 {
				execs++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files != r.Regular || links != r.Symlinks || execs != r.Executables || bytes != r.Bytes || empty < r.EmptyDirs {
		t.Errorf("on disk: %d files, %d links, %d executables, %d bytes, %d empty dirs; result %+v", files, links, execs, bytes, empty, r)
	}
}

func TestScaledDownShape(t *testing.T) {
	// Few bytes for many files: the text sizes are scaled down, the total is still exact.
	s := Shape{Files: 300, Bytes: 300 * 100, Seed: 3}
	_, r := generate(t, s)
	if r.Bytes != s.Bytes {
		t.Errorf("%d bytes, want %d", r.Bytes, s.Bytes)
	}
}

func TestRefusesBadTargets(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), root, small); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("non-empty target: %v, want ErrNotEmpty", err)
	}
	for _, s := range []Shape{{Files: 5, Bytes: 1 << 20}, {Files: 1000, Bytes: 1000}} {
		if _, err := Generate(context.Background(), t.TempDir(), s); !errors.Is(err, ErrShape) {
			t.Errorf("%+v: %v, want ErrShape", s, err)
		}
	}
}

func TestMakeChangesDeterministic(t *testing.T) {
	a, r := generate(t, small)
	b, _ := generate(t, small)
	ca, err := MakeChanges(a, 10, 42)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := MakeChanges(b, 10, 42)
	if err != nil {
		t.Fatal(err)
	}
	la, lb := diskListing(t, a), diskListing(t, b)
	if la != lb {
		t.Fatal("the same changes on the same tree gave different trees")
	}
	if la == r.ListingSHA256 {
		t.Fatal("the changes changed nothing")
	}
	count := map[ChangeKind]int{}
	seen := map[string]bool{}
	for i, c := range ca {
		count[c.Kind]++
		if seen[c.Path] {
			t.Errorf("path %s changed twice", c.Path)
		}
		seen[c.Path] = true
		if c != cb[i] {
			t.Errorf("change %d: %+v vs %+v", i, c, cb[i])
		}
	}
	if count[Modified] != 7 || count[Added] != 2 || count[Deleted] != 1 {
		t.Errorf("kinds %v, want 7 modified, 2 added, 1 deleted", count)
	}
	if ChangedBytes(ca) <= 2*4096 {
		t.Errorf("changed bytes %d", ChangedBytes(ca))
	}
	// Another seed picks other changes.
	c2, err := MakeChanges(b, 10, 43)
	if err != nil {
		t.Fatal(err)
	}
	if diskListing(t, b) == la || c2[0] == ca[0] {
		t.Error("seed 43 repeated seed 42's changes")
	}
}

func TestMakeChangesSkips(t *testing.T) {
	root, _ := generate(t, Shape{Files: 40, Bytes: 40 * 1000, Seed: 1})
	// Everything except the skipped folder is too large or absent: only .rewind has candidates.
	if err := os.MkdirAll(filepath.Join(root, ".rewind"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		os.WriteFile(filepath.Join(root, ".rewind", "obj"+string(rune('a'+i))), []byte("x"), 0o644)
	}
	before := diskListing(t, filepath.Join(root, ".rewind"))
	if _, err := MakeChanges(root, 10, 1, ".rewind"); err != nil {
		t.Fatal(err)
	}
	if diskListing(t, filepath.Join(root, ".rewind")) != before {
		t.Error("MakeChanges touched a skipped directory")
	}
	if _, err := MakeChanges(root, 10_000, 1); err == nil {
		t.Error("10,000 changes on a 40-file tree accepted")
	}
}

func TestRelative(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"", "a/b", "a/b"}, {"a/b", "a/c", "../c"}, {"a/b", "", "../.."}, {"a", "a", "."}, {"x/y", "x/y/z", "z"},
	} {
		if got := relative(c.from, c.to); got != c.want {
			t.Errorf("relative(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

func BenchmarkGenerateQuick(b *testing.B) {
	for b.Loop() {
		root := filepath.Join(b.TempDir(), "ws")
		if _, err := Generate(context.Background(), root, Quick); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(Quick.Bytes)
}
