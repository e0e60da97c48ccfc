package restore

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-rewind/rewind/internal/winpath"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// memSource is a Source of contents held in memory (a missing one fails as a damaged object
// would, part way through its read).
type memSource map[objects.Hash]string

var errDamaged = errors.New("damaged object")

func (m memSource) Open(h objects.Hash) (io.ReadCloser, error) {
	s, ok := m[h]
	if !ok {
		return io.NopCloser(io.MultiReader(strings.NewReader("half of it"), failReader{})), nil
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errDamaged }

func (m memSource) add(e manifest.Entry, content string) manifest.Entry {
	m[e.Blob] = content
	return e
}

// workspace is a test workspace and what its live capture saw.
type workspace struct {
	t    *testing.T
	root string
	seen map[string]platform.Stat
	live []manifest.Entry
}

func newWorkspace(t *testing.T) *workspace {
	return &workspace{t: t, root: t.TempDir(), seen: map[string]platform.Stat{}}
}

// put writes a file and records it as captured.
func (w *workspace) put(p, content string, mode os.FileMode) {
	w.t.Helper()
	full := filepath.Join(w.root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		w.t.Fatal(err)
	}
	e := file(p, content)
	e.Mode = uint32(mode.Perm())
	w.capture(e)
}

// capture records p's present stat as the live capture's, with entry e.
func (w *workspace) capture(e manifest.Entry) {
	w.t.Helper()
	st, err := platform.Lstat(filepath.Join(w.root, e.Path))
	if err != nil {
		w.t.Fatal(err)
	}
	w.seen[e.Path] = st
	w.live = append(w.live, e)
}

func (w *workspace) options(src Source) Options {
	return Options{Root: w.root, Source: src, Parallelism: 2, Seen: func(p string) (platform.Stat, bool) {
		st, ok := w.seen[p]
		return st, ok
	}}
}

func (w *workspace) read(p string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, p))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// mode is p's permission bits as the store sees them (platform.Lstat).
func (w *workspace) mode(p string) os.FileMode {
	w.t.Helper()
	st, err := platform.Lstat(filepath.Join(w.root, p))
	if err != nil {
		w.t.Fatal(err)
	}
	return os.FileMode(st.Mode & 0o777)
}

// keptMode is what the system keeps of the permission bits m of a file or folder: all of them on
// Unix; on Windows the write bit alone, as the read-only attribute, beside the bits platform
// gives every file (0o644) or folder (0o755).
func keptMode(m os.FileMode, dir bool) os.FileMode {
	if runtime.GOOS != "windows" {
		return m
	}
	k := os.FileMode(0o644)
	if dir {
		k = 0o755
	}
	if m&0o200 == 0 {
		k &^= 0o222
	}
	return k
}

func sorted(es []manifest.Entry) []manifest.Entry {
	slices.SortFunc(es, func(a, b manifest.Entry) int { return strings.Compare(a.Path, b.Path) })
	return es
}

