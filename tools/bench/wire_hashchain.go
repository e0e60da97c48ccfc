package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/hashchain"
)

// The chain suite's seams (suite_chain.go), wired to the hashchain module.
func init() {
	chainBuild = buildChainFromSpec
	chainAppendDurable = appendDurable
}

// buildChainFromSpec writes a valid n-entry chain straight from hashchain/FORMAT.md §4–5, not
// through the module (whose Append fsyncs every entry): a chain of "checkpoint" entries whose
// data is {"id": <12 hex>, "n": i}. Written this way, "chain verify" accepting it also checks
// that the format document and the verifier agree.
func buildChainFromSpec(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	prev := hashchain.ZeroHash
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var buf []byte
	for i := range n {
		// JCS sorts members: data, (hash,) kind, prev, seq, time; data's members: id, n.
		data := fmt.Sprintf(`{"id":"%012x","n":%d}`, i, i)
		ts := t0.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)
		buf = fmt.Appendf(buf[:0], `%s{"data":%s,"kind":"checkpoint","prev":"%s","seq":%d,"time":"%s"}`, hashchain.HashPrefix, data, prev, i, ts)
		sum := sha256.Sum256(buf)
		hash := hex.EncodeToString(sum[:])
		fmt.Fprintf(w, `{"data":%s,"hash":"%s","kind":"checkpoint","prev":"%s","seq":%d,"time":"%s"}`+"\n", data, hash, prev, i, ts)
		prev = hash
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendDurable appends n entries through the module, as the CLI does: each durable before
// Append returns, with the truncation anchor kept up to date beside the chain.
func appendDurable(path string, n int) error {
	c, err := hashchain.Open(path, hashchain.Options{Create: true, Anchor: filepath.Join(filepath.Dir(path), "anchor", "head")})
	if err != nil {
		return err
	}
	for i := range n {
		if _, err := c.Append("checkpoint", map[string]any{"id": fmt.Sprintf("%012x", i), "n": i}); err != nil {
			c.Close()
			return err
		}
	}
	return c.Close()
}
