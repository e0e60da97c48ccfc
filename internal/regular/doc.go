// Package regular opens files that must be regular files, without ever blocking on one that is
// not.
//
// Opening a FIFO for reading blocks until a writer appears, and reading a character device may
// never end, so one FIFO in place of a state file would hang every command that reads it; the
// effect guard included, and a guard that hangs makes the agent's hook time out, which lets the
// tool call run. Every open here therefore:
//
//   - opens with O_NONBLOCK (a FIFO opens at once, or fails with ENXIO) and O_NOCTTY;
//   - checks with fstat on the open descriptor that it is a regular file, and otherwise closes it
//     and returns a *NotRegularError naming the path and what it found ("is a FIFO");
//   - clears O_NONBLOCK again, so the *os.File behaves as one from os.Open.
//
// Open, OpenFile and ReadFile are for the program's own state files: they also refuse a symlink
// (O_NOFOLLOW on the last element), since nothing but this program writes there. OpenInput and
// ReadInput are for files a person names on the command line: a symlink is followed, and what it
// leads to must be a regular file.
//
// On Windows no file a name leads to can block an open (its pipes live under \\.\pipe\, not
// among files), so only the type check and the symlink rule are left: a state file's name is read
// with Lstat and the handle opened must be that same file.
//
// Errors other than "not a regular file" are the usual *fs.PathError, so errors.Is(err,
// fs.ErrNotExist) still tells a missing file.
package regular
