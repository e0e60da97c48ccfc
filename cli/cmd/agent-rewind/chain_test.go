package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
	"golang.org/x/mod/sumdb/tlog"
)

// chainWorkspace makes a workspace whose chain holds n entries, recorded as the other
// modules record them (through the workspace's Recorder).
func chainWorkspace(t *testing.T, n int) (*workspace.Workspace, []int64) {
	t.Helper()
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	ws, err := workspace.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws.Chain()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := workspace.NewRecorder(c)
	var seqs []int64
	for i := range n {
		seq, err := rec.Record([]string{"checkpoint", "effect", "refusal"}[i%3], map[string]any{"i": i, "key": "deploy:prod"})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	return ws, seqs
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("--json output %q: %v (stderr %q)", r.stdout, err, r.stderr)
	}
	return v
}

func TestChainVerifyHeadProve(t *testing.T) {
	ws, seqs := chainWorkspace(t, 7)
	if seqs[6] != 6 {
		t.Fatalf("Record returned seqs %v", seqs)
	}
	dir := ws.Root

	r := run(t, dir, "", "chain", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "ok: "+ws.ChainPath()+": 7 entries intact") || !strings.Contains(r.stdout, "extends its anchored head of size 7") {
		t.Fatalf("verify: %d %q %q", r.code, r.stdout, r.stderr)
	}
	v := decode[struct {
		OK      bool
		Size    int64
		Against string
		Head    hashchain.Head
	}](t, run(t, dir, "", "--json", "chain", "verify"))
	if !v.OK || v.Size != 7 || v.Against != "anchor" || v.Head.Size != 7 {
		t.Fatalf("verify --json: %+v", v)
	}

	r = run(t, t.TempDir(), "", "--workspace", dir, "chain", "head")
	head, signed, err := hashchain.ParseHead([]byte(r.stdout))
	if r.code != 0 || err != nil || signed || head.Size != 7 || head != v.Head {
		t.Fatalf("head: %d %q %v", r.code, r.stdout, err)
	}
	hj := decode[struct {
		Head       hashchain.Head
		Checkpoint string
		Signed     bool
	}](t, run(t, dir, "", "--json", "chain", "head"))
	if hj.Head != head || hj.Checkpoint != r.stdout || hj.Signed {
		t.Fatalf("head --json: %+v", hj)
	}

	// Inclusion proof of entry 3 against the head, checked here independently of the CLI.
	r = run(t, dir, "", "chain", "prove", "3")
	if r.code != 0 || !strings.Contains(r.stdout, "entry 3 (checkpoint") || !strings.Contains(r.stdout, "(checked)") {
		t.Fatalf("prove: %d %q %q", r.code, r.stdout, r.stderr)
	}
	p := decode[struct {
		Type  string
		Seq   int64
		Entry hashchain.Entry
		Head  hashchain.Head
		Proof []string
	}](t, run(t, dir, "", "--json", "chain", "prove", "3"))
	if p.Type != "inclusion" || p.Entry.Seq != 3 || p.Head != head {
		t.Fatalf("prove --json: %+v", p)
	}
	if err := hashchain.CheckInclusion(hashes[tlog.RecordProof](t, p.Proof), head, 3, p.Entry.Hash); err != nil {
		t.Fatalf("the printed inclusion proof does not check: %v", err)
	}
	cp := decode[struct {
		Type     string
		Old, New hashchain.Head
		Proof    []string
	}](t, run(t, dir, "", "--json", "chain", "prove", "--from", "2", "--to", "6"))
	if cp.Type != "consistency" || cp.Old.Size != 2 || cp.New.Size != 6 {
		t.Fatalf("consistency --json: %+v", cp)
	}
	if err := hashchain.CheckConsistency(hashes[tlog.TreeProof](t, cp.Proof), cp.Old, cp.New); err != nil {
		t.Fatalf("the printed consistency proof does not check: %v", err)
	}
	for _, bad := range [][]string{{"chain", "prove"}, {"chain", "prove", "9"}, {"chain", "prove", "1", "--from", "1"}, {"chain", "prove", "--from", "5", "--to", "3"}} {
		if r := run(t, dir, "", bad...); r.code != 1 || r.stderr == "" {
			t.Errorf("%v: code %d, stderr %q", bad, r.code, r.stderr)
		}
	}
}

