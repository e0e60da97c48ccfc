package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hookCall is one run of agent-rewind-hook as the wrapper timeHooks puts on PATH saw it: its
// wall time includes the hook's own process start, not the client's spawn of the wrapper.
type hookCall struct {
	At    time.Duration // since the session's first hook call
	Took  time.Duration
	Event string // the payload's hook_event_name
	Args  string
}

// timeHooks puts a wrapper named agent-rewind-hook first on e's PATH (the plugin's launcher
// finds it there) that times every call and notes its event; hookCalls reads what it logged.
func timeHooks(t *testing.T, e *Env) (log string) {
	t.Helper()
	wrap, log := filepath.Join(e.Root, "wrap"), filepath.Join(e.Root, "hook-times.log")
	// The payload is kept in a file so the event's name can be read from it after the call,
	// off the timed span.
	e.WriteFile(filepath.Join(wrap, "agent-rewind-hook"), "#!/bin/sh\np=$(mktemp)\ncat > \"$p\"\ns=$(date +%s%N)\n\""+e.Bin.Hook+"\" \"$@\" < \"$p\"\nrc=$?\nz=$(date +%s%N)\nev=$(grep -o '\"hook_event_name\": *\"[A-Za-z]*\"' \"$p\" | head -1 | sed 's/.*\"\\([A-Za-z]*\\)\"$/\\1/')\nrm -f \"$p\"\necho \"$s $z ${ev:-?} $*\" >> "+log+"\nexit $rc\n")
	if err := os.Chmod(filepath.Join(wrap, "agent-rewind-hook"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.Set("PATH", wrap+string(os.PathListSeparator)+e.Get("PATH"))
	return log
}

// hookCalls reads the wrapper's log, in the order the calls started.
func hookCalls(t *testing.T, log string) []hookCall {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var calls []hookCall
	var first int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("hook times log line %q: want start, end and event", line)
		}
		a, _ := strconv.ParseInt(f[0], 10, 64)
		z, _ := strconv.ParseInt(f[1], 10, 64)
		calls = append(calls, hookCall{At: time.Duration(a), Took: time.Duration(z - a), Event: f[2], Args: strings.Join(f[3:], " ")})
	}
	slices.SortFunc(calls, func(x, y hookCall) int { return int(x.At - y.At) })
	if len(calls) > 0 {
		first = int64(calls[0].At)
	}
	for i := range calls {
		calls[i].At -= time.Duration(first)
	}
	return calls
}

// logHookCalls logs every call and the distribution of their times (a figure, never asserted).
func logHookCalls(t *testing.T, calls []hookCall) {
	t.Helper()
	for i, c := range calls {
		t.Logf("hook call %2d at %8.1f ms took %6.1f ms: %s %s", i, ms(c.At), ms(c.Took), c.Event, c.Args)
	}
	t.Logf("hook calls: %s", hookDistribution(calls))
	events := map[string][]hookCall{}
	for _, c := range calls {
		events[c.Event] = append(events[c.Event], c)
	}
	for _, ev := range slices.Sorted(func(yield func(string) bool) {
		for k := range events {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Logf("  %s: %s", ev, hookDistribution(events[ev]))
	}
}

// hookDistribution is n, median, mean, p90 and max of the calls' times.
func hookDistribution(calls []hookCall) string {
	if len(calls) == 0 {
		return "none"
	}
	d := make([]time.Duration, len(calls))
	var sum time.Duration
	for i, c := range calls {
		d[i], sum = c.Took, sum+c.Took
	}
	slices.Sort(d)
	return fmt.Sprintf("n %d, median %.1f ms, mean %.1f ms, p90 %.1f ms, max %.1f ms",
		len(d), ms(d[len(d)/2]), ms(sum/time.Duration(len(d))), ms(d[len(d)*9/10]), ms(d[len(d)-1]))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
