package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/snapshot"
)

// CheckCmd verifies the whole state directory: the checkpoint store and the hash chain.
type CheckCmd struct {
	ReadData bool `help:"Also re-hash every stored content a checkpoint needs (reads the whole store; without it each is checked to exist with its size)."`
	Repair   bool `help:"Repair what can be without losing anything: write back a pack's lost index, store again a missing or damaged content a workspace file still has, drop a damaged or wrong stat cache (the next checkpoint rebuilds it), move damaged copies and files left by interrupted writes aside to quarantine/. Never removes a checkpoint or a content one needs."`
}

// CheckOutput is the --json shape of "check". Each section is {name, checked, problems}, each
// problem {kind, where, path, what, fix, checkpoints, repaired}; the sections, in order:
// checkpoints, manifests, packs, objects, position, statCache, leftovers (snapshot.Check), chain,
// record (the chain against the checkpoints and the effect ledger).
type CheckOutput struct {
	OK       bool                    `json:"ok"`       // no problem remains: none was found, or every one was repaired
	ReadData bool                    `json:"readData"` // --read-data
	Repair   bool                    `json:"repair"`   // --repair
	Found    int                     `json:"found"`    // problems found (benign ones not counted)
	Repaired int                     `json:"repaired"` // of those, repaired by --repair
	Benign   int                     `json:"benign"`   // harmless findings that go by themselves (leftovers the next writer removes): reported, never a failure
	Sections []snapshot.CheckSection `json:"sections"`
}

// Run checks. It exits 0 when every part of the state agrees, 1 otherwise (after the report).
func (c *CheckCmd) Run(env *Env) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	rep, err := s.store.Check(context.Background(), snapshot.CheckOptions{ReadData: c.ReadData, Repair: c.Repair})
	s.done()
	if err != nil {
		return err
	}
	out := &CheckOutput{ReadData: c.ReadData, Repair: c.Repair, Sections: rep.Sections}
	out.Sections = append(out.Sections, chainSection(s.ws), recordSection(s.ws))
	for _, sec := range out.Sections {
		for _, p := range sec.Problems {
			switch {
			case p.Benign:
				out.Benign++
			case p.Repaired:
				out.Found++
				out.Repaired++
			default:
				out.Found++
			}
		}
	}
	out.OK = out.Found == out.Repaired
	if err := env.Emit(out, func(w io.Writer) error { return writeCheck(w, out) }); err != nil {
		return err
	}
	if !out.OK {
		return &ExitError{Code: 1, Err: fmt.Errorf("check: %d problems", out.Found-out.Repaired), Silent: true}
	}
	return nil
}

// chainSection verifies the chain as "chain verify" does (line by line, the Merkle sidecar, and
// against the head anchored outside the workspace).
func chainSection(ws *workspace.Workspace) snapshot.CheckSection {
	sec := snapshot.CheckSection{Name: "chain", Problems: []snapshot.Problem{}}
	add := func(kind, where, what, fix string) {
		sec.Problems = append(sec.Problems, snapshot.Problem{Kind: kind, Where: where, What: what, Fix: fix})
	}
	head, err := anchoredHead(ws)
	if err != nil {
		add("chain-anchor-corrupt", workspace.ChainFile, err.Error(), "remove the anchor file named above: the next append anchors the chain as it is then")
		return sec
	}
	if _, err := os.Lstat(ws.ChainPath()); errors.Is(err, fs.ErrNotExist) {
		if head != nil {
			add("chain-missing", workspace.ChainFile, fmt.Sprintf("the chain is gone, but a head of %d entries is anchored for it", head.Size),
				"restore chain.jsonl from a backup of the state directory")
		}
		return sec
	}
	rep, err := hashchain.VerifyFile(ws.ChainPath(), hashchain.VerifyOptions{Head: head})
	var ve *hashchain.VerifyError
	switch {
	case errors.As(err, &ve):
		where := workspace.ChainFile
		if ve.Line > 0 {
			where = fmt.Sprintf("%s line %d", workspace.ChainFile, ve.Line)
		}
		fix := "the chain was changed outside agent-rewind: restore chain.jsonl from a backup of the state directory (\"agent-rewind chain verify\" shows the first bad line)"
		if ve.Problem == hashchain.ProblemTorn {
			fix = "a crash tore the last line: \"agent-rewind chain recover\" moves it aside and records that"
		}
		add("chain-broken", where, ve.Error(), fix)
	case err != nil:
		add("chain-unreadable", workspace.ChainFile, err.Error(), "make the state directory readable by this user")
	default:
		sec.Checked = int(rep.Size)
	}
	return sec
}

