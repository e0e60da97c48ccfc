package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestZip: the Windows archive holds the files under their base names at its top level, in the
// order given, with their contents; two archives of the same files written at different times
// from different folders are byte-identical, so the .zip is as reproducible as the binaries.
func TestZip(t *testing.T) {
	var zips [2][]byte
	for i := range zips {
		dir := filepath.Join(t.TempDir(), "build", string(rune('a'+i)))
		main, hook := filepath.Join(dir, "agent-rewind.exe"), filepath.Join(dir, "agent-rewind-hook.exe")
		if err := writeFile(main, []byte("MZ main"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(hook, []byte("MZ hook"), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.zip")
		if err := writeZip(out, main, hook); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		zips[i] = b
		if got, err := readZip(out, "agent-rewind-hook.exe"); err != nil || string(got) != "MZ hook" {
			t.Fatalf("readZip agent-rewind-hook.exe = %q, %v", got, err)
		}
		if _, err := readZip(out, "agent-rewind"); err == nil {
			t.Fatal("readZip of a name the archive does not hold succeeded")
		}
	}
	if !bytes.Equal(zips[0], zips[1]) {
		t.Fatalf("two archives of the same files differ (%d and %d bytes)", len(zips[0]), len(zips[1]))
	}
	zr, err := zip.NewReader(bytes.NewReader(zips[0]), int64(len(zips[0])))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(zipTime) || f.Method != zip.Deflate || f.Mode().Perm() != 0o755 {
			t.Errorf("%s: modified %v, method %d, mode %v", f.Name, f.Modified, f.Method, f.Mode())
		}
	}
	if len(names) != 2 || names[0] != "agent-rewind.exe" || names[1] != "agent-rewind-hook.exe" {
		t.Fatalf("archive holds %v", names)
	}
}