func hashes[P ~[]tlog.Hash](t *testing.T, b64 []string) P {
	var p P
	for _, s := range b64 {
		h, err := tlog.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		p = append(p, h)
	}
	return p
}

func TestChainSignExportAudit(t *testing.T) {
	ws, _ := chainWorkspace(t, 5)
	dir, keys := ws.Root, t.TempDir()
	key := filepath.Join(keys, "signer.key")

	r := run(t, dir, "", "chain", "keygen", "rewind.test/ci", "--out", key)
	vkey := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(vkey, "rewind.test/ci+") || !strings.Contains(r.stderr, key) {
		t.Fatalf("keygen: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	if r := run(t, dir, "", "chain", "keygen", "rewind.test/ci", "--out", key); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("keygen over an existing key: %d %q", r.code, r.stderr)
	}
	if r := run(t, dir, "", "chain", "keygen", "x", "--out", filepath.Join(stateDir(t, dir), "x.key")); r.code != 1 || !strings.Contains(r.stderr, "refusing") {
		t.Fatalf("keygen into the store: %d %q", r.code, r.stderr)
	}
	kj := decode[struct{ Name, KeyFile, VerifierKey string }](t, run(t, keys, "", "--json", "chain", "keygen", "other"))
	if kj.KeyFile != filepath.Join(keys, "other.key") || !strings.HasPrefix(kj.VerifierKey, "other+") {
		t.Fatalf("keygen --json: %+v", kj)
	}

	// A signed head, by flag and by environment.
	r = run(t, dir, "", "chain", "head", "--sign-key", key)
	if h, err := hashchain.OpenSignedHead([]byte(r.stdout), vkey); r.code != 0 || err != nil || h.Size != 5 {
		t.Fatalf("signed head: %d %q %v", r.code, r.stdout, err)
	}
	t.Setenv("REWIND_SIGNING_KEY_FILE", key)
	r = run(t, dir, "", "chain", "head")
	if _, err := hashchain.OpenSignedHead([]byte(r.stdout), vkey); err != nil {
		t.Fatalf("head signed through REWIND_SIGNING_KEY_FILE: %q %v", r.stdout, err)
	}
	os.Unsetenv("REWIND_SIGNING_KEY_FILE")

	// Export, then audit as an outsider: unpack, verify with the CLI and with verify.py.
	out := filepath.Join(t.TempDir(), "audit.tar")
	ex := decode[struct {
		Out    string
		Head   hashchain.Head
		Signed bool
	}](t, run(t, dir, "", "--json", "chain", "export", "--out", out, "--sign-key", key))
	if ex.Out != out || !ex.Signed || ex.Head.Size != 5 {
		t.Fatalf("export --json: %+v", ex)
	}
	audit := t.TempDir()
	untar(t, out, audit)
	for _, name := range []string{"chain.jsonl", "head", "FORMAT.md", "verify.py"} {
		if _, err := os.Stat(filepath.Join(audit, name)); err != nil {
			t.Fatalf("export lacks %s", name)
		}
	}
	r = run(t, audit, "", "chain", "verify", "--file", "chain.jsonl", "--head", "head", "--key", vkey)
	if r.code != 0 || !strings.Contains(r.stdout, "matches exactly (signature: verified)") {
		t.Fatalf("audit verify: %d %q %q", r.code, r.stdout, r.stderr)
	}
	_, other, _ := hashchain.GenerateKey("rewind.test/ci")
	if r := run(t, audit, "", "chain", "verify", "--file", "chain.jsonl", "--head", "head", "--key", other); r.code != 1 || !strings.Contains(r.stderr, "signature does not verify") {
		t.Fatalf("audit with the wrong key: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "", "--json", "chain", "export"); r.code != 1 || !strings.Contains(r.stdout, "--out") {
		t.Fatalf("export --json without --out: %d %q", r.code, r.stdout)
	}
	// Without --out the archive goes to standard output.
	if r := run(t, dir, "", "chain", "export"); r.code != 0 || !bytes.HasPrefix([]byte(r.stdout), []byte("chain.jsonl")) {
		t.Fatalf("export to stdout: %d %q", r.code, r.stderr)
	}

	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatal("python3 is not on PATH, and REWIND_CI=1 requires the exported verify.py to be run: install python3")
		}
		t.Skip("python3 is not on PATH: skipping the exported verify.py")
	}
	cmd := exec.Command(py, "verify.py", "chain.jsonl", "--head", "head")
	cmd.Dir = audit
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "ok: 5 entries, matching the head") {
		t.Fatalf("exported verify.py: %s %v", b, err)
	}
}

