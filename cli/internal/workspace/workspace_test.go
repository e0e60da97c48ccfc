package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenBeforeInit(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrNotInitialized) || !strings.Contains(err.Error(), "agent-rewind checkpoint") {
		t.Fatalf("Open of a fresh folder: %v", err)
	}
}

func TestInitWritesFormatOnce(t *testing.T) {
	root := t.TempDir()
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, MetaDir, "format"))
	if err != nil || string(b) != "1\n" {
		t.Fatalf("format file: %q, %v", b, err)
	}
	if _, err := Init(root); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if _, err := Open(root); err != nil {
		t.Fatalf("Open after Init: %v", err)
	}
	if w.Path("chain.jsonl") != filepath.Join(w.Root, ".rewind", "chain.jsonl") {
		t.Fatalf("Path: %s", w.Path("chain.jsonl"))
	}
}

func TestNewerFormatRefused(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(root); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, MetaDir, "format"), []byte("2\n"), 0o600)
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "upgrade agent-rewind") {
		t.Fatalf("newer format: %v", err)
	}
	os.WriteFile(filepath.Join(root, MetaDir, "format"), []byte("garbage"), 0o600)
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("garbage format: %v", err)
	}
}

func TestMetaIsAFile(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, MetaDir), nil, 0o600)
	if _, err := Init(root); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a file named .rewind: %v", err)
	}
}
