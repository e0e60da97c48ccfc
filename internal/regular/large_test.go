package regular

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A large file reads whole, as with os.ReadFile.
func TestReadFileLarge(t *testing.T) {
	name := filepath.Join(t.TempDir(), "big")
	want := strings.Repeat("0123456789abcdef", 1<<16)
	if err := os.WriteFile(name, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(name)
	if err != nil || string(got) != want {
		t.Fatalf("ReadFile: %d bytes, %v; want %d", len(got), err, len(want))
	}
}
