//go:build unix

package hashchain

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in place of the chain, its sidecar, its lock or its anchor fails at once, naming it: it
// used to block Open (and so every command that records) or VerifyFile forever.
func TestChainFilesFIFO(t *testing.T) {
	for _, which := range []string{"chain", "sidecar", "lock", "anchor"} {
		t.Run(which, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "chain.jsonl")
			opts := Options{Create: true, Anchor: filepath.Join(dir, "anchor")}
			c, err := Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Append("test", map[string]int{"n": 1}); err != nil {
				t.Fatal(err)
			}
			c.Close()
			fifo := map[string]string{"chain": path, "sidecar": sidecarPath(path), "lock": lockPath(path), "anchor": opts.Anchor}[which]
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"Open": func() error {
					c, err := Open(path, opts)
					if err == nil {
						c.Close()
					}
					return err
				},
			}
			if which == "chain" || which == "sidecar" {
				calls["VerifyFile"] = func() error { _, err := VerifyFile(path, VerifyOptions{}); return err }
			}
			for name, call := range calls {
				done := make(chan error, 1)
				go func() { done <- call() }()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), fifo+" is a FIFO, not a regular file") {
						t.Errorf("%s with a FIFO for the %s: %v", name, which, err)
					}
				case <-time.After(10 * time.Second): // a bound for a hang, not a timing assertion
					t.Fatalf("%s with a FIFO for the %s: still blocked after 10s", name, which)
				}
			}
		})
	}
}
