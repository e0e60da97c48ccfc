// Package racechild keeps child processes of a race-enabled test binary from sleeping at exit.
//
// A program built with -race sleeps one second when it exits (GORACE's atexit_sleep_ms,
// default 1000), so that other goroutines can still report a race. Tests that run their own
// binary, or one built with -race, as child processes (crash and multi-process tests, the
// bench's stand-ins, the cli's end-to-end tests) pay that second per child: in some packages most
// of their time. Quiet, called from TestMain before any child starts, sets GORACE for the
// children unless the person running the tests set it; a child killed by a test never sleeps
// anyway, and the race detector still reports in every child that races.
package racechild
