//go:build !windows

package platform

// RestrictsNames says that this system cannot hold every name a checkpoint made elsewhere may:
// Linux and macOS take any name but "/" and NUL, which no manifest holds.
const RestrictsNames = false
