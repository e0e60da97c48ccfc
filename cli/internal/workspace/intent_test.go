package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/snapshot"
)

// helperEnv makes this test binary a child that does one operation in the workspace
// REWIND_TEST_ROOT and SIGKILLs itself at the point REWIND_TEST_KILL names (see killer).
const helperEnv = "WORKSPACE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode))
	}
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// killer is the Recorder a child passes to a leaf: the workspace, except that it SIGKILLs the
// process at one point of the commit-then-record sequence:
//
//	"before-commit"  Intend has written its note; the leaf has not committed
//	"before-append"  the leaf committed; its entry is not on the chain
//	"after-append"   the entry is on the chain; the note is not yet removed
type killer struct {
	w  *Workspace
	at string
}

func (k killer) Record(kind string, data any) (int64, error) { return k.w.Record(kind, data) }

func (k killer) Intend(kind string, data any, file string, content []byte) (func() (int64, error), func(), error) {
	record, drop, err := k.w.Intend(kind, data, file, content)
	if err != nil {
		return nil, nil, err
	}
	if k.at == "before-commit" {
		die()
	}
	return func() (int64, error) {
		if k.at == "after-append" {
			k.w.Record(kind, data)
		}
		die()
		return record()
	}, drop, nil
}

func helperMain(mode string) int {
	w, err := Open(os.Getenv("REWIND_TEST_ROOT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	k := killer{w: w, at: os.Getenv("REWIND_TEST_KILL")}
	switch mode {
	case "checkpoint":
		s, err := snapshot.Open(w.Root, snapshot.Options{StateDir: w.Meta, Recorder: k})
		if err == nil {
			_, err = s.Checkpoint(context.Background(), "killed")
		}
		fmt.Fprintln(os.Stderr, "not killed:", err)
	case "admit":
		l, err := barrier.Open(w.Path(EffectsDir), k)
		if err == nil {
			_, err = l.Admit(barrier.Request{Key: "charge-42", Payload: json.RawMessage(`{"usd":5}`), Source: "cli"})
		}
		fmt.Fprintln(os.Stderr, "not killed:", err)
	}
	return 1
}

// killChild runs the helper mode in a child killed at the point at, and checks that it died of
// SIGKILL.
func killChild(t *testing.T, w *Workspace, mode, at string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "REWIND_TEST_ROOT="+w.Root, "REWIND_TEST_KILL="+at)
	out, err := cmd.CombinedOutput()
	if !killed(cmd.ProcessState) {
		t.Fatalf("the child was not killed at %s: %v\n%s", at, err, out)
	}
}

func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	os.WriteFile(filepath.Join(w.Root, "a.txt"), []byte("a"), 0o644)
	return w
}

