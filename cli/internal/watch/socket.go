package watch

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSockPath is below the 108 bytes a unix socket's path may have (sun_path).
const maxSockPath = 100

// sockName returns a name for the socket in store usable by bind and connect, and a function to
// call once done with it: a path too long for a socket is reached through an open descriptor of
// its folder (/proc/self/fd/N/sock, Linux).
func sockName(store string) (string, func(), error) {
	name := filepath.Join(dir(store), "sock")
	if len(name) <= maxSockPath {
		return name, func() {}, nil
	}
	d, err := os.Open(dir(store))
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/sock", d.Fd()), func() { d.Close() }, nil
}
