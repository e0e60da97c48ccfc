package platform

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOpens: the no-follow opens read, append and create the file itself on every system, and
// refuse a symlink in its place where the system makes one.
func TestOpens(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	f, err := OpenNoFollow(name)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if string(got) != "one\n" {
		t.Fatalf("OpenNoFollow read %q", got)
	}

	a, err := OpenAppend(filepath.Join(dir, "log"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("a"))
	a.Close()
	if a, err = OpenAppend(filepath.Join(dir, "log"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("b"))
	a.Close()
	if got, _ := os.ReadFile(filepath.Join(dir, "log")); string(got) != "ab" {
		t.Fatalf("OpenAppend twice wrote %q, want ab", got)
	}

	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if f, err = OpenInRoot(root, "f"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenDirInRoot(root, "f"); err == nil {
		t.Fatal("OpenDirInRoot opened a file")
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if f, err = OpenDirInRoot(root, "d"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := CreateInRoot(root, "f", 0o600); err == nil {
		t.Fatal("CreateInRoot opened an existing file")
	}
	c, err := CreateInRoot(root, "new", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o644)
	if err := os.Remove(filepath.Join(dir, "d")); !IsNotEmpty(err) {
		t.Fatalf("removing a folder with an entry: %v, IsNotEmpty false", err)
	}

	link := filepath.Join(dir, "link")
	if err := os.Symlink("f", link); err != nil { // relative: the root would follow it
		t.Logf("no symlink here (%v): the refusals are not tested", err)
		return
	}
	if _, err := os.Lstat(link); err != nil {
		t.Logf("the symlink was made but reads back as %v (Wine 8 keeps no Windows symlinks)", err)
		return
	}
	for what, open := range map[string]func() (*os.File, error){
		"OpenNoFollow": func() (*os.File, error) { return OpenNoFollow(link) },
		"OpenAppend":   func() (*os.File, error) { return OpenAppend(link, 0o600) },
		"OpenInRoot":   func() (*os.File, error) { return OpenInRoot(root, "link") },
		"CreateInRoot": func() (*os.File, error) { return CreateInRoot(root, "link", 0o600) },
	} {
		f, err := open()
		if err == nil {
			f.Close()
			t.Errorf("%s opened a symlink", what)
		} else if what != "CreateInRoot" && !IsSymlinkRefused(err) {
			t.Errorf("%s on a symlink: %v, IsSymlinkRefused false", what, err)
		}
	}
	if got, _ := os.ReadFile(name); string(got) != "one\n" {
		t.Fatalf("the link's target was written: %q", got)
	}
}

// TestMapFile: a mapping reads what the file holds; an empty file maps to nothing.
func TestMapFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pack")
	want := bytes.Repeat([]byte("0123456789abcdef"), 5000)
	os.WriteFile(name, want, 0o644)
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	data, unmap, err := MapFile(f, int64(len(want)))
	f.Close() // the mapping outlives the file
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Fatal("the mapping differs from the file")
	}
	unmap()
	if data, unmap, err = MapFile(f, 0); err != nil || len(data) != 0 {
		t.Fatalf("empty: %d bytes, %v", len(data), err)
	}
	unmap()
}
