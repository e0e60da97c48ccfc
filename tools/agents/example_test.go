package agents_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/tools/agents"
)

// A rewind to "before call X" is checked by comparing the project's tree with the one recorded
// before the call: Diff lists what differs, nothing when the two are byte-identical.
func ExampleDiff() {
	dir, _ := os.MkdirTemp("", "tree-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "app.txt"), []byte("version 1\n"), 0o644)
	before, _ := agents.ReadTree(dir)

	os.WriteFile(filepath.Join(dir, "app.txt"), []byte("version 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644)
	after, _ := agents.ReadTree(dir)
	fmt.Println(agents.Diff(before, after))

	os.WriteFile(filepath.Join(dir, "app.txt"), []byte("version 1\n"), 0o644)
	os.Remove(filepath.Join(dir, "new.txt"))
	back, _ := agents.ReadTree(dir)
	fmt.Println(len(agents.Diff(before, back)))
	// Output:
	// [+ new.txt ~ app.txt (-rw-r--r-- 10B -> -rw-r--r-- 10B)]
	// 0
}
