package workspace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

func Example() {
	dir, _ := os.MkdirTemp("", "ws-example-")
	defer os.RemoveAll(dir)
	res, err := workspace.Generate(context.Background(), filepath.Join(dir, "ws"), workspace.Shape{Files: 100, Bytes: 100_000, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Regular, "files,", res.Symlinks, "symlink,", res.Bytes, "bytes")
	// The listing hash read back from disk is the one Generate computed while writing.
	onDisk, _ := workspace.Listing(filepath.Join(dir, "ws"))
	fmt.Println(onDisk == res.ListingSHA256)
	cs, _ := workspace.MakeChanges(filepath.Join(dir, "ws"), 10, 1)
	fmt.Println(len(cs), "changes, the first:", cs[0].Kind)
	// Output:
	// 99 files, 1 symlink, 100000 bytes
	// true
	// 10 changes, the first: modified
}
