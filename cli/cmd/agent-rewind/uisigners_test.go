package main

import (
	"os"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/chromedp/chromedp"
)

// TestUIChainSigners: with a signed note as the anchored head, the chain tab names its signer.
func TestUIChainSigners(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	checkpointID(t, ws, "first")
	w, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := w.Chain()
	if err != nil {
		t.Fatal(err)
	}
	h, err := ch.Head()
	ch.Close()
	if err != nil {
		t.Fatal(err)
	}
	skey, _, err := hashchain.GenerateKey("alice.example/rewind")
	if err != nil {
		t.Fatal(err)
	}
	note, err := hashchain.SignHead(h, skey)
	if err != nil {
		t.Fatal(err)
	}
	anchor, err := w.ChainAnchor()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(anchor, note, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startUI(t, ws)
	var signers string
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.url+"#chain"),
		chromedp.WaitVisible(chromedp.CSS("#chain-signers")),
		into(&signers, chromedp.Text(chromedp.CSS("#chain-signers"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-chain-signers")
	if !strings.HasPrefix(signers, "Signed by alice.example/rewind") {
		t.Errorf("chain tab says %q, want it signed by alice.example/rewind", signers)
	}
}
