package winpath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file 300 characters deep is created and read through Long's form, and short paths pass as
// they are.
func TestLong(t *testing.T) {
	if got := Long(`C:\short`); got != `C:\short` {
		t.Fatalf("Long(short) = %q", got)
	}
	dir := t.TempDir()
	deep := filepath.Join(dir, strings.Repeat("d", 120), strings.Repeat("e", 120), strings.Repeat("f", 60)+".txt")
	if !strings.HasPrefix(Long(deep), `\\?\`) {
		t.Fatalf("Long(%d characters) = %q", len(deep), Long(deep))
	}
	if err := os.MkdirAll(filepath.Dir(deep), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Long(deep), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(deep); err != nil || string(b) != "x" {
		t.Fatalf("read back %q %v", b, err)
	}
}
