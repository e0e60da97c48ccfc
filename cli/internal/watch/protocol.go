package watch

import (
	"errors"
	"path/filepath"
	"time"
)

// ErrRunning is returned by Run when another watcher already serves the workspace.
var ErrRunning = errors.New("a watcher is already running for this workspace")

// Request is what a client sends, one JSON line.
type Request struct {
	Op    string `json:"op"`              // "since", "status" or "stop"
	Token string `json:"token,omitempty"` // with "since": the token of the last answer used, or "" for none
}

// Reply is the watcher's answer, one JSON line. It is also the --json shape of "watch status".
type Reply struct {
	ID      string    `json:"id"`                // this watcher's id, new at each start
	PID     int       `json:"pid"`               // its process
	Root    string    `json:"root"`              // the workspace it watches
	Started time.Time `json:"started"`           // when it started
	Watched int       `json:"watchedDirs"`       // directories watched
	MountNS string    `json:"mountNS,omitempty"` // its mount namespace (/proc/self/ns/mnt): it sees the mounts of that one
	Token   string    `json:"token,omitempty"`   // with "since": the position now
	Paths   []string  `json:"paths,omitempty"`   // with "since": paths changed after the token (a directory covers its subtree), and Mounts
	Mounts  []string  `json:"mounts,omitempty"`  // with "since": the mount points below the root, which it cannot see into: read whole every time
	Linked  int       `json:"linked,omitempty"`  // with "since": how many of Paths name a file with more than one name
	Refused string    `json:"refused,omitempty"` // with "since": why it cannot say what changed (the checkpoint walks the tree)
	Error   string    `json:"error,omitempty"`   // a request it did not understand
}

// Options configure Run.
type Options struct {
	Root  string        // the workspace, absolute
	Store string        // its store (workspace.Workspace.Meta)
	Idle  time.Duration // exit after this long with no request
}

// dir is the watcher's folder in the store.
func dir(store string) string { return filepath.Join(store, "watch") }
