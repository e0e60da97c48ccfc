//go:build linux || darwin

package platform

import "syscall"

// IsDir reports whether st is a directory's (its st_mode's type bits).
func (st Stat) IsDir() bool { return st.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// IsRegular reports whether st is a regular file's.
func (st Stat) IsRegular() bool { return st.Mode&syscall.S_IFMT == syscall.S_IFREG }
