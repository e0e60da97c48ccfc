package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/snapshot"
)

// A checkpoint, an agent's changes, a rewind that undoes them, and a replay that redoes them.
func Example() {
	ctx := context.Background()
	root, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("draft 1\n"), 0o644)

	store, err := snapshot.Open(root, snapshot.Options{}) // state in root/.rewind
	if err != nil {
		fmt.Println(err)
		return
	}
	cp, _ := store.Checkpoint(ctx, "before the agent")
	fmt.Println("files:", cp.Counts.Files, "bytes:", cp.Counts.Bytes)

	// The agent rewrites a file and adds another, by whatever means.
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("draft 2, longer\n"), 0o644)
	os.WriteFile(filepath.Join(root, "scratch.txt"), []byte("tmp\n"), 0o644)

	rw, _ := store.Rewind(ctx, cp.ID, snapshot.RestoreOptions{})
	for _, c := range rw.Changes {
		fmt.Println(c.Kind, c.Path)
	}
	b, _ := os.ReadFile(filepath.Join(root, "notes.txt"))
	fmt.Printf("notes.txt: %q\n", b)

	// The state the rewind left was checkpointed first: replay goes forward to it.
	store.Replay(ctx, rw.Safety, snapshot.RestoreOptions{})
	b, _ = os.ReadFile(filepath.Join(root, "notes.txt"))
	fmt.Printf("notes.txt: %q\n", b)

	tl, _ := store.List()
	for _, c := range tl.Checkpoints {
		fmt.Printf("%s %q current=%v\n", c.Kind, strings.Replace(c.Label, cp.ID, "<id>", 1), c.ID == tl.Current)
	}
	// Output:
	// files: 1 bytes: 8
	// modified notes.txt
	// deleted scratch.txt
	// notes.txt: "draft 1\n"
	// notes.txt: "draft 2, longer\n"
	// normal "before the agent" current=false
	// safety "before rewind to <id>" current=true
}
