package agents

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
)

// TraceNetwork makes the Env's client runs trace every connect(2) that the client and its
// children make (strace -f), so that Connections can show the client reached nothing but
// 127.0.0.1 and unix sockets. Without strace it reports false; under REWIND_CI=1 that fails
// the test.
func (e *Env) TraceNetwork() bool {
	e.T.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		if os.Getenv("REWIND_CI") == "1" {
			e.T.Fatalf("strace is not installed: the harness cannot show that the clients reach nothing but 127.0.0.1 (REWIND_CI=1; install strace)")
		}
		e.T.Logf("strace is not installed: the clients' connections are not traced")
		return false
	}
	e.trace = filepath.Join(e.Root, "connect")
	return true
}

// traced returns the command line that runs name under strace when TraceNetwork is on. The
// tracer runs as a grandchild (-D), so the run ends when the client does, not when the last
// of what it started (the guard server, a change watcher) does; Run's kill of the process
// group then ends the tracer too.
func (e *Env) traced(name string, args []string) (string, []string) {
	if e.trace == "" {
		return name, args
	}
	out := fmt.Sprintf("%s.%d", e.trace, traces.Add(1))
	return "strace", append([]string{"-D", "-f", "-qq", "-e", "trace=connect", "-o", out, name}, args...)
}

var traces atomic.Int64 // numbers the trace files

// connectCall matches a connect(2) line of strace's output and its address.
var connectCall = regexp.MustCompile(`connect\(\d+, \{sa_family=(AF_\w+), (.*)\}, \d+\)`)

// loopback matches an IPv4 or IPv6 address on the loopback interface.
var loopback = regexp.MustCompile(`inet_addr\("127\.|inet_pton\(AF_INET6, "::1"|"::ffff:127\.`)

// Connections returns every connect(2) the traced runs made to anything but a unix socket, the
// kernel's netlink or a loopback address, as strace printed it, and how many connect calls were traced in all.
func (e *Env) Connections() (outside []string, traced int) {
	files, _ := filepath.Glob(e.trace + ".*")
	for _, f := range files {
		for _, line := range strings.Split(e.ReadFile(f), "\n") {
			m := connectCall.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			traced++
			if m[1] == "AF_UNIX" || m[1] == "AF_NETLINK" || (m[1] == "AF_INET" || m[1] == "AF_INET6") && loopback.MatchString(m[2]) {
				continue
			}
			outside = append(outside, strings.TrimSpace(line))
		}
	}
	return outside, traced
}
