//go:build unix

package tape

import "syscall"

// noFollow makes an exclusive create refuse a symlink put where the file belongs.
const noFollow = syscall.O_NOFOLLOW