// entries returns the chain's entries, verifying it first.
func entries(t *testing.T, w *Workspace) []hashchain.Entry {
	t.Helper()
	if _, err := hashchain.VerifyFile(w.ChainPath(), hashchain.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := w.ExistingChain()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []hashchain.Entry
	if err := c.Each(func(e hashchain.Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func gaps(t *testing.T, w *Workspace) *Gaps {
	t.Helper()
	g, err := w.ChainGaps()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func notes(t *testing.T, w *Workspace) []string {
	t.Helper()
	ents, _ := os.ReadDir(w.Path(IntentsDir))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestKilledBetweenCommitAndRecord kills a real process with SIGKILL at each point of a
// checkpoint's and an effect admission's commit-then-record sequence, then checks what
// ChainGaps reports, and that the next writer makes the chain complete: the entry recorded
// late (with the original time) when the operation committed and the chain lacked it, nothing
// when it did not commit or was already recorded; never twice.
func TestKilledBetweenCommitAndRecord(t *testing.T) {
	for _, mode := range []string{"checkpoint", "admit"} {
		kind := map[string]string{"checkpoint": "checkpoint", "admit": barrier.KindEffect}[mode]
		for _, at := range []string{"before-commit", "before-append", "after-append"} {
			t.Run(mode+"/"+at, func(t *testing.T) {
				w := newWorkspace(t)
				killChild(t, w, mode, at)
				if n := notes(t, w); len(n) != 1 {
					t.Fatalf("notes after the kill: %v, want one", n)
				}

				g := gaps(t, w)
				if len(g.Leftover) != 1 || g.Leftover[0].Kind != kind || g.Leftover[0].Committed != (at != "before-commit") {
					t.Fatalf("ChainGaps reports leftover notes %+v", g.Leftover)
				}
				unrecorded := len(g.UnrecordedCheckpoints) + len(g.UnrecordedEffects)
				if want := map[string]int{"before-commit": 0, "before-append": 1, "after-append": 0}[at]; unrecorded != want {
					t.Fatalf("ChainGaps reports %d unrecorded operations, want %d: %+v", unrecorded, want, g)
				}

				// The next writer.
				if _, err := w.Record("memory", map[string]string{"note": "next"}); err != nil {
					t.Fatal(err)
				}
				es := entries(t, w)
				var got []hashchain.Entry
				for _, e := range es {
					if e.Kind == kind {
						got = append(got, e)
					}
				}
				wantN := map[string]int{"before-commit": 0, "before-append": 1, "after-append": 1}[at]
				if len(got) != wantN {
					t.Fatalf("%d %q entries after the next writer, want %d: %+v", len(got), kind, wantN, es)
				}
				if es[len(es)-1].Kind != "memory" {
					t.Fatalf("the late entry was not appended before the next writer's own: %+v", es)
				}
				if at == "before-append" {
					var d map[string]any
					json.Unmarshal(got[0].Data, &d)
					late, _ := d[LateKey].(map[string]any)
					tm, _ := late["time"].(string)
					if late == nil || tm == "" || tm >= got[0].Time || !strings.Contains(late["reason"].(string), "recorded") {
						t.Fatalf("the late entry does not say it is late, with the original time: %s (appended %s)", got[0].Data, got[0].Time)
					}
				}
				if n := notes(t, w); len(n) != 0 {
					t.Fatalf("notes left after the next writer: %v", n)
				}
				if g := gaps(t, w); !g.Complete() {
					t.Fatalf("the record is not complete after the next writer: %+v", g)
				}
			})
		}
	}
}

// TestLiveNoteNotTakenOver: a note whose writer is still working (it holds the note's flock)
// is neither recorded late nor reported by another writer.
func TestLiveNoteNotTakenOver(t *testing.T) {
	w := newWorkspace(t)
	file := filepath.Join(w.Meta, "thing")
	record, _, err := w.Intend("checkpoint", map[string]string{"id": "abc"}, file, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte("x"), 0o600) // the commit
	other, err := Open(w.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Record("memory", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if g := gaps(t, other); len(g.Leftover) != 0 {
		t.Fatalf("a live note is reported as left over: %+v", g.Leftover)
	}
	if _, err := record(); err != nil {
		t.Fatal(err)
	}
	es := entries(t, w)
	if len(es) != 2 || es[0].Kind != "memory" || es[1].Kind != "checkpoint" || strings.Contains(string(es[1].Data), LateKey) {
		t.Fatalf("entries: %+v", es)
	}
	if n := notes(t, w); len(n) != 0 {
		t.Fatalf("notes left: %v", n)
	}
}

// TestChainGapsFindsMissingEntries: entries naming a checkpoint or an effect the store does not
// hold are reported.
func TestChainGapsFindsMissingEntries(t *testing.T) {
	w := newWorkspace(t)
	w.Record("checkpoint", map[string]any{"id": "0123456789ab"})
	w.Record(barrier.KindEffect, map[string]any{"key": "k", "generation": 1})
	g := gaps(t, w)
	if len(g.MissingCheckpoints) != 1 || g.MissingCheckpoints[0].ID != "0123456789ab" || g.MissingCheckpoints[0].Seq != 0 ||
		len(g.MissingEffects) != 1 || g.MissingEffects[0].Key != "k" || g.MissingEffects[0].Seq != 1 || g.Complete() {
		t.Fatalf("ChainGaps: %+v", g)
	}
}