// TestApply: one plan of every kind of change, carried out for real; a file written during the
// restore and a path created in the way are left alone and reported, and only what changed is
// touched.
func TestApply(t *testing.T) {
	w := newWorkspace(t)
	src := memSource{}
	w.put("keep.txt", "same", 0o644)
	w.put("mod.txt", "old", 0o644)
	w.put("gone.txt", "bye", 0o644)
	w.put("olddir/a.txt", "a", 0o644)
	w.capture(dir("olddir"))
	w.put("mode.sh", "#!/bin/sh\n", 0o644)
	w.put("busy.log", "v1", 0o644)
	// Windows makes symlinks only with Developer Mode or a privilege, and Wine 8 makes one it
	// cannot find again: without them the symlink's change is left out.
	os.Symlink("a", filepath.Join(w.root, "link"))
	_, err := platform.Lstat(filepath.Join(w.root, "link"))
	symlinks := err == nil
	if symlinks {
		w.capture(manifest.Entry{Path: "link", Type: manifest.TypeSymlink, Target: "a", Size: 1})
	} else {
		t.Log("no symlinks here: the symlink's change is left out")
	}
	ino := w.seen["mode.sh"].Ino

	modSh := file("mode.sh", "#!/bin/sh\n")
	modSh.Mode = 0o755
	modTxt := src.add(file("mod.txt", "new"), "new")
	modTxt.Mode = 0o600
	ro := dir("ro")
	ro.Mode = 0o555
	want := []manifest.Entry{
		file("keep.txt", "same"), modTxt, modSh,
		src.add(file("busy.log", "target"), "target"),
		src.add(file("late.txt", "target"), "target"),
		dir("newdir"), src.add(file("newdir/x.txt", "x"), "x"),
		ro, src.add(file("ro/f.txt", "f"), "f"),
	}
	if symlinks {
		want = append(want, manifest.Entry{Path: "link", Type: manifest.TypeSymlink, Target: "b", Size: 1})
	}
	want = sorted(want)
	p := NewPlan(sorted(w.live), want, nil)
	var done atomic.Int64
	o := w.options(src)
	o.Done = &done
	o.BeforeApply = func() { // what an agent's tool does during the restore
		os.WriteFile(filepath.Join(w.root, "busy.log"), []byte("v2, longer"), 0o644)
		os.WriteFile(filepath.Join(w.root, "late.txt"), []byte("mine"), 0o644)
	}
	touched, kept, err := Apply(context.Background(), &p, o)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(w.root, "ro"), 0o755)
	for p, content := range map[string]string{"keep.txt": "same", "mod.txt": "new", "mode.sh": "#!/bin/sh\n", "busy.log": "v2, longer", "late.txt": "mine", "newdir/x.txt": "x", "ro/f.txt": "f"} {
		if got := w.read(p); got != content {
			t.Errorf("%s holds %q, want %q", p, got, content)
		}
	}
	for p, mode := range map[string]os.FileMode{"mod.txt": 0o600, "mode.sh": 0o755, "ro": 0o555, "newdir": 0o755} {
		if p == "ro" && winpath.UnderWine() {
			t.Log("Wine 8 keeps no read-only attribute on a folder: ro's mode is not checked")
			continue
		}
		if got, mode := w.mode(p), keptMode(mode, p == "ro" || p == "newdir"); got != mode {
			t.Errorf("%s has mode %o, want %o", p, got, mode)
		}
	}
	if st, _ := platform.Lstat(filepath.Join(w.root, "mode.sh")); st.Ino != ino {
		t.Error("mode.sh was rewritten: a mode change of a file with one link changes its mode in place")
	}
	if target, _ := os.Readlink(filepath.Join(w.root, "link")); symlinks && target != "b" {
		t.Errorf("link -> %q, want b", target)
	}
	for _, p := range []string{"gone.txt", "olddir"} {
		if _, err := os.Lstat(filepath.Join(w.root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	wantTouched := "gone.txt link mod.txt mode.sh newdir newdir/x.txt olddir olddir/a.txt ro ro/f.txt"
	if !symlinks {
		wantTouched = strings.Replace(wantTouched, "link ", "", 1)
	}
	if manifest.SameMode(0o644, 0o755) {
		// Windows keeps no exec bit: mode.sh's 0755 is its 0644 there, no change at all.
		wantTouched = strings.Replace(wantTouched, "mode.sh ", "", 1)
	}
	if s := strings.Join(slices.Sorted(maps.Keys(touched)), " "); s != wantTouched {
		t.Errorf("touched %q, want %q", s, wantTouched)
	}
	slices.SortFunc(kept, func(a, b Kept) int { return strings.Compare(a.Path, b.Path) })
	if len(kept) != 2 || kept[0].Path != "busy.log" || kept[0].Reason != reasonChanged || !kept[0].Live ||
		kept[1].Path != "late.txt" || kept[1].Reason != reasonCreated || !kept[1].Live {
		t.Errorf("kept %+v, want busy.log (changed) and late.txt (created), both live", kept)
	}
	if done.Load() != int64(len(p.Changes)) {
		t.Errorf("progress counted %d changes of %d", done.Load(), len(p.Changes))
	}
	noTemps(t, w.root)
}

func noTemps(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), TempPrefix) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestApplyHardLinkedModeChange: the mode of a file with another name is restored on a new
// inode, so the other name (which may be outside the workspace) keeps its mode. The write bit
// changes, which Windows keeps as the read-only attribute, on the file rather than on a name.
func TestApplyHardLinkedModeChange(t *testing.T) {
	w := newWorkspace(t)
	w.put("run.sh", "#!/bin/sh\n", 0o444)
	other := filepath.Join(t.TempDir(), "other-name")
	if err := os.Link(filepath.Join(w.root, "run.sh"), other); err != nil {
		t.Skip("no hard links here:", err)
	}
	w.seen["run.sh"], _ = platform.Lstat(filepath.Join(w.root, "run.sh")) // the link changed its ctime
	src := memSource{}
	e := src.add(file("run.sh", "#!/bin/sh\n"), "#!/bin/sh\n")
	e.Mode = 0o755
	p := NewPlan(w.live, []manifest.Entry{e}, nil)
	if len(p.Changes) != 1 || p.Changes[0].Kind != manifest.ChangeMode {
		t.Fatalf("plan %+v, want one mode change", p.Changes)
	}
	if _, _, err := Apply(context.Background(), &p, w.options(src)); err != nil {
		t.Fatal(err)
	}
	if got, want := w.mode("run.sh"), keptMode(0o755, false); got != want {
		t.Errorf("run.sh has mode %o, want %o", got, want)
	}
	if st, _ := platform.Lstat(other); st.Mode&0o777 != uint32(keptMode(0o444, false)) {
		t.Errorf("the other name's mode became %o: chmod went through the hard link", st.Mode&0o777)
	}
}

// TestApplyDamagedContent: a content that fails its read part way is never renamed into place;
// the live file is as it was and no temporary file is left.
func TestApplyDamagedContent(t *testing.T) {
	w := newWorkspace(t)
	w.put("a.txt", "live", 0o644)
	p := NewPlan(w.live, []manifest.Entry{file("a.txt", "lost")}, nil)
	_, _, err := Apply(context.Background(), &p, w.options(memSource{}))
	if !errors.Is(err, errDamaged) {
		t.Fatalf("apply: %v, want the source's error", err)
	}
	if got := w.read("a.txt"); got != "live" {
		t.Errorf("a.txt holds %q, want the live %q", got, "live")
	}
	noTemps(t, w.root)
}

// TestApplyRefusesSymlinkedParent: a folder swapped for a symlink after the capture is not
// written through: ErrUnsafePath, and nothing lands where the symlink points.
func TestApplyRefusesSymlinkedParent(t *testing.T) {
	w := newWorkspace(t)
	w.put("d/f.txt", "live", 0o644)
	w.capture(dir("d"))
	outside := t.TempDir()
	src := memSource{}
	p := NewPlan(sorted(w.live), []manifest.Entry{dir("d"), src.add(file("d/f.txt", "new"), "new")}, nil)
	o := w.options(src)
	o.BeforeApply = func() {
		os.RemoveAll(filepath.Join(w.root, "d"))
		os.Symlink(outside, filepath.Join(w.root, "d"))
	}
	_, _, err := Apply(context.Background(), &p, o)
	if !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("apply: %v, want ErrUnsafePath", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("written through the symlink: %v", ents)
	}
}

// TestFileMode: stored permission bits, the special ones included, as an os.FileMode.
func TestFileMode(t *testing.T) {
	for m, want := range map[uint32]os.FileMode{
		0o644:  0o644,
		0o4755: 0o755 | os.ModeSetuid,
		0o2750: 0o750 | os.ModeSetgid,
		0o1777: 0o777 | os.ModeSticky,
	} {
		if got := fileMode(m); got != want {
			t.Errorf("fileMode(%o) = %v, want %v", m, got, want)
		}
	}
}
