package hashchain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the test vectors in testdata/")

// vectorProofs is the shape of testdata/chain3.proofs.json.
type vectorProofs struct {
	Head      Head `json:"head"`
	Inclusion []struct {
		Seq       int64    `json:"seq"`
		Size      int64    `json:"size"`
		EntryHash string   `json:"entryHash"`
		Proof     []string `json:"proof"`
	} `json:"inclusion"`
	Consistency []struct {
		Old   int64    `json:"old"`
		New   int64    `json:"new"`
		Proof []string `json:"proof"`
	} `json:"consistency"`
}

// TestVectors rebuilds the three-entry chain of testdata/ with a fixed clock and compares every
// vector file byte for byte (go test -run TestVectors -update rewrites them).
func TestVectors(t *testing.T) {
	tc := newTestChain(t)
	tick := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c, err := Open(tc.path, Options{Create: true, Anchor: tc.anchor, Clock: func() time.Time {
		tick = tick.Add(1500 * time.Millisecond)
		return tick
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var entries []Entry
	for _, d := range []struct {
		kind string
		data string
	}{
		{"checkpoint", `{"id":"cp-1","files":3,"note":"first \u00e9t\u00e9 \ud83d\ude02","ratio":0.5}`},
		{"effect", `{"key":"deploy:prod","admitted":true,"tags":["a","b"],"big":1e21,"tiny":1e-7}`},
		{"refusal", `{"key":"deploy:prod","reason":"spent key\n(after a rewind)","nested":{"z":null,"a":[]}}`},
	} {
		e, err := c.Append(d.kind, json.RawMessage(d.data))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	head, _ := c.Head()
	chain, _ := os.ReadFile(tc.path)
	tree, _ := os.ReadFile(sidecarPath(tc.path))

	var hashed bytes.Buffer
	for i, l := range bytes.SplitAfter(bytes.TrimSuffix(chain, []byte("\n")), []byte("\n")) {
		if i > 0 {
			hashed.WriteString("\n----\n")
		}
		pl, _ := scanLine(bytes.TrimSuffix(l, []byte("\n")))
		hashed.WriteString(HashPrefix)
		hashed.Write(l[:pl.cut0])
		hashed.Write(bytes.TrimSuffix(l, []byte("\n"))[pl.cut1:])
	}

	var proofs vectorProofs
	proofs.Head = head
	b64s := func(hs [][32]byte) []string {
		out := []string{}
		for _, h := range hs {
			out = append(out, base64.StdEncoding.EncodeToString(h[:]))
		}
		return out
	}
	for size := int64(1); size <= 3; size++ {
		for seq := int64(0); seq < size; seq++ {
			p, err := c.ProveInclusion(seq, size)
			if err != nil {
				t.Fatal(err)
			}
			hs := make([][32]byte, len(p))
			for i := range p {
				hs[i] = p[i]
			}
			proofs.Inclusion = append(proofs.Inclusion, struct {
				Seq       int64    `json:"seq"`
				Size      int64    `json:"size"`
				EntryHash string   `json:"entryHash"`
				Proof     []string `json:"proof"`
			}{seq, size, entries[seq].Hash, b64s(hs)})
		}
		for old := int64(1); old < size; old++ {
			p, err := c.ProveConsistency(old, size)
			if err != nil {
				t.Fatal(err)
			}
			hs := make([][32]byte, len(p))
			for i := range p {
				hs[i] = p[i]
			}
			proofs.Consistency = append(proofs.Consistency, struct {
				Old   int64    `json:"old"`
				New   int64    `json:"new"`
				Proof []string `json:"proof"`
			}{old, size, b64s(hs)})
		}
	}
	pj, _ := json.MarshalIndent(proofs, "", "  ")

	files := map[string][]byte{
		"chain3.jsonl":       chain,
		"chain3.head":        []byte(head.Checkpoint()),
		"chain3.hashed":      hashed.Bytes(),
		"chain3.tree":        tree,
		"chain3.proofs.json": append(pj, '\n'),
	}
	for name, got := range files {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestVectors -update to write the vectors)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the test vector:\n got %q\nwant %q", name, got, want)
		}
	}
	if !strings.HasPrefix(string(files["chain3.head"]), "agent-rewind/"+entries[0].Hash[:32]+"\n3\n") {
		t.Errorf("head %q", files["chain3.head"])
	}
}
