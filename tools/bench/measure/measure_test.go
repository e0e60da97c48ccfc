package measure

import (
	"context"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestQuantileVectors(t *testing.T) {
	// Expected values are numpy.quantile(xs, p) (the default, linear method).
	xs := []float64{7, 1, 3, 9, 5} // sorted: 1 3 5 7 9
	for _, c := range []struct{ p, want float64 }{
		{0, 1}, {0.25, 3}, {0.5, 5}, {0.75, 7}, {1, 9}, {0.1, 1.8}, {0.99, 8.92},
	} {
		if got := Quantile(xs, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median of an even count = %v, want 2.5 (mean of the middle two)", got)
	}
	if got := Median([]float64{42}); got != 42 {
		t.Errorf("Median of one = %v", got)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of nothing is not NaN")
	}
	if xs[0] != 7 {
		t.Error("Quantile sorted its input in place")
	}
}

func TestPercentileOfDurations(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // 100ms … 1ms, unsorted
	}
	if got, want := Percentile(ds, 50), 50500*time.Microsecond; got != want {
		t.Errorf("p50 = %v, want %v", got, want)
	}
	if got, want := Percentile(ds, 99), 99010*time.Microsecond; got != want {
		t.Errorf("p99 = %v, want %v", got, want)
	}
	if Percentile(nil, 99) != 0 {
		t.Error("p99 of nothing is not 0")
	}
}

func TestSummarize(t *testing.T) {
	ds := []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}
	st := Summarize(ds, 3<<20)
	want := Stats{N: 4, MedianMS: 2.5, MinMS: 1, MaxMS: 4, P25MS: 1.75, P75MS: 3.25, PeakRSSMiB: 3}
	if st != want {
		t.Errorf("Summarize = %+v, want %+v", st, want)
	}
	a := Series{Samples: []Sample{{Wall: 30}, {Wall: 10}, {Wall: 20}}}
	b := Series{Samples: []Sample{{Wall: 5}, {Wall: 15}, {Wall: 10}}}
	if r := Ratio(a, b); r != 2 {
		t.Errorf("Ratio = %v, want 2 (median 20 / median 10)", r)
	}
	if !math.IsNaN(Ratio(a, Series{})) {
		t.Error("Ratio against an empty series is not NaN")
	}
}

func TestAlternateOrder(t *testing.T) {
	var order []string
	arm := func(name string) Arm {
		return Arm{
			Name:  name,
			Setup: func(context.Context) error { order = append(order, "setup-"+name); return nil },
			Run: func(context.Context) (Sample, error) {
				order = append(order, name)
				return Sample{Wall: time.Millisecond}, nil
			},
		}
	}
	ss, err := Alternate(context.Background(), 2, arm("A"), arm("B"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(order, " "), "setup-A A setup-B B setup-A A setup-B B"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if len(ss) != 2 || ss[0].Name != "A" || len(ss[0].Samples) != 2 || len(ss[1].Samples) != 2 {
		t.Errorf("series %+v", ss)
	}

	boom := errors.New("boom")
	_, err = Alternate(context.Background(), 3, Arm{Name: "X", Run: func(context.Context) (Sample, error) { return Sample{}, boom }})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "X, repetition 1") {
		t.Errorf("error %v does not name the arm and repetition", err)
	}
	if _, err := Alternate(context.Background(), 0, arm("A")); err == nil {
		t.Error("0 repetitions accepted")
	}
}

func TestChildMeasuresRSS(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	r, err := Run(exec.Command(sh, "-c", "echo out; echo err >&2"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Wall <= 0 || r.MaxRSS <= 0 {
		t.Errorf("wall %v, max RSS %d: want both measured", r.Wall, r.MaxRSS)
	}
	if string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" {
		t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	_, err = Run(exec.Command(sh, "-c", "echo nope >&2; exit 3"))
	if !errors.Is(err, ErrExit) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("exit 3: error %v, want ErrExit quoting stderr", err)
	}
	c, err := Child(exec.Command(sh, "-c", "exit 3"))
	if err != nil || c.ExitCode != 3 {
		t.Errorf("Child exit 3: code %d, err %v", c.ExitCode, err)
	}
	if _, err := Child(exec.Command("/nonexistent/program")); err == nil {
		t.Error("a missing program is not an error")
	}
}
