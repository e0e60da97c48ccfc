package agentws_test

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
)

// helperEnv selects a helper mode of this test binary (see helperMain).
const helperEnv = "AGENTWS_TEST_HELPER"

// helperMain runs a helper mode in a child process and returns its exit status.
//
// "append": add failure notes to the workspace REWIND_TEST_ROOT forever, printing
// "ok <i> <seq>" once each Add has returned (the parent kills it).
func helperMain(mode string) int {
	if mode != "append" {
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	ws, err := workspace.Open(os.Getenv("REWIND_TEST_ROOT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m := agentws.OpenMemory(ws.Meta, ws)
	for i := 0; ; i++ {
		n, _, err := m.Add(cpA, fmt.Sprintf("attempt %d failed %s", i, strings.Repeat("x", i%300)), "lesson")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ok %d %d\n", i, n.Seq)
	}
}

// TestMemoryCrash kills a process that appends notes (SIGKILL, at a varying moment) and checks
// that every note it acknowledged is there, that the file is whole lines or ends in a torn line
// that the next reader moves aside, and that the chain verifies.
func TestMemoryCrash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	trials := 8
	if testing.Short() {
		trials = 3
	}
	for trial := range trials {
		ws, err := workspace.Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=append", "REWIND_TEST_ROOT="+ws.Root)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[int]bool{}
		stopAt := 1 + rand.IntN(40)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var i int
			var seq int64
			if _, err := fmt.Sscanf(sc.Text(), "ok %d %d", &i, &seq); err != nil {
				t.Fatalf("child said %q", sc.Text())
			}
			acked[i] = true
			if len(acked) == stopAt {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		cmd.Wait()

		// A kill during the chain's own append may tear the chain: that is the chain's recovery
		// (a person's "agent-rewind chain recover"), done here so memory can record its own.
		if c, err := ws.Chain(); err == nil {
			c.Close()
		} else if te := (*hashchain.TornError)(nil); errors.As(err, &te) {
			opts, _ := ws.ChainOptions(false)
			if _, err := hashchain.Recover(ws.ChainPath(), opts); err != nil {
				t.Fatalf("trial %d: chain recover: %v", trial, err)
			}
		} else {
			t.Fatalf("trial %d: chain: %v", trial, err)
		}
		m := agentws.OpenMemory(ws.Meta, ws)
		repaired := false
		m.OnRecover = func(agentws.TornTail) { repaired = true }
		notes, err := m.Notes()
		if err != nil {
			t.Fatalf("trial %d: Notes after the kill: %v", trial, err)
		}
		have := map[string]bool{}
		for _, n := range notes {
			have[n.WhatFailed] = true
		}
		for i := range acked {
			if !have[fmt.Sprintf("attempt %d failed %s", i, strings.Repeat("x", i%300))] {
				t.Fatalf("trial %d: acknowledged note %d is missing (%d notes)", trial, i, len(notes))
			}
		}
		if _, _, err := m.Add(cpA, "after the crash", ""); err != nil {
			t.Fatalf("trial %d: Add after the kill: %v", trial, err)
		}
		ws.Close()
		if _, err := hashchain.VerifyFile(ws.ChainPath(), hashchain.VerifyOptions{}); err != nil {
			t.Fatalf("trial %d: chain verify: %v", trial, err)
		}
		t.Logf("trial %d: killed after %d acknowledged notes; %d in the file; torn line repaired: %v", trial, len(acked), len(notes), repaired)
	}
}
