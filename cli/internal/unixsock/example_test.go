package unixsock_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// A server takes its lock before it listens: a second server finds it held and leaves, and a
// client of a server that never started is told so (TestListenDial reaches one that runs).
func Example() {
	dir, _ := os.MkdirTemp("", "unixsock")
	defer os.RemoveAll(dir)
	first, err := unixsock.Lock(filepath.Join(dir, "lock"))
	fmt.Println(err)
	_, err = unixsock.Lock(filepath.Join(dir, "lock"))
	fmt.Println(errors.Is(err, unixsock.ErrHeld))
	first.Close()

	_, err = unixsock.Dial(filepath.Join(dir, "sock"), 0)
	fmt.Println(errors.Is(err, unixsock.ErrNoServer))
	// Output:
	// <nil>
	// true
	// true
}
