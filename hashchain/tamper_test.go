package hashchain

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tamperCase is one tampered copy of a real chain file and where verification must find it.
type tamperCase struct {
	name    string
	chain   []byte
	head    bool    // verify against the original chain's head (exact), as an auditor does
	line    int64   // the line reported (0: not one line's)
	problem Problem // "" for any problem (a flipped byte may break a line in several ways)
}

// tamperCases builds the tamper table from an original chain.
func tamperCases(t testing.TB, orig []byte) []tamperCase {
	lines := bytes.SplitAfter(orig, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the final LF
	n := len(lines)
	join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
	var cases []tamperCase
	// Flip every byte of every line (XOR 1).
	off := 0
	for i, l := range lines {
		for j := range l {
			b := bytes.Clone(orig)
			b[off+j] ^= 1
			cases = append(cases, tamperCase{name: fmt.Sprintf("flip line %d byte %d", i+1, j), chain: b, line: int64(i + 1)})
		}
		off += len(l)
	}
	for i := range n {
		ls := append(append([][]byte{}, lines[:i]...), lines[i+1:]...)
		c := tamperCase{name: fmt.Sprintf("delete line %d", i+1), chain: join(ls), line: int64(i + 1), problem: ProblemSeqGap}
		if i == n-1 { // deleting the last line leaves a valid shorter chain: only a head shows it
			c.head, c.line, c.problem = true, 0, ProblemCut
		}
		cases = append(cases, c)
	}
	for i := 0; i+1 < n; i++ {
		ls := append([][]byte{}, lines...)
		ls[i], ls[i+1] = ls[i+1], ls[i]
		cases = append(cases, tamperCase{name: fmt.Sprintf("swap lines %d and %d", i+1, i+2), chain: join(ls), line: int64(i + 1), problem: ProblemSeqGap})
	}
	for i := range n {
		ls := append(append(append([][]byte{}, lines[:i+1]...), lines[i]), lines[i+1:]...)
		cases = append(cases, tamperCase{name: fmt.Sprintf("duplicate line %d", i+1), chain: join(ls), line: int64(i + 2), problem: ProblemSeqGap})
	}
	cases = append(cases,
		tamperCase{name: "truncate the tail by 3 lines (anchored head)", chain: join(lines[:n-3]), head: true, problem: ProblemCut},
		tamperCase{name: "truncate mid-line", chain: orig[:len(orig)-10], line: int64(n), problem: ProblemTorn},
		tamperCase{name: "truncate to nothing (anchored head)", chain: nil, head: true, problem: ProblemCut},
	)
	// A forged line appended: well-formed and canonical, linked to the last entry, but with a
	// made-up hash; and one with a correct hash, which only the head shows to be beyond it.
	last, err := decodeEntry(lines[n-1][:len(lines[n-1])-1])
	if err != nil {
		t.Fatal(err)
	}
	var prev [32]byte
	decodeHex32(&prev, last.Hash)
	forged, h := encodeEntry(int64(n), last.Time, "effect", []byte(`{"paid":true}`), prev)
	cases = append(cases, tamperCase{name: "append a forged entry with a correct hash (signed head)", chain: append(append(bytes.Clone(orig), forged...), '\n'), head: true, line: int64(n + 1), problem: ProblemBeyondHead})
	bad := bytes.Replace(forged, []byte(fmt.Sprintf("%x", h)), []byte(fmt.Sprintf("%x", [32]byte{0xab})), 1)
	cases = append(cases, tamperCase{name: "append a forged entry with a made-up hash", chain: append(append(bytes.Clone(orig), bad...), '\n'), line: int64(n + 1), problem: ProblemHashMismatch})
	// A consistent rewrite of the middle: every hash recomputed. Only a head shows it.
	cases = append(cases, tamperCase{name: "rewrite entry 4 and every later hash (signed head)", chain: rewriteFrom(t, orig, 4, func(e *Entry) { e.Kind = "nothing happened" }), head: true, problem: ProblemRewritten})
	return cases
}

// tamperChain writes a real chain of 8 entries through the API and returns it with its head.
func tamperChain(t testing.TB) (*testChain, []byte, Head) {
	tc := newTestChain(t)
	c := tc.open(t)
	fill(t, c, 8)
	head, err := c.Head()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	orig, err := os.ReadFile(tc.path)
	if err != nil {
		t.Fatal(err)
	}
	return tc, orig, head
}

func TestTamperTable(t *testing.T) {
	_, orig, head := tamperChain(t)
	if _, err := Verify(bytes.NewReader(orig), VerifyOptions{Head: &head, ExactHead: true}); err != nil {
		t.Fatalf("the original does not verify: %v", err)
	}
	cases := tamperCases(t, orig)
	for _, tt := range cases {
		opts := VerifyOptions{Name: "tampered"}
		if tt.head {
			opts.Head, opts.ExactHead = &head, true
		}
		_, err := Verify(bytes.NewReader(tt.chain), opts)
		var ve *VerifyError
		if !errors.As(err, &ve) || !errors.Is(err, ErrBroken) {
			t.Errorf("%s: not detected: %v", tt.name, err)
			continue
		}
		if ve.Line != tt.line || (tt.problem != "" && ve.Problem != tt.problem) || (ve.Line > 0 && ve.Seq != ve.Line-1) {
			t.Errorf("%s: reported %v; want line %d, problem %q", tt.name, err, tt.line, tt.problem)
		}
	}
	t.Logf("%d tampered chains, each detected and located", len(cases))
}

// TestTamperedChainsRefusedOnOpen checks that appending to a tampered chain file is refused:
// the tail is checked on open, the rest by the anchor and, for a file its stamp does not vouch
// for, by verifying it whole (FORMAT.md §8.1).
func TestTamperedChainsRefusedOnOpen(t *testing.T) {
	tc, orig, _ := tamperChain(t)
	for _, tt := range tamperCases(t, orig) {
		if strings.Contains(tt.name, "correct hash") {
			continue // indistinguishable from a real append whose anchor write was cut short
		}
		// Without its sidecar, as a forger who knows the format leaves it: rebuilding it verifies
		// the chain, and the anchor is checked against the result.
		os.WriteFile(tc.path, tt.chain, 0o600)
		os.Remove(sidecarPath(tc.path))
		c, err := Open(tc.path, Options{Anchor: tc.anchor})
		if err == nil {
			c.Close()
			t.Errorf("%s: opened without error", tt.name)
		}
	}
}

// pythonVerifier returns the python3 to run testdata/verify.py with, or skips (fails under
// REWIND_CI=1) when there is none.
func pythonVerifier(t *testing.T) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("python3 is not on PATH, and REWIND_CI=1 requires the independent Python verifier to run: install python3")
		}
		t.Skip("python3 is not on PATH: skipping the independent Python verifier (install python3 to run it)")
	}
	return py
}

