package durable_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
)

func Example() {
	dir, _ := os.MkdirTemp("", "durable-example-")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "format")
	if err := durable.WriteFile(name, []byte("1\n"), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(name)
	fmt.Printf("%q\n", b)
	// Output: "1\n"
}
