package ui

import "os"

// readLiveFlags open a live file the page shows for reading. Windows has no O_NOFOLLOW: a
// symlink swapped in since the file's lstat is followed, within the workspace only (os.Root),
// and there are no FIFOs to block on.
const readLiveFlags = os.O_RDONLY
