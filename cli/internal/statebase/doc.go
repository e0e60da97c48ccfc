// Package statebase is the rule that finds the folder holding agent-rewind's state (every
// workspace's store, the chains' anchors, the hook server's socket) from the environment alone.
// It is its own small package because the hook client (cli/cmd/agent-rewind-hook), which must
// link almost nothing, finds the guard server's socket by it, exactly as the stores are found.
package statebase
