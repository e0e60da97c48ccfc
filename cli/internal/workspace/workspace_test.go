package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

func TestLockExcludes(t *testing.T) {
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := w.Lock()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	order := []string{}
	done := make(chan struct{})
	go func() {
		u, err := w.Lock() // a second descriptor: flock excludes it like another process
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		order = append(order, "second")
		mu.Unlock()
		u()
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	order = append(order, "first releases")
	mu.Unlock()
	unlock()
	<-done
	if strings.Join(order, ",") != "first releases,second" {
		t.Fatalf("lock order: %v", order)
	}
}