func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		os.WriteFile(filepath.Join(dir, filepath.Base(h.Name)), b, 0o644)
	}
}

func TestChainBrokenCutTorn(t *testing.T) {
	ws, _ := chainWorkspace(t, 6)
	dir := ws.Root
	orig, _ := os.ReadFile(ws.ChainPath())

	// One flipped byte in entry 2's data: located exactly.
	i := bytes.Index(orig, []byte(`"i":2`))
	bad := bytes.Clone(orig)
	bad[i+4] = '3'
	os.WriteFile(ws.ChainPath(), bad, 0o600)
	r := run(t, dir, "", "chain", "verify")
	if r.code != 1 || !strings.Contains(r.stdout, "line 3 (seq 2): hash mismatch") {
		t.Fatalf("verify flipped: %d %q %q", r.code, r.stdout, r.stderr)
	}
	v := decode[struct {
		OK            bool
		Line          int64
		Seq           *int64
		Problem, File string
	}](t, run(t, dir, "", "--json", "chain", "verify"))
	if v.OK || v.Line != 3 || v.Seq == nil || *v.Seq != 2 || v.Problem != "hash mismatch" || v.File != ws.ChainPath() {
		t.Fatalf("verify --json flipped: %+v", v)
	}

	// The last two entries cut: the anchor shows it, with both sizes.
	lines := bytes.SplitAfter(orig, []byte("\n"))
	os.WriteFile(ws.ChainPath(), bytes.Join(lines[:4], nil), 0o600)
	r = run(t, dir, "", "chain", "verify")
	if r.code != 1 || !strings.Contains(r.stdout, "cut") || !strings.Contains(r.stdout, "has 4 entries") {
		t.Fatalf("verify cut: %d %q", r.code, r.stdout)
	}
	r = run(t, dir, "", "chain", "head")
	if r.code != 1 || !strings.Contains(r.stderr, "was cut: it has 4 entries, but its anchored head") || !strings.Contains(r.stderr, "recorded 6") {
		t.Fatalf("head of a cut chain: %d %q", r.code, r.stderr)
	}

	// A torn tail, as a crash mid-write leaves it: reported, then recovered by a person.
	os.WriteFile(ws.ChainPath(), append(bytes.Clone(orig), `{"data":{"i":6`...), 0o600)
	r = run(t, dir, "", "chain", "verify")
	if r.code != 1 || !strings.Contains(r.stdout, "line 7 (seq 6): torn") {
		t.Fatalf("verify torn: %d %q", r.code, r.stdout)
	}
	if r := run(t, dir, "", "chain", "head"); r.code != 1 || !strings.Contains(r.stderr, "chain recover") {
		t.Fatalf("head of a torn chain: %d %q", r.code, r.stderr)
	}
	rec := decode[struct {
		SavedAs string
		Bytes   int64
		Entry   hashchain.Entry
	}](t, run(t, dir, "", "--json", "chain", "recover"))
	if rec.Bytes != 14 || rec.Entry.Seq != 6 || rec.Entry.Kind != "recover" || filepath.Dir(rec.SavedAs) != ws.Meta {
		t.Fatalf("recover --json: %+v", rec)
	}
	if r := run(t, dir, "", "chain", "verify"); r.code != 0 {
		t.Fatalf("verify after recover: %d %q", r.code, r.stdout)
	}
	if r := run(t, dir, "", "chain", "recover"); r.code != 1 || !strings.Contains(r.stderr, "nothing to recover") {
		t.Fatalf("recover of an intact chain: %d %q", r.code, r.stderr)
	}
}

func TestChainWithoutWorkspace(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if r := run(t, dir, "", "chain", "verify"); r.code != 1 || !strings.Contains(r.stderr, "no agent-rewind state") {
		t.Fatalf("verify without a workspace: %d %q", r.code, r.stderr)
	}
	if _, err := workspace.Init(dir); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dir, "", "chain", "head"); r.code != 1 || !strings.Contains(r.stderr, "no chain at") {
		t.Fatalf("head without a chain: %d %q", r.code, r.stderr)
	}
	if r := run(t, dir, "", "chain", "verify", "--file", filepath.Join(dir, "nope.jsonl")); r.code != 1 {
		t.Fatalf("verify of a missing file: %d %q", r.code, r.stderr)
	}
}
