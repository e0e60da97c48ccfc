package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// TestModeOf: attributes and reparse tags give the POSIX type the walk acts on: a symlink is
// one, a socket one, a deduplicated file a file, and a junction, a cloud placeholder or a file
// to be recalled from the cloud is a reparse point (never read, never followed).
func TestModeOf(t *testing.T) {
	const (
		dir      = syscall.FILE_ATTRIBUTE_DIRECTORY
		ro       = syscall.FILE_ATTRIBUTE_READONLY
		reparse  = syscall.FILE_ATTRIBUTE_REPARSE_POINT
		junction = 0xA0000003
		cloud    = 0x9000001A // IO_REPARSE_TAG_CLOUD (OneDrive)
	)
	for _, c := range []struct {
		attrs, tag, want uint32
	}{
		{syscall.FILE_ATTRIBUTE_NORMAL, 0, syscall.S_IFREG | 0o644},
		{syscall.FILE_ATTRIBUTE_ARCHIVE | ro, 0, syscall.S_IFREG | 0o444},
		{dir, 0, syscall.S_IFDIR | 0o755},
		{dir | ro, 0, syscall.S_IFDIR | 0o555},
		{reparse, reparseTagSymlink, syscall.S_IFLNK | 0o777},
		{reparse | dir, reparseTagSymlink, syscall.S_IFLNK | 0o777},
		{reparse | dir, junction, typeReparse | 0o755},
		{reparse, cloud, typeReparse | 0o644},
		{reparse, reparseTagAFUnix, syscall.S_IFSOCK | 0o644},
		{reparse, reparseTagDedup, syscall.S_IFREG | 0o644},
		{fileAttributeRecallOnDataAccess, 0, typeReparse | 0o644},
	} {
		if got := modeOf(c.attrs, c.tag); got != c.want {
			t.Errorf("modeOf(%#x, %#x) = %#o, want %#o", c.attrs, c.tag, got, c.want)
		}
	}
}

// TestWindowsSymlink: a symlink is reported as one, not followed, and its target read.
func TestWindowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here (Windows needs Developer Mode or a privilege for them): %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Skipf("the symlink was made but reads back as %v, %v (Wine 8 keeps no Windows symlinks)", fi, err)
	}
	st, err := Lstat(link)
	if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
		t.Fatalf("Lstat(symlink) = %+v, %v", st, err)
	}
	if got, err := ReadlinkAt(-1, dir, "link"); err != nil || got != target {
		t.Fatalf("ReadlinkAt = %q, %v, want %q", got, err, target)
	}
	if fd, _, err := OpenDir(link, ""); err == nil || !strings.Contains(err.Error(), "symlink") {
		CloseDir(fd)
		t.Fatalf("OpenDir(symlink to a folder) = %v, want it refused as a symlink", err)
	}
}

// TestLongPathStat: a file deeper than MAX_PATH stats by its plain path.
func TestLongPathStat(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 120), strings.Repeat("e", 120))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(deep, strings.Repeat("f", 60))
	if err := os.WriteFile(winpath.Long(name), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := Lstat(name); err != nil || st.Size != 1 {
		t.Fatalf("Lstat(%d characters) = %+v, %v", len(name), st, err)
	}
	fd, names, err := OpenDir(deep, "p/")
	if err != nil || len(names) != 1 || names[0] != "p/"+strings.Repeat("f", 60) {
		t.Fatalf("OpenDir(deep) = %q, %v", names, err)
	}
	CloseDir(fd)
}

// TestSyncFS: the volume is flushed, or the refusal is ErrNoVolumeFlush (the caller fsyncs each
// file) and says why: only an administrator may, or (Wine 8) the volume does not flush whole.
func TestSyncFS(t *testing.T) {
	err := SyncFS(t.TempDir())
	if err != nil && (!errors.Is(err, ErrNoVolumeFlush) || !strings.Contains(err.Error(), "administrator") && !errors.Is(err, errorInvalidFunction)) {
		t.Fatalf("SyncFS = %v", err)
	}
	t.Logf("SyncFS: %v", err)
}
