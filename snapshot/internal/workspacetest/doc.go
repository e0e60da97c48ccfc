// Package workspacetest is what the tests of the snapshot module share to build workspaces
// (as net/http/httptest is for servers): files written with their mode (Put), FIFOs and
// symlinks where the system has them (Mkfifo, Symlink), bash scripts (Sh) and the outside tools
// tests need (NeedTool), pseudo-random contents that a seed names in every package
// (RandomBytes), and the process's CPU time, which benchmarks report (CPUTime). Only tests
// import it.
package workspacetest
