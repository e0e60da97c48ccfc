package unixsock_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// A server takes its lock before it listens: a second server finds it held and leaves, and a
// client of a server that never started is told so.
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

	ln, err := unixsock.Listen(filepath.Join(dir, "sock"))
	fmt.Println(err)
	c, err := unixsock.Dial(filepath.Join(dir, "sock"), time.Second)
	fmt.Println(err)
	c.Close()
	ln.Close()
	// Output:
	// <nil>
	// true
	// true
	// <nil>
	// <nil>
}
