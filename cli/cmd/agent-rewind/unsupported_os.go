//go:build !linux && !darwin && !windows

package main

// agent-rewind builds for Linux, macOS and Windows only: the snapshot store and the effect
// ledger rely on each system's own locks, no-follow opens, file identity and durable renames
// (the _linux, _darwin and _windows files), and a build that guessed at another system's could
// corrupt a workspace on rewind. This import cannot resolve, so `go build` stops before
// compiling anything, and its error names the systems it builds for.
import _ "agent-rewind/builds-only-for-linux-macos-and-windows"
