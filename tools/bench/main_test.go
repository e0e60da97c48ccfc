package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the programs the bench runs as children: itself
// (os.Executable) for "statwalk", "mock", "proxy" and "relay", and, with BENCH_FAKE_AGENT=1,
// the agent-rewind binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "statwalk":
			os.Exit(statwalkMain(os.Args[2:], os.Stdout, os.Stderr))
		case "mock":
			os.Exit(mockMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "proxy":
			os.Exit(proxyMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "relay":
			os.Exit(relayMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	if os.Getenv("BENCH_FAKE_AGENT") == "1" {
		os.Exit(fakeAgent(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Under -race every process of a race binary sleeps a second at exit (to let other goroutines
	// report), and the suites start this binary hundreds of times: that second was most of the
	// package's time (the guard suite alone, 104 s of 207 s). The children inherit this.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
