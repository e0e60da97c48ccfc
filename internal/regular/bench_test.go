package regular

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpen compares Open (open, fstat, clear O_NONBLOCK) with os.Open on a small regular
// file, the cost added to every object a restore reads.
func BenchmarkOpen(b *testing.B) {
	name := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(name, []byte("x"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func(string) (*os.File, error)
	}{{"regular.Open", Open}, {"os.Open", os.Open}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				f, err := c.open(name)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