// writeCheck prints the report: one line a section, each problem with what to do, a verdict.
func writeCheck(w io.Writer, out *CheckOutput) error {
	for _, sec := range out.Sections {
		state, n, harmless := "ok", 0, 0
		for _, p := range sec.Problems {
			if p.Benign {
				harmless++
			} else {
				n++
			}
		}
		switch {
		case n > 0:
			state = plural(n, "problem", "problems")
		case harmless > 0:
			state = "ok (" + plural(harmless, "harmless leftover", "harmless leftovers") + ")"
		}
		fmt.Fprintf(w, "%-12s %s checked, %s\n", sec.Name+":", count(sec.Checked), state)
		for _, p := range sec.Problems {
			if p.Benign {
				fmt.Fprintf(w, "  harmless %s: %s: %s", p.Kind, p.Where, p.What)
				if p.Repaired {
					fmt.Fprintln(w, "; moved aside")
				} else {
					fmt.Fprintf(w, "; %s\n", p.Fix)
				}
				continue
			}
			where := p.Where
			if p.Path != "" {
				where += " (" + printable(p.Path) + ")"
			}
			fmt.Fprintf(w, "  %s: %s: %s\n", p.Kind, where, p.What)
			if len(p.Checkpoints) > 0 {
				fmt.Fprintf(w, "    checkpoints: %s\n", listSome(p.Checkpoints, len(p.Checkpoints)))
			}
			if p.Repaired {
				fmt.Fprintln(w, "    repaired")
			} else {
				fmt.Fprintf(w, "    to do: %s\n", p.Fix)
			}
		}
	}
	switch {
	case out.Found == 0:
		_, err := fmt.Fprintln(w, "ok: every part of the state agrees")
		return err
	case out.OK:
		_, err := fmt.Fprintf(w, "repaired all %s found; run check again to confirm\n", plural(out.Found, "problem", "problems"))
		return err
	}
	hint := ""
	if !out.Repair {
		hint = "; check --repair fixes those it can without losing anything"
	}
	_, err := fmt.Fprintf(w, "%s found, %d repaired: the state does not agree with itself%s\n",
		plural(out.Found, "problem", "problems"), out.Repaired, hint)
	return err
}

// recordSection compares the chain with the checkpoints and the effect ledger
// (workspace.ChainGaps): every durable operation has its entry and every entry its operation.
func recordSection(ws *workspace.Workspace) snapshot.CheckSection {
	sec := snapshot.CheckSection{Name: "record", Problems: []snapshot.Problem{}}
	add := func(kind, where, what, fix string) {
		sec.Problems = append(sec.Problems, snapshot.Problem{Kind: kind, Where: where, What: what, Fix: fix})
	}
	g, err := ws.ChainGaps()
	if err != nil {
		add("record-unreadable", workspace.ChainFile, err.Error(), "fix what the chain section reports first, then check again")
		return sec
	}
	sec.Checked = int(g.ChainSize)
	late := "the next checkpoint or guard records it late (\"recorded_late\" on the chain); run one, then check again"
	for _, n := range g.Leftover {
		what := fmt.Sprintf("a %s entry noted at %s was never recorded (its process ended) and its operation did not commit", n.Kind, n.Time.Format(time.RFC3339))
		fix := "the next checkpoint or guard removes the note"
		if n.Committed {
			what = fmt.Sprintf("a %s entry noted at %s was never recorded (its process ended) though its operation committed", n.Kind, n.Time.Format(time.RFC3339))
			fix = late
		}
		add("record-leftover-note", n.File, what, fix)
	}
	for _, id := range g.UnrecordedCheckpoints {
		sec.Problems = append(sec.Problems, snapshot.Problem{Kind: "record-unrecorded-checkpoint", Where: "checkpoints/" + id,
			What: "checkpoint " + id + " has no chain entry", Fix: "a process was killed between committing it and recording it: " + late, Checkpoints: []string{id}})
	}
	for _, e := range g.UnrecordedEffects {
		add("record-unrecorded-effect", workspace.EffectsDir, fmt.Sprintf("effect %q (generation %d, admitted %s as %s) has no chain entry", e.Key, e.Generation, e.At.Format(time.RFC3339), e.State),
			"a guard was killed between admitting it and recording it: "+late)
	}
	for _, e := range g.MissingCheckpoints {
		sec.Problems = append(sec.Problems, snapshot.Problem{Kind: "record-missing-checkpoint", Where: fmt.Sprintf("%s seq %d", workspace.ChainFile, e.Seq),
			What: "the chain records checkpoint " + e.ID + ", which does not exist, and no gc entry removed it", Fix: "it was removed by hand or lost: restore checkpoints/" + e.ID + " from a backup of the store if you need it", Checkpoints: []string{e.ID}})
	}
	for _, e := range g.MissingEffects {
		add("record-missing-effect", fmt.Sprintf("%s seq %d", workspace.ChainFile, e.Seq), fmt.Sprintf("the chain records effect %q (generation %d), which the effect ledger does not hold", e.Key, e.Generation),
			"the ledger lost a record (removed by hand?): restore it from a backup of the store; until then that key is not refused")
	}
	return sec
}
