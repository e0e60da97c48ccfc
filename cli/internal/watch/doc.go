// Package watch is the change watcher: a per-workspace process that records which paths changed,
// so that a checkpoint can look at those instead of walking the whole tree
// (snapshot.CheckpointChanged).
//
// A watcher (Run, "agent-rewind watch") watches every directory of the workspace with inotify
// (on Windows, one ReadDirectoryChangesW of the whole tree, rdcw_windows.go) and numbers the changes it sees. A position in that numbering is a token, "<watcher id>:<n>";
// the id is new each time a watcher starts. Asked for the changes since a token (Since), it first
// makes sure it has seen everything that happened before the question (it creates a cookie file
// in a directory it watches and waits for that event, as git's fsmonitor daemon does), then
// answers the paths changed after the token and a new token. It refuses to answer, rather than
// guess, when the token is from another watcher, when events were lost (the kernel's queue
// overflowed, the watch limit was reached, too many changes to keep), or when it cannot catch
// up: the checkpoint then walks the whole tree and says why. Correctness never depends on it.
//
// Its answers hold only for what it can prove. A file with more than one name is watched itself
// and reported under every name it has (links_linux.go); the workspace is reached from its open
// folder, and the watcher refuses once the workspace's path names another folder (inotify_linux.go);
// a mount point below the root is not watched but named in every answer, to be read whole, and a
// change of the mounts at or below the root makes it refuse (mounts_linux.go). A watcher that does
// not answer within askTimeout is ended and replaced by the checkpoint that asked (replace.go).
//
// The watcher lives in the store: watch/sock (its socket), watch/lock (held while it runs, so one
// runs per workspace, with its pid), watch/cookies/ and watch/position (the last checkpoint taken
// with a token, and that token: a hint is used only while that checkpoint is the current
// position). It exits after an idle period with no question, when the workspace's folder is
// removed or moved, when its socket is removed or replaced, or when asked to ("agent-rewind watch
// stop").
//
// The wire format is one JSON object a line each way over the unix socket: a Request, then a
// Reply. Linux and Windows (where reparse points and every name of a hard-linked file are named
// in every answer, special_windows.go, and names are recorded as their folders hold them,
// canonical_windows.go); elsewhere the checkpoint keeps the stat walk.
package watch
