package restore_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/restore"
)

// contents is a Source over contents held in memory.
type contents map[objects.Hash]string

func (c contents) Open(h objects.Hash) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(c[h])), nil
}

// A workspace holds notes.txt as "draft"; the checkpoint holds it as "final". The plan has one
// change, which Apply makes, because notes.txt still has the stat the capture saw.
func Example() {
	root, _ := os.MkdirTemp("", "restore-example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("draft"), 0o644)
	seen, _ := platform.Lstat(filepath.Join(root, "notes.txt")) // what the live capture saw

	entry := func(content string) manifest.Entry {
		return manifest.Entry{Path: "notes.txt", Type: manifest.TypeFile, Mode: 0o644, Size: int64(len(content)), Blob: objects.Sum([]byte(content))}
	}
	live, want := []manifest.Entry{entry("draft")}, []manifest.Entry{entry("final")}
	plan := restore.NewPlan(live, want, nil)
	for _, c := range plan.Changes {
		fmt.Println(c.Kind, c.Path)
	}

	touched, kept, err := restore.Apply(context.Background(), &plan, restore.Options{
		Root:        root,
		Source:      contents{want[0].Blob: "final"},
		Seen:        func(p string) (platform.Stat, bool) { return seen, p == "notes.txt" },
		Parallelism: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(root, "notes.txt"))
	fmt.Printf("%s; touched %d, kept %d\n", b, len(touched), len(kept))
	// Output:
	// modified notes.txt
	// final; touched 1, kept 0
}
