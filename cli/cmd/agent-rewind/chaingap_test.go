package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// TestCheckpointKilledBeforeRecord SIGKILLs a real "agent-rewind checkpoint" after it committed
// its checkpoint and before it appended the chain entry (it waits for the chain's lock, which
// the test holds). "chain verify" reports the gap; the next checkpoint records the killed one
// late, with its original time, and the record is complete again.
func TestCheckpointKilledBeforeRecord(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	first := jsonOK[cpOut](t, dir, "checkpoint", "first")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b"), 0o644)

	lock, err := os.OpenFile(filepath.Join(stateDir(t, dir), "chain.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := lockfile.Lock(lock, lockfile.Exclusive); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "checkpoint", "killed")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var killed string
	for killed == "" {
		select {
		case err := <-exited:
			t.Fatalf("the checkpoint exited (%v) before it committed: %s", err, out.String())
		case <-time.After(5 * time.Millisecond):
		}
		names, _ := os.ReadDir(filepath.Join(stateDir(t, dir), "checkpoints"))
		for _, n := range names {
			if n.Name() != first.ID && !strings.HasPrefix(n.Name(), ".") {
				killed = n.Name()
			}
		}
	}
	cmd.Process.Kill()
	<-exited
	lock.Close()

	r := ok(t, dir, "chain", "verify")
	for _, want := range []string{"gap: checkpoint " + killed + " has no chain entry", "gap: a checkpoint entry noted at", "records it late"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("chain verify does not say %q:\n%s", want, r.stdout)
		}
	}
	v := decode[struct {
		OK   bool
		Gaps workspace.Gaps
	}](t, run(t, dir, "", "--json", "chain", "verify"))
	if !v.OK || len(v.Gaps.UnrecordedCheckpoints) != 1 || v.Gaps.UnrecordedCheckpoints[0] != killed || len(v.Gaps.Leftover) != 1 || !v.Gaps.Leftover[0].Committed {
		t.Fatalf("chain verify --json: %+v", v)
	}

	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("c"), 0o644)
	jsonOK[cpOut](t, dir, "checkpoint", "next")
	es := readChain(t, dir)
	if len(es) != 3 || es[1].Kind != "checkpoint" || !strings.Contains(string(es[1].Data), `"id":"`+killed+`"`) || !strings.Contains(string(es[1].Data), `"recorded_late":{`) {
		t.Fatalf("chain after the next checkpoint: %+v", es)
	}
	if r := ok(t, dir, "chain", "verify"); !strings.Contains(r.stdout, "record: complete") {
		t.Fatalf("chain verify after the next checkpoint:\n%s", r.stdout)
	}
}

// TestWritersRefuseChainBrokenInMiddle: after a line in the middle of the chain is deleted,
// edited or swapped with another, the next guard refuses the effect without admitting it, and
// the next checkpoint is not recorded; both name the first bad line and say to run
// "agent-rewind chain verify"; the chain file is left as it is.
func TestWritersRefuseChainBrokenInMiddle(t *testing.T) {
	for _, c := range []struct {
		name   string
		line   string
		tamper func([][]byte) [][]byte
	}{
		{"deleted", "line 3 (seq 2): seq gap", func(l [][]byte) [][]byte { return append(l[:2:2], l[3:]...) }},
		{"edited", "line 3 (seq 2): hash mismatch", func(l [][]byte) [][]byte {
			l[2] = bytes.Replace(l[2], []byte(`"i":2`), []byte(`"i":9`), 1)
			return l
		}},
		{"swapped", "line 2 (seq 1): seq gap", func(l [][]byte) [][]byte { l[1], l[3] = l[3], l[1]; return l }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, _ := chainWorkspace(t, 6)
			dir := ws.Root
			orig, _ := os.ReadFile(ws.ChainPath())
			time.Sleep(20 * time.Millisecond) // past the file system's timestamp granularity
			tampered := bytes.Join(c.tamper(bytes.SplitAfter(orig, []byte("\n"))), nil)
			if err := os.WriteFile(ws.ChainPath(), tampered, 0o600); err != nil {
				t.Fatal(err)
			}

			r := guard(t, dir, `{"key":"charge-42","payload":{"usd":5}}`)
			if r.code == 0 || !strings.Contains(r.stderr, c.line) || !strings.Contains(r.stderr, "agent-rewind chain verify") {
				t.Fatalf("guard on a chain broken in the middle: %+v", r)
			}
			if _, err := os.Stat(filepath.Join(stateDir(t, dir), "effects", "keys")); err == nil {
				if names, _ := filepath.Glob(filepath.Join(stateDir(t, dir), "effects", "keys", "*.json")); len(names) != 0 {
					t.Fatalf("the refused effect was admitted: %v", names)
				}
			}
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
			r = run(t, dir, "", "checkpoint", "x")
			if r.code != 1 || !strings.Contains(r.stderr, c.line) || !strings.Contains(r.stderr, "agent-rewind chain verify") {
				t.Fatalf("checkpoint on a chain broken in the middle: %+v", r)
			}
			if after, _ := os.ReadFile(ws.ChainPath()); !bytes.Equal(after, tampered) {
				t.Fatal("the chain file was changed")
			}
			if r := run(t, dir, "", "chain", "verify"); r.code != 1 || !strings.Contains(r.stdout, c.line) {
				t.Fatalf("chain verify: %+v", r)
			}
		})
	}
}
