package workspacetest_test

import (
	"bytes"
	"fmt"

	"github.com/agent-rewind/rewind/snapshot/internal/workspacetest"
)

// A seed names the same content in every package's tests.
func Example() {
	a, b := workspacetest.RandomBytes(1<<10, 61), workspacetest.RandomBytes(1<<10, 61)
	fmt.Println(len(a), bytes.Equal(a, b), bytes.Equal(a, workspacetest.RandomBytes(1<<10, 62)))
	// Output:
	// 1024 true false
}
