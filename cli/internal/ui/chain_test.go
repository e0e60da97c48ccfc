package ui

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
)

// TestChainShowsSigners: the chain panel names who the anchored head says signed it, taken from
// the signed note's signature lines.
func TestChainShowsSigners(t *testing.T) {
	t.Setenv(workspace.StateDirEnv, t.TempDir())
	ws, err := workspace.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ws.Chain()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Record("note", map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	h, err := ch.Head()
	if err != nil {
		t.Fatal(err)
	}
	ch.Close()
	var note []byte
	for _, name := range []string{"alice.example/rewind", "bob.example/audit"} {
		skey, _, err := hashchain.GenerateKey(name)
		if err != nil {
			t.Fatal(err)
		}
		signed, err := hashchain.SignHead(h, skey)
		if err != nil {
			t.Fatal(err)
		}
		if note == nil {
			note = signed
		} else { // a second signature line on the same note
			note = append(note, signed[len(h.Checkpoint())+1:]...)
		}
	}
	anchor, err := ws.ChainAnchor()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(anchor), 0o700)
	if err := os.WriteFile(anchor, note, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(ws)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.chain(rec, httptest.NewRequest("GET", "/api/chain", nil))
	var v ChainView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if !v.OK || !v.Signed || !slices.Equal(v.Signers, []string{"alice.example/rewind", "bob.example/audit"}) {
		t.Fatalf("chain view %+v, want intact, signed by alice.example/rewind and bob.example/audit", v)
	}
}
