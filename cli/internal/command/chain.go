package command

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"golang.org/x/mod/sumdb/tlog"
)

// ChainCmd groups the commands on the workspace's tamper-evident hash chain.
type ChainCmd struct {
	Verify  ChainVerifyCmd  `cmd:"" help:"Verify the chain line by line, its Merkle sidecar, and the anchored (or a given) head. Exit 0 intact, 1 broken."`
	Head    ChainHeadCmd    `cmd:"" help:"Print the chain's Merkle head as a C2SP checkpoint, optionally signed."`
	Prove   ChainProveCmd   `cmd:"" help:"Print an inclusion proof for an entry, or a consistency proof between two sizes."`
	Export  ChainExportCmd  `cmd:"" help:"Write what an auditor is handed: a tar of the chain, its head, FORMAT.md and verify.py."`
	Keygen  ChainKeygenCmd  `cmd:"" help:"Make an Ed25519 key for signing heads: writes the private key file, prints the verifier key."`
	Recover ChainRecoverCmd `cmd:"" help:"Move a torn last line (left by a crash) aside and record that on the chain."`
}

// signKeyFlag is the --sign-key flag shared by head and export.
type signKeyFlag struct {
	SignKey string `help:"Sign the head with this Ed25519 key file (from \"chain keygen\"); never keep it in agent-rewind's state folder." type:"path" env:"REWIND_SIGNING_KEY_FILE" placeholder:"FILE"`
}

