package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClearOut: what an earlier release wrote is removed before a build writes the folder again,
// so SHA256SUMS never sits beside stale binaries; a file a release does not write stops the run
// and stays.
func TestClearOut(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"SHA256SUMS", "agent-rewind-v0.0.9-linux-amd64", "agent-rewind-hook-v0.0.9-linux-amd64", "agent-rewind-mcp-0.0.9.tgz", "npm/mcp/package.json"} {
		if err := writeFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	if err := clearOut(dir, &log); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left %v", left)
	}
	if !strings.Contains(log.String(), "agent-rewind-v0.0.9-linux-amd64 from an earlier run") {
		t.Fatalf("log: %s", log.String())
	}
	if err := clearOut(filepath.Join(dir, "absent"), io.Discard); err != nil {
		t.Fatalf("a folder not there yet: %v", err)
	}

	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := clearOut(dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "notes.txt") || !strings.Contains(err.Error(), "-out") {
		t.Fatalf("a folder with a file of someone else's: %v", err)
	}
	names := func() (n []string) {
		es, _ := os.ReadDir(dir)
		for _, e := range es {
			n = append(n, e.Name())
		}
		return n
	}
	if got := names(); !slices.Equal(got, []string{"SHA256SUMS", "notes.txt"}) {
		t.Fatalf("a refused run removed files: %v", got)
	}
}
