package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOpenBeforeInit(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrNotInitialized) || !strings.Contains(err.Error(), "agent-rewind checkpoint") {
		t.Fatalf("Open of a fresh folder: %v", err)
	}
}

func TestInitWritesFormatOnce(t *testing.T) {
	state := t.TempDir()
	t.Setenv(StateDirEnv, state)
	root := t.TempDir()
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	if w.Meta != filepath.Join(state, "stores", w.ID) {
		t.Fatalf("store at %s, want under %s", w.Meta, state)
	}
	if _, err := os.Lstat(filepath.Join(root, LegacyDir)); err == nil {
		t.Fatal("Init made a .rewind/ in the workspace")
	}
	b, err := os.ReadFile(filepath.Join(w.Meta, "format"))
	if err != nil || string(b) != "3\n" {
		t.Fatalf("format file: %q, %v", b, err)
	}
	if w2, err := Init(root); err != nil || w2.Meta != w.Meta {
		t.Fatalf("second Init: %v, %v", w2, err)
	}
	if w2, err := Open(root); err != nil || w2.Meta != w.Meta {
		t.Fatalf("Open after Init: %v, %v", w2, err)
	}
	if w.Path("chain.jsonl") != filepath.Join(w.Meta, "chain.jsonl") {
		t.Fatalf("Path: %s", w.Path("chain.jsonl"))
	}
}

func TestNewerFormatRefused(t *testing.T) {
	t.Setenv(StateDirEnv, t.TempDir())
	root := t.TempDir()
	w, err := Init(root)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(w.Path("format"), []byte(strconv.Itoa(FormatVersion+1)+"\n"), 0o600)
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "upgrade agent-rewind") {
		t.Fatalf("newer format: %v", err)
	}
	os.WriteFile(w.Path("format"), []byte("garbage"), 0o600)
	if _, err := Open(root); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("garbage format: %v", err)
	}
}

func TestStateDirInsideWorkspaceRefused(t *testing.T) {
	root := t.TempDir()
	t.Setenv(StateDirEnv, filepath.Join(root, "state"))
	if _, err := Init(root); !errors.Is(err, ErrStateInWorkspace) || !strings.Contains(err.Error(), "--state-dir") {
		t.Fatalf("a state folder inside the workspace: %v", err)
	}
}

// TestOlderFormatsUpgraded: a store of format 1 (flat manifests) or 2 (whole contents only),
// written by an earlier version, is opened as it is and marked format 3, with a notice, so that
// an older agent-rewind meeting what this one writes (chunked contents) asks to be upgraded.
func TestOlderFormatsUpgraded(t *testing.T) {
	for _, v := range []string{"1", "2"} {
		t.Setenv(StateDirEnv, t.TempDir())
		var log strings.Builder
		old := Log
		Log = &log
		t.Cleanup(func() { Log = old })
		root := t.TempDir()
		w, err := Init(root)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(w.Path("format"), []byte(v+"\n"), 0o600)
		if _, err := Open(root); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(w.Path("format")); string(b) != "3\n" {
			t.Fatalf("format after opening a format %s store: %q", v, b)
		}
		if !strings.Contains(log.String(), "now format 3") {
			t.Fatalf("no notice of the upgrade: %q", log.String())
		}
	}
}
