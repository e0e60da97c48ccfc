//go:build !linux && !darwin

package main

// agent-rewind runs on Linux and macOS only: the snapshot store and the effect ledger rely on
// flock, O_NOFOLLOW and POSIX file modes, and a build that guessed at them could corrupt a
// workspace on rewind. This import cannot resolve, so `go build` stops before compiling anything
// and its error names the way forward (WSL 2 on Windows runs the Linux binary).
import _ "agent-rewind/supports-only-linux-and-macos/on-windows-run-the-linux-build-inside-WSL-2"
