package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// diff --json keeps a path that is not valid UTF-8 recoverable: pathBytes holds its exact bytes.
func TestDiffJSONInvalidUTF8Path(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("a"), 0o644)
	a := jsonOK[cpOut](t, dir, "checkpoint", "a").ID
	bad := "caf\xe9-\xff.txt" // Latin-1 bytes, as an old archive leaves them
	if err := os.WriteFile(filepath.Join(dir, bad), []byte("b"), 0o644); err != nil {
		t.Skipf("this file system refuses a name that is not UTF-8: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("changed"), 0o644)
	var out struct {
		Changes []struct {
			Path, Kind string
			PathBytes  []byte
		}
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "--json", "diff", a).stdout), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range out.Changes {
		switch c.Path {
		case "ok.txt":
			if c.PathBytes != nil {
				t.Errorf("a valid UTF-8 path carries pathBytes %q", c.PathBytes)
			}
		default:
			if string(c.PathBytes) != bad || c.Kind != "added" {
				t.Errorf("change %q (%s): pathBytes %q, want the exact name %q", c.Path, c.Kind, c.PathBytes, bad)
			}
			found = true
		}
	}
	if !found || len(out.Changes) != 2 {
		t.Fatalf("changes %+v, want ok.txt modified and the non-UTF-8 name added", out.Changes)
	}
}
