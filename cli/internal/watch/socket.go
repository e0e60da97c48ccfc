package watch

import "path/filepath"

// sockPath is the watcher's socket in store (cli/internal/unixsock listens and dials on it).
func sockPath(store string) string { return filepath.Join(dir(store), "sock") }
