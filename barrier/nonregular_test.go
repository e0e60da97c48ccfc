//go:build unix

package barrier

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifoAt replaces whatever is at name with a FIFO.
func mkfifoAt(t *testing.T, name string) {
	t.Helper()
	os.Remove(name)
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
}

// failsNamingFIFO runs f, which must return at once (a FIFO used to block it forever) with an
// error naming name as a FIFO.
func failsNamingFIFO(t *testing.T, what, name string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), name+" is a FIFO, not a regular file") {
			t.Errorf("%s with a FIFO at %s: %v", what, name, err)
		}
	case <-time.After(10 * time.Second): // a bound for a hang, not a timing assertion
		t.Fatalf("%s with a FIFO at %s: still blocked after 10s", what, name)
	}
}

// A FIFO in place of the rules file, a ledger record or the ledger's lock fails at once: a
// guard reading one would otherwise block until the agent's hook timed out, letting the call run.
func TestLedgerFilesFIFO(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".rewind"), 0o700)
	rules := filepath.Join(root, filepath.FromSlash(RulesFile))
	mkfifoAt(t, rules)
	failsNamingFIFO(t, "LoadRules", rules, func() error {
		_, err := LoadRules(root)
		if !errors.Is(err, ErrBadRules) {
			return errors.New("not ErrBadRules: " + err.Error())
		}
		return err
	})

	l, _ := newLedger(t)
	req := charge(1)
	mustAdmit(t, l, req)
	record := l.keyPath(req.Key)
	mkfifoAt(t, record)
	failsNamingFIFO(t, "Get", record, func() error { _, err := l.Get(req.Key); return err })
	failsNamingFIFO(t, "List", record, func() error { _, err := l.List(); return err })
	failsNamingFIFO(t, "Admit", record, func() error {
		d, err := l.Admit(req)
		if d.Admitted {
			return errors.New("admitted")
		}
		return err
	})

	lock := filepath.Join(filepath.Dir(filepath.Dir(record)), lockName)
	mkfifoAt(t, lock)
	other := req
	other.Key = "another-key"
	failsNamingFIFO(t, "Admit", lock, func() error {
		d, err := l.Admit(other)
		if d.Admitted {
			return errors.New("admitted")
		}
		return err
	})
}
