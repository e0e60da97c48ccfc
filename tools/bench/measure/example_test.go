package measure_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

func Example() {
	// Two arms, alternated A B A B A B; here each "run" just reports a fixed time.
	fixed := func(d time.Duration) func(context.Context) (measure.Sample, error) {
		return func(context.Context) (measure.Sample, error) { return measure.Sample{Wall: d}, nil }
	}
	ss, _ := measure.Alternate(context.Background(), 3,
		measure.Arm{Name: "ours", Run: fixed(20 * time.Millisecond)},
		measure.Arm{Name: "theirs", Run: fixed(100 * time.Millisecond)})
	fmt.Printf("%s takes %.1f× the time of %s\n", ss[0].Name, measure.Ratio(ss[0], ss[1]), ss[1].Name)
	fmt.Println("p99 of {1, 50, 100} ms:", measure.Percentile([]time.Duration{
		1 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}, 99))
	// Output:
	// ours takes 0.2× the time of theirs
	// p99 of {1, 50, 100} ms: 99ms
}