// readSignKey reads the signing key file, refusing one kept in a workspace's state directory.
func (f signKeyFlag) readSignKey() (string, error) {
	if f.SignKey == "" {
		return "", nil
	}
	if workspace.InState(f.SignKey) {
		return "", fmt.Errorf("signing key %s is inside agent-rewind's state (a store, or the state folder): keys must not live with the state they sign (it is exported and backed up with it); move it elsewhere", f.SignKey)
	}
	b, err := regular.ReadInput(f.SignKey)
	if err != nil {
		return "", fmt.Errorf("read signing key: %w (make one with \"agent-rewind chain keygen NAME\")", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// openWorkspace opens the workspace (Env.choice), whose store must already exist.
func openWorkspace(env *Env) (*workspace.Workspace, error) {
	root, err := env.root()
	if err != nil {
		return nil, err
	}
	return workspace.Open(root)
}

// openChain opens the workspace's existing chain (never creating one) for a command that reads
// it; the caller closes it.
func openChain(env *Env) (*hashchain.Chain, error) {
	ws, err := openWorkspace(env)
	if err != nil {
		return nil, err
	}
	return ws.ExistingChain()
}

// ---- verify ----

// ChainVerifyCmd verifies a chain file.
type ChainVerifyCmd struct {
	File string `help:"Chain file to verify (default: chain.jsonl in the workspace's store, checked against its anchored head)." type:"path" placeholder:"PATH"`
	Head string `help:"A head (checkpoint or signed note) the chain must match exactly, as an auditor checks an export." type:"path" placeholder:"FILE"`
	Key  string `help:"Verifier key (NAME+HASH+KEY, from \"chain keygen\") that must have signed --head." placeholder:"VKEY"`
}

// VerifyResult is the --json shape of "chain verify".
type VerifyResult struct {
	OK   bool   `json:"ok"`
	File string `json:"file"`
	// Set when the chain verifies:
	Size          int64           `json:"size,omitempty"`
	Bytes         int64           `json:"bytes,omitempty"`
	Head          *hashchain.Head `json:"head,omitempty"`          // recomputed head of the whole chain
	Against       string          `json:"against,omitempty"`       // "anchor", "head", or "" (nothing)
	AgainstHead   *hashchain.Head `json:"againstHead,omitempty"`   // the anchored or given head
	BeyondAnchor  int64           `json:"beyondAnchor,omitempty"`  // entries appended after the anchored head
	Signature     string          `json:"signature,omitempty"`     // "verified", "unchecked" (signed, no --key), "none"
	SidecarLeaves int64           `json:"sidecarLeaves,omitempty"` // entries the sidecar covered
	SidecarLags   bool            `json:"sidecarLags,omitempty"`   // the sidecar is behind (rebuilt on next open)
	// The workspace's chain only: what the store holds that the chain does not record, and
	// the reverse (workspace.ChainGaps).
	Gaps *workspace.Gaps `json:"gaps,omitempty"`
	// Set when it does not:
	Line    int64  `json:"line,omitempty"`    // 1-based line of the first bad entry (0: not one line's)
	Seq     *int64 `json:"seq,omitempty"`     // the seq expected there
	Offset  *int64 `json:"offset,omitempty"`  // byte offset of that line
	Problem string `json:"problem,omitempty"` // torn, unparsable, non-canonical, seq gap, prev mismatch, hash mismatch, cut, rewritten, beyond head, sidecar mismatch
	Detail  string `json:"detail,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Run verifies.
func (c *ChainVerifyCmd) Run(env *Env) error {
	res := VerifyResult{File: c.File}
	opts := hashchain.VerifyOptions{}
	if c.Key != "" && c.Head == "" {
		return errors.New("--key checks the signature of a head: pass the head with --head FILE")
	}
	if c.Head != "" {
		text, err := regular.ReadInput(c.Head)
		if err != nil {
			return fmt.Errorf("read head: %w", err)
		}
		h, signed, err := hashchain.ParseHead(text)
		if err != nil {
			return fmt.Errorf("head %s: %w", c.Head, err)
		}
		res.Signature = "none"
		if signed {
			res.Signature = "unchecked"
		}
		if c.Key != "" {
			if h, err = hashchain.OpenSignedHead(text, c.Key); err != nil {
				return &ExitError{Code: 1, Err: fmt.Errorf("head %s: %w", c.Head, err)}
			}
			res.Signature = "verified"
		}
		opts.Head, opts.ExactHead = &h, true
		res.Against, res.AgainstHead = "head", &h
	}
	var ws *workspace.Workspace
	if c.File == "" {
		var err error
		if ws, err = openWorkspace(env); err != nil {
			return err
		}
		defer ws.Close()
		res.File = ws.ChainPath()
		if opts.Head == nil {
			h, err := anchoredHead(ws)
			if err != nil {
				return err
			}
			if h != nil {
				opts.Head = h
				res.Against, res.AgainstHead = "anchor", h
			}
		}
	}
	rep, err := hashchain.VerifyFile(res.File, opts)
	var ve *hashchain.VerifyError
	if errors.As(err, &ve) {
		res.Line, res.Problem, res.Detail, res.Error = ve.Line, string(ve.Problem), ve.Detail, ve.Error()
		if ve.Line > 0 {
			res.Seq, res.Offset = &ve.Seq, &ve.Offset
		}
		if err := env.Emit(res, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "broken: %s\n", ve.Error())
			return err
		}); err != nil {
			return err
		}
		return &ExitError{Code: 1, Err: err, Silent: true}
	}
	if err != nil {
		return err
	}
	res.OK, res.Size, res.Bytes, res.Head = true, rep.Size, rep.Bytes, &rep.Head
	res.SidecarLeaves, res.SidecarLags = rep.SidecarLeaves, rep.SidecarLags
	if res.Against == "anchor" {
		res.BeyondAnchor = rep.BeyondHead
	}
	if ws != nil {
		if res.Gaps, err = ws.ChainGaps(); err != nil {
			return fmt.Errorf("the chain verifies, but comparing it with the store failed: %w", err)
		}
	}
	return env.Emit(res, func(w io.Writer) error {
		fmt.Fprintf(w, "ok: %s: %d entries intact\n", res.File, res.Size)
		fmt.Fprintf(w, "head: size %d, root %s\n", rep.Head.Size, b64(rep.Head.Root))
		switch res.Against {
		case "anchor":
			fmt.Fprintf(w, "anchor: the chain extends its anchored head of size %d\n", res.AgainstHead.Size)
			if res.BeyondAnchor > 0 {
				fmt.Fprintf(w, "note: %d entries after the anchored head (the guard server anchors within 100 ms of an append; a crash or power cut between writing and anchoring them; or lines appended by hand); the next append or open anchors them\n", res.BeyondAnchor)
			}
		case "head":
			fmt.Fprintf(w, "head file: matches exactly (signature: %s)\n", res.Signature)
		default:
			fmt.Fprintln(w, "note: no head to check against: a chain alone cannot show that entries were cut from its end")
		}
		if res.SidecarLags {
			fmt.Fprintf(w, "note: the Merkle sidecar covers %d of %d entries (it is brought up to date on the next open)\n", res.SidecarLeaves, res.Size)
		}
		writeGaps(w, res.Gaps)
		return nil
	})
}

// anchoredHead returns the head of the workspace's chain kept outside the workspace (its anchor),
// or nil when there is none yet.
func anchoredHead(ws *workspace.Workspace) (*hashchain.Head, error) {
	anchor, err := ws.ChainAnchor()
	if err != nil {
		return nil, err
	}
	text, err := regular.ReadFile(anchor)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the chain's anchor: %w (remove it to anchor the chain as it is now)", err)
	}
	h, _, err := hashchain.ParseHead(text)
	if err != nil {
		return nil, fmt.Errorf("the chain's anchor %s is damaged: %w (remove it to anchor the chain as it is now)", anchor, err)
	}
	return &h, nil
}

// writeGaps prints for people what ChainGaps found.
func writeGaps(w io.Writer, g *workspace.Gaps) {
	if g == nil {
		return
	}
	if g.Complete() {
		fmt.Fprintln(w, "record: complete (every checkpoint and effect admission has its entry, and every such entry its checkpoint or effect)")
		return
	}
	for _, n := range g.Leftover {
		what := "its operation did not commit; the next writer removes the note"
		if n.Committed {
			what = "its operation committed; the next checkpoint or guard records it late"
		}
		fmt.Fprintf(w, "gap: a %s entry noted at %s was never recorded (its process ended): %s (%s)\n", n.Kind, n.Time.Format(time.RFC3339), what, n.File)
	}
	for _, id := range g.UnrecordedCheckpoints {
		fmt.Fprintf(w, "gap: checkpoint %s has no chain entry\n", id)
	}
	for _, e := range g.UnrecordedEffects {
		fmt.Fprintf(w, "gap: effect %q (generation %d, admitted %s as %s) has no chain entry\n", e.Key, e.Generation, e.At.Format(time.RFC3339), e.State)
	}
	for _, e := range g.MissingCheckpoints {
		fmt.Fprintf(w, "gap: entry %d records checkpoint %s, which does not exist and which no gc entry removed (removed by hand, or lost)\n", e.Seq, e.ID)
	}
	for _, e := range g.MissingEffects {
		fmt.Fprintf(w, "gap: entry %d records effect %q (generation %d), which the effect ledger does not hold\n", e.Seq, e.Key, e.Generation)
	}
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

// ---- head ----

// ChainHeadCmd prints the head.
type ChainHeadCmd struct {
	signKeyFlag
}

// HeadResult is the --json shape of "chain head".
type HeadResult struct {
	Head       hashchain.Head `json:"head"`
	Checkpoint string         `json:"checkpoint"` // the C2SP checkpoint text
	Signed     bool           `json:"signed"`
	Note       string         `json:"note,omitempty"` // the signed note, when signed
}

// Run prints the head.
func (c *ChainHeadCmd) Run(env *Env) error {
	key, err := c.readSignKey()
	if err != nil {
		return err
	}
	ch, err := openChain(env)
	if err != nil {
		return err
	}
	defer ch.Close()
	h, err := ch.Head()
	if err != nil {
		return err
	}
	res := HeadResult{Head: h, Checkpoint: h.Checkpoint()}
	if key != "" {
		note, err := hashchain.SignHead(h, key)
		if err != nil {
			return err
		}
		res.Signed, res.Note = true, string(note)
	}
	return env.Emit(res, func(w io.Writer) error {
		out := res.Checkpoint
		if res.Signed {
			out = res.Note
		}
		_, err := io.WriteString(w, out)
		return err
	})
}

// ---- prove ----

// ChainProveCmd prints proofs.
type ChainProveCmd struct {
	Seq  *int64 `arg:"" optional:"" help:"The entry to prove included (its seq)."`
	Size *int64 `help:"Prove against the head of this many entries (default: the whole chain)." placeholder:"N"`
	From *int64 `help:"Instead, prove that the chain's first --to entries extend its first --from entries (a consistency proof)." placeholder:"OLD"`
	To   *int64 `help:"The larger size for --from (default: the whole chain)." placeholder:"NEW"`
}

// ProofResult is the --json shape of "chain prove".
type ProofResult struct {
	Type  string           `json:"type"`            // "inclusion" or "consistency"
	Seq   *int64           `json:"seq,omitempty"`   // inclusion: the entry's seq
	Entry *hashchain.Entry `json:"entry,omitempty"` // inclusion: the entry
	Head  *hashchain.Head  `json:"head,omitempty"`  // inclusion: the head proved against
	Old   *hashchain.Head  `json:"old,omitempty"`   // consistency: the smaller head
	New   *hashchain.Head  `json:"new,omitempty"`   // consistency: the larger head
	Proof []string         `json:"proof"`           // RFC 6962 proof hashes, base64
}

// Run proves.
func (c *ChainProveCmd) Run(env *Env) error {
	if (c.Seq == nil) == (c.From == nil) {
		return errors.New("give either an entry's seq (an inclusion proof) or --from OLD [--to NEW] (a consistency proof)")
	}
	ch, err := openChain(env)
	if err != nil {
		return err
	}
	defer ch.Close()
	full, err := ch.Head()
	if err != nil {
		return err
	}
	if c.Seq != nil {
		return c.inclusion(env, ch, full)
	}
	to := full.Size
	if c.To != nil {
		to = *c.To
	}
	p, err := ch.ProveConsistency(*c.From, to)
	if err != nil {
		return err
	}
	oldHead, err := ch.HeadAt(*c.From)
	if err != nil {
		return err
	}
	newHead, err := ch.HeadAt(to)
	if err != nil {
		return err
	}
	if err := hashchain.CheckConsistency(p, oldHead, newHead); err != nil {
		return err
	}
	res := ProofResult{Type: "consistency", Old: &oldHead, New: &newHead, Proof: proofStrings(p)}
	return env.Emit(res, func(w io.Writer) error {
		fmt.Fprintf(w, "the first %d entries extend the first %d (checked)\n\nold head:\n%s\nnew head:\n%s\nconsistency proof (RFC 6962, %d hashes, base64):\n", to, *c.From, oldHead.Checkpoint(), newHead.Checkpoint(), len(p))
		for _, h := range res.Proof {
			fmt.Fprintf(w, "  %s\n", h)
		}
		return nil
	})
}

func (c *ChainProveCmd) inclusion(env *Env, ch *hashchain.Chain, full hashchain.Head) error {
	size := full.Size
	if c.Size != nil {
		size = *c.Size
	}
	p, err := ch.ProveInclusion(*c.Seq, size)
	if err != nil {
		return err
	}
	head, err := ch.HeadAt(size)
	if err != nil {
		return err
	}
	e, err := ch.Entry(*c.Seq)
	if err != nil {
		return err
	}
	if err := hashchain.CheckInclusion(p, head, e.Seq, e.Hash); err != nil {
		return err
	}
	res := ProofResult{Type: "inclusion", Seq: c.Seq, Entry: &e, Head: &head, Proof: proofStrings(p)}
	return env.Emit(res, func(w io.Writer) error {
		fmt.Fprintf(w, "entry %d (%s, hash %s) is in the tree of the first %d entries (checked)\n\nhead:\n%s\ninclusion proof (RFC 6962 audit path, %d hashes, base64):\n", e.Seq, e.Kind, e.Hash, size, head.Checkpoint(), len(p))
		for _, h := range res.Proof {
			fmt.Fprintf(w, "  %s\n", h)
		}
		return nil
	})
}

func proofStrings[H ~[]tlog.Hash](p H) []string {
	out := make([]string, 0, len(p))
	for _, h := range p {
		out = append(out, b64(h))
	}
	return out
}

// ---- export ----

// ChainExportCmd exports the chain for an auditor.
type ChainExportCmd struct {
	Out string `help:"Write the tar archive to FILE (default: standard output)." type:"path" placeholder:"FILE"`
	signKeyFlag
}

// ExportResult is the --json shape of "chain export" (which needs --out with --json).
type ExportResult struct {
	Out    string         `json:"out"`
	Head   hashchain.Head `json:"head"`
	Signed bool           `json:"signed"`
	Bytes  int64          `json:"bytes"` // length of the exported chain.jsonl
}

// Run exports.
func (c *ChainExportCmd) Run(env *Env) error {
	if env.JSON && c.Out == "" {
		return errors.New("with --json, give the archive a file with --out FILE (standard output carries the JSON result)")
	}
	key, err := c.readSignKey()
	if err != nil {
		return err
	}
	ch, err := openChain(env)
	if err != nil {
		return err
	}
	defer ch.Close()
	if c.Out == "" {
		_, err := ch.Export(env.Stdout, hashchain.ExportOptions{SignKey: key})
		return err
	}
	// Write beside the target and rename, so a failed export leaves no half archive.
	f, err := os.CreateTemp(filepath.Dir(c.Out), ".tmp-"+filepath.Base(c.Out)+"-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(f.Name())
	ex, err := ch.Export(f, hashchain.ExportOptions{SignKey: key})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		// The rename is the commit point: durable, so a crash cannot forget it.
		err = durable.Rename(f.Name(), c.Out)
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w", c.Out, err)
	}
	res := ExportResult{Out: c.Out, Head: ex.Head, Signed: ex.Signed, Bytes: ex.Bytes}
	return env.Emit(res, func(w io.Writer) error {
		signed := "unsigned"
		if res.Signed {
			signed = "signed"
		}
		_, err := fmt.Fprintf(w, "exported %d entries to %s (%s head, root %s)\nan auditor checks it with: tar xf %s && python3 verify.py chain.jsonl --head head\n", res.Head.Size, res.Out, signed, b64(res.Head.Root), filepath.Base(res.Out))
		return err
	})
}

// ---- keygen ----

// ChainKeygenCmd makes a signing key.
type ChainKeygenCmd struct {
	Name string `arg:"" help:"The key's name, shown in signatures (no spaces, no '+'), e.g. host.example/rewind."`
	Out  string `help:"Write the private key to FILE (default: NAME.key in the current directory, '/' replaced by '_'); never in agent-rewind's state." type:"path" placeholder:"FILE"`
}

// KeygenResult is the --json shape of "chain keygen".
type KeygenResult struct {
	Name        string `json:"name"`
	KeyFile     string `json:"keyFile"`     // the private key file (mode 0600)
	VerifierKey string `json:"verifierKey"` // hand this to auditors
}

// Run makes the key.
func (c *ChainKeygenCmd) Run(env *Env) error {
	out := c.Out
	if out == "" {
		abs, err := filepath.Abs(strings.ReplaceAll(c.Name, "/", "_") + ".key")
		if err != nil {
			return err
		}
		out = abs
	}
	if workspace.InState(out) {
		return fmt.Errorf("refusing to write a signing key inside agent-rewind's state (%s): keys must not live with the state they sign; pass --out elsewhere", out)
	}
	skey, vkey, err := hashchain.GenerateKey(c.Name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists: not overwriting a key; pass another --out", out)
	}
	if err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	_, err = f.WriteString(skey + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return fmt.Errorf("write key %s: %w", out, err)
	}
	if d, err := os.Open(filepath.Dir(out)); err == nil {
		d.Sync()
		d.Close()
	}
	res := KeygenResult{Name: c.Name, KeyFile: out, VerifierKey: vkey}
	return env.Emit(res, func(w io.Writer) error {
		fmt.Fprintf(env.Stderr, "private key written to %s (keep it secret; sign with --sign-key %s or REWIND_SIGNING_KEY_FILE)\nverifier key, for auditors:\n", out, out)
		_, err := fmt.Fprintln(w, vkey)
		return err
	})
}

// ---- recover ----

// ChainRecoverCmd moves a torn tail aside.
type ChainRecoverCmd struct{}

// Run recovers.
func (ChainRecoverCmd) Run(env *Env) error {
	ws, err := openWorkspace(env)
	if err != nil {
		return err
	}
	opts, err := ws.ChainOptions(false)
	if err != nil {
		return err
	}
	rec, err := hashchain.Recover(ws.ChainPath(), opts)
	if err != nil {
		return err
	}
	return env.Emit(rec, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "moved %d torn bytes (from offset %d, sha256 %s) to %s\nrecorded as entry %d (kind %q)\n", rec.Bytes, rec.Offset, rec.SHA256, rec.SavedAs, rec.Entry.Seq, rec.Entry.Kind)
		return err
	})
}
