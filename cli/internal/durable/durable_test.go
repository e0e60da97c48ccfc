package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	for _, want := range []string{"first", "second, longer"} {
		if err := WriteFile(name, []byte(want)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(name); err != nil || string(b) != want {
			t.Fatalf("read %q, %v; want %q", b, err, want)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("temporary files left behind: %v", es)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
}

func TestOpenAppendCreatesThenAppends(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := OpenAppend(name)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(name); string(b) != "a\nb\n" {
		t.Fatalf("log %q", b)
	}
}
