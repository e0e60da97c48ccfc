package unixsock

import "errors"

// ErrNoServer is returned by Dial when nothing listens on the socket: no socket file, or one
// that refuses connections (its server is gone), or on Windows no pipe of that name.
var ErrNoServer = errors.New("no server listens on the socket")
