package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/regular"
)

// EffectsView is the answer of api/effects: the ledger, oldest first, and the refusals of each
// key, which the chain holds ("refusal" entries), not the ledger.
type EffectsView struct {
	Effects  []*barrier.Record `json:"effects"`
	Refusals map[string]int    `json:"refusals"`
}

func (s *Server) effects(w http.ResponseWriter, r *http.Request) {
	l, err := s.ws.Ledger()
	if err != nil {
		fail(w, err)
		return
	}
	all, err := l.List()
	if err != nil {
		fail(w, err)
		return
	}
	if all == nil {
		all = []*barrier.Record{}
	}
	v := EffectsView{Effects: all, Refusals: map[string]int{}}
	if len(all) > 0 {
		if v.Refusals, err = s.refusals(); err != nil {
			fail(w, err)
			return
		}
	}
	writeJSON(w, v)
}

// refusals counts the chain's "refusal" entries by key.
func (s *Server) refusals() (map[string]int, error) {
	n := map[string]int{}
	ch, err := s.ws.ExistingChain()
	if errors.Is(err, fs.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	err = ch.Each(func(e hashchain.Entry) error {
		if e.Kind != barrier.KindRefusal {
			return nil
		}
		var r struct{ Key string }
		if json.Unmarshal(e.Data, &r) == nil {
			n[r.Key]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count the refusals on the chain: %w", err)
	}
	return n, nil
}

// ReleaseRequest is the body of api/release: a person re-arms Key, saying why.
type ReleaseRequest struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// releasedBy names a person at the web page in the record and on the chain.
const releasedBy = "ui"

func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	var req ReleaseRequest
	if err := readBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Reason == "" {
		fail(w, fmt.Errorf("%w: give a reason (recorded on the chain), e.g. \"the charge was refunded\"", errBadRequest))
		return
	}
	l, err := s.ws.Ledger()
	if err != nil {
		fail(w, err)
		return
	}
	s.mu.Lock()
	d, err := l.Release(req.Key, req.Reason, releasedBy)
	s.mu.Unlock()
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, d)
}

// ChainView is the answer of api/chain.
type ChainView struct {
	OK      bool            `json:"ok"`
	Empty   bool            `json:"empty"` // nothing recorded yet
	Size    int64           `json:"size"`
	Head    *hashchain.Head `json:"head,omitempty"`
	Anchor  string          `json:"anchor"`            // "extends" (the chain extends its anchored head), "none" (no anchor yet)
	Signed  bool            `json:"signed"`            // whether the anchored head is a signed note
	Signers []string        `json:"signers,omitempty"` // the key names it names (not checked: chain verify --key does)
	Beyond  int64           `json:"beyondAnchor,omitempty"`
	Problem string          `json:"problem,omitempty"`
	Line    int64           `json:"line,omitempty"` // where it breaks
	Error   string          `json:"error,omitempty"`
	Gaps    *workspace.Gaps `json:"gaps,omitempty"`
	Checked time.Time       `json:"checked"`
}

func (s *Server) chain(w http.ResponseWriter, r *http.Request) {
	v := ChainView{Anchor: "none", Checked: time.Now().UTC()}
	if _, err := os.Stat(s.ws.ChainPath()); errors.Is(err, fs.ErrNotExist) {
		v.OK, v.Empty = true, true
		writeJSON(w, v)
		return
	}
	opts := hashchain.VerifyOptions{}
	anchor, err := s.ws.ChainAnchor()
	if err != nil {
		fail(w, err)
		return
	}
	if text, err := regular.ReadFile(anchor); err == nil {
		h, signed, err := hashchain.ParseHead(text)
		if err != nil {
			v.Problem, v.Error = "anchor", fmt.Sprintf("the chain's anchor %s is damaged: %v", anchor, err)
			writeJSON(w, v)
			return
		}
		opts.Head, v.Anchor, v.Signed, v.Signers = &h, "extends", signed, hashchain.NoteSigners(text)
	}
	rep, err := hashchain.VerifyFile(s.ws.ChainPath(), opts)
	var ve *hashchain.VerifyError
	switch {
	case errors.As(err, &ve):
		v.Problem, v.Line, v.Error = string(ve.Problem), ve.Line, ve.Error()
	case err != nil:
		v.Problem, v.Error = "unreadable", err.Error()
	default:
		v.OK, v.Size, v.Head, v.Beyond = true, rep.Size, &rep.Head, rep.BeyondHead
		if v.Anchor == "none" {
			v.Beyond = 0
		}
		s.mu.Lock()
		v.Gaps, err = s.ws.ChainGaps()
		s.mu.Unlock()
		if err != nil {
			v.Error = "the chain verifies, but comparing it with the store failed: " + err.Error()
		}
	}
	writeJSON(w, v)
}

// export sends the auditor's bundle (what "agent-rewind chain export" writes): a tar of the
// chain, its head and a verifier.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	ch, err := s.ws.ExistingChain()
	if err != nil {
		fail(w, err)
		return
	}
	defer ch.Close()
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", `attachment; filename="agent-rewind-chain.tar"`)
	if _, err := ch.Export(w, hashchain.ExportOptions{}); err != nil {
		// Headers are sent: the truncated archive fails to unpack, which the auditor sees.
		return
	}
}

func (s *Server) savings(w http.ResponseWriter, r *http.Request) {
	sv, err := gateway.LoadSavings(s.ws.Path(gateway.SavingsFileName))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, SavingsView{Savings: sv, Chart: savingsChart(sv.History)})
}

// SavingsView is the answer of api/savings: the receipt as the gateway writes it, and its
// history laid out as a chart.
type SavingsView struct {
	gateway.Savings
	Chart *SavingsChart `json:"chart,omitempty"`
}
