package hashchain

import (
	"archive/tar"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"time"
)

// FormatSpec is FORMAT.md, the specification of the chain, shipped in every export.
//
//go:embed FORMAT.md
var FormatSpec []byte

// VerifierScript is testdata/verify.py, the independent Python verifier written from
// FORMAT.md, shipped in every export.
//
//go:embed testdata/verify.py
var VerifierScript []byte

// ExportOptions configure Export.
type ExportOptions struct {
	// SignKey, if not "", is a signer key (the PRIVATE+KEY+… text of GenerateKey) that signs the
	// exported head.
	SignKey string
	// Clock, if not nil, replaces time.Now for the archive's file times.
	Clock func() time.Time
}

// Export describes what Export wrote.
type Export struct {
	Head   Head  `json:"head"`   // the head of the exported entries
	Signed bool  `json:"signed"` // the head member is a signed note
	Bytes  int64 `json:"bytes"`  // length of the exported chain.jsonl
}

// Export writes what an auditor is handed (FORMAT.md §9): a tar archive of chain.jsonl (the
// chain as it is now, byte for byte), head (its head, signed when opts.SignKey is set),
// FORMAT.md and verify.py. Appends may go on meanwhile: the export covers the entries there
// were when it started.
func (c *Chain) Export(w io.Writer, opts ExportOptions) (Export, error) {
	var (
		size int64
		ex   Export
	)
	err := c.withLock(func() error {
		if err := c.sync(false); err != nil {
			return err
		}
		var err error
		ex.Head, err = c.treeHead(c.n)
		size = c.size
		return err
	})
	if err != nil {
		return ex, err
	}
	head := []byte(ex.Head.Checkpoint())
	if opts.SignKey != "" {
		if head, err = SignHead(ex.Head, opts.SignKey); err != nil {
			return ex, err
		}
		ex.Signed = true
	}
	ex.Bytes = size
	now := time.Now
	if opts.Clock != nil {
		now = opts.Clock
	}
	mtime := now().UTC().Truncate(time.Second)
	tw := tar.NewWriter(w)
	add := func(name string, n int64, r io.Reader) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: n, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("export %s: %w", name, err)
		}
		if _, err := io.Copy(tw, r); err != nil {
			return fmt.Errorf("export %s: %w", name, err)
		}
		return nil
	}
	// The chain is append-only, so its first size bytes stay as they were after the lock.
	if err := add("chain.jsonl", size, io.NewSectionReader(c.f, 0, size)); err != nil {
		return ex, err
	}
	if err := add("head", int64(len(head)), bytes.NewReader(head)); err != nil {
		return ex, err
	}
	if err := add("FORMAT.md", int64(len(FormatSpec)), bytes.NewReader(FormatSpec)); err != nil {
		return ex, err
	}
	if err := add("verify.py", int64(len(VerifierScript)), bytes.NewReader(VerifierScript)); err != nil {
		return ex, err
	}
	if err := tw.Close(); err != nil {
		return ex, fmt.Errorf("export: %w", err)
	}
	return ex, nil
}
