package agentws_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/mcpserver"
)

// An agent checkpoints, breaks its workspace, then backtracks with a note: the files come back
// and the note stays in failure memory, where backtrack_candidates shows it.
func Example() {
	root, _ := os.MkdirTemp("", "agentws-example-")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main // builds\n"), 0o644)

	w, err := agentws.New(root, agentws.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	ctx := context.Background()
	cp, _ := w.Checkpoint(ctx, "before the refactor")

	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main // broken\n"), 0o644)
	r, err := w.BacktrackCommit(ctx, mcpserver.BacktrackRequest{ID: cp.ID, WhatFailed: "the refactor broke the build", Lesson: "run the tests first"})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(root, "main.go"))
	fmt.Printf("main.go: %s", b)
	fmt.Println("modified:", r.Rewind.Modified)
	for _, n := range r.Notes {
		fmt.Printf("note: %s (lesson: %s)\n", n.WhatFailed, n.Lesson)
	}

	c, _ := w.BacktrackCandidates(ctx)
	for _, x := range c.Candidates {
		label := x.Label
		if strings.HasPrefix(label, "before rewind to ") {
			label = "before rewind to …" // a safety checkpoint, named after the target's id
		}
		fmt.Printf("candidate %q: %d notes, %d paths changed since\n", label, len(x.Notes), x.Changed)
	}
	// Output:
	// main.go: package main // builds
	// modified: 1
	// note: the refactor broke the build (lesson: run the tests first)
	// candidate "before the refactor": 1 notes, 0 paths changed since
	// candidate "before rewind to …": 0 notes, 1 paths changed since
}
