//go:build race

package analyze

// raceEnabled: the race detector slows the scanner about tenfold, so the tests that stream
// the full 128 MiB leave that to the plain (non-race) run.
const raceEnabled = true
