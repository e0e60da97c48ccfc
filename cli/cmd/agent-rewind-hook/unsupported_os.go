//go:build !linux && !darwin && !windows

package main

// agent-rewind-hook builds for Linux, macOS and Windows only: it hands standard input back
// and becomes the full guard in each system's own way (handover_*.go), and a build that
// guessed at another's could run a tool call unguarded. This import cannot resolve, so
// `go build` stops before compiling anything, and its error names the systems it builds for.
import _ "agent-rewind-hook/builds-only-for-linux-macos-and-windows"
