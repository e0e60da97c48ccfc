//go:build unix

package gateway

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO in place of the savings receipt or named as the configuration file fails at once,
// naming it: reading it used to block forever.
func TestFilesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "savings.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"LoadSavings":    func() error { _, err := LoadSavings(fifo); return err },
		"readConfigFile": func() error { _, err := readConfigFile(fifo, "flag --config"); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), fifo+" is a FIFO, not a regular file") {
				t.Errorf("%s(FIFO): %v", name, err)
			}
		case <-time.After(10 * time.Second): // a bound for a hang, not a timing assertion
			t.Fatalf("%s(FIFO): still blocked after 10s", name)
		}
	}
}
