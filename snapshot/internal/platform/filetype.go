package platform

// The POSIX file-type bits of Stat.Mode. Every system fills Mode with them (on Windows,
// modeOf), so a type test is the same everywhere; syscall's S_IFMT is not, being 0x1f000 on
// Windows.
const (
	typeMask    = 0o170000
	typeDir     = 0o040000
	typeRegular = 0o100000
)

// IsDir reports whether st is a directory's (its mode's type bits).
func (st Stat) IsDir() bool { return st.Mode&typeMask == typeDir }

// IsRegular reports whether st is a regular file's.
func (st Stat) IsRegular() bool { return st.Mode&typeMask == typeRegular }
