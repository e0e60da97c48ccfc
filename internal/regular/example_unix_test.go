//go:build unix

package regular_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
)

// A FIFO where a state file belongs fails at once, saying what it is, instead of blocking until
// a writer shows up.
func Example() {
	dir, _ := os.MkdirTemp("", "regular-example")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "position")
	os.WriteFile(name, []byte("ck-1\n"), 0o600)
	b, err := regular.ReadFile(name)
	fmt.Printf("%q %v\n", b, err)

	os.Remove(name)
	syscall.Mkfifo(name, 0o600)
	_, err = regular.ReadFile(name)
	fmt.Println(err == nil, filepath.Base(err.Error()))
	// Output:
	// "ck-1\n" <nil>
	// false position is a FIFO, not a regular file; only regular files belong there: move it aside
}