// runPython runs verify.py on files and returns its output line for each.
func runPython(t *testing.T, py string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(py, append([]string{"testdata/verify.py"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		t.Fatal(err)
	}
	if errb.Len() > 0 {
		t.Fatalf("verify.py wrote to stderr: %s", errb.String())
	}
	res := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		rest, ok := strings.CutPrefix(l, "verify.py: ")
		if !ok {
			t.Fatalf("verify.py printed %q", l)
		}
		for _, a := range args {
			if r, ok := strings.CutPrefix(rest, a+": "); ok {
				res[a] = r
			}
		}
	}
	return res
}

// TestPythonVerifier runs the independent verifier, written from FORMAT.md alone, against
// chains the Go code wrote: it accepts them and rejects every tampered one, at the same line
// and for the same reason as the Go verifier.
func TestPythonVerifier(t *testing.T) {
	py := pythonVerifier(t)
	tc, orig, head := tamperChain(t)
	dir := t.TempDir()
	headFile := filepath.Join(dir, "head")
	os.WriteFile(headFile, []byte(head.Checkpoint()), 0o600)

	// Good chains: this one, an empty one, the test vector, and an export.
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	res := runPython(t, py, tc.path, empty, "testdata/chain3.jsonl")
	for _, f := range []string{tc.path, empty, "testdata/chain3.jsonl"} {
		if !strings.HasPrefix(res[f], "ok: ") {
			t.Errorf("verify.py rejects good chain %s: %s", f, res[f])
		}
	}
	if r := runPython(t, py, "testdata/chain3.jsonl", "--head", "testdata/chain3.head")["testdata/chain3.jsonl"]; !strings.HasPrefix(r, "ok: 3 entries, matching the head") {
		t.Errorf("verify.py on the test vector and its head: %s", r)
	}
	res = runPython(t, py, tc.path, "--head", headFile)
	if !strings.HasPrefix(res[tc.path], "ok: 8 entries, matching the head") {
		t.Errorf("verify.py with head: %s", res[tc.path])
	}
	c := tc.open(t)
	skey, _, _ := GenerateKey("auditor-test")
	var tarball bytes.Buffer
	if _, err := c.Export(&tarball, ExportOptions{SignKey: skey}); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(dir, "export.tar")
	os.WriteFile(exp, tarball.Bytes(), 0o600)
	if r := runPython(t, py, exp)[exp]; !strings.HasPrefix(r, "ok: 8 entries, matching the head") {
		t.Errorf("verify.py on a signed export: %s", r)
	}

	// Every tampered chain, grouped by whether the head is given.
	cases := tamperCases(t, orig)
	files := map[bool][]string{}
	byFile := map[string]tamperCase{}
	for i, tt := range cases {
		f := filepath.Join(dir, fmt.Sprintf("t%04d.jsonl", i))
		os.WriteFile(f, tt.chain, 0o600)
		files[tt.head] = append(files[tt.head], f)
		byFile[f] = tt
	}
	for _, withHead := range []bool{false, true} {
		args := files[withHead]
		if withHead {
			args = append(args, "--head", headFile)
		}
		res := runPython(t, py, args...)
		for _, f := range files[withHead] {
			tt, got := byFile[f], res[f]
			opts := VerifyOptions{}
			if tt.head {
				opts.Head, opts.ExactHead = &head, true
			}
			_, err := Verify(bytes.NewReader(tt.chain), opts)
			var ve *VerifyError
			errors.As(err, &ve)
			want := fmt.Sprintf("line %d (seq %d): %s: ", ve.Line, ve.Seq, ve.Problem)
			if ve.Line == 0 {
				want = string(ve.Problem) + ": "
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("%s: verify.py says %q; the Go verifier says %v", tt.name, got, err)
			}
		}
	}
	t.Logf("verify.py agreed with the Go verifier on %d tampered chains", len(cases))
}
