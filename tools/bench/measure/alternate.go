package measure

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Arm is one side of a comparison.
type Arm struct {
	Name string
	// Setup, when set, runs before every run of this arm and is not timed (for example: delete the
	// previous checkpoint store, or make the ten changes a checkpoint is to capture).
	Setup func(ctx context.Context) error
	// Run performs one timed run and reports it. Use Timed for in-process work and Child for a
	// process: both fill Wall, and Child fills MaxRSS.
	Run func(ctx context.Context) (Sample, error)
}

// Alternate runs the arms round-robin, reps times each (A B A B … for two arms), and returns one
// Series per arm in the order given. It stops at the first error, naming the arm and repetition.
func Alternate(ctx context.Context, reps int, arms ...Arm) ([]Series, error) {
	if reps < 1 {
		return nil, fmt.Errorf("measure: %d repetitions: need at least 1", reps)
	}
	if len(arms) == 0 {
		return nil, errors.New("measure: no arms to run")
	}
	out := make([]Series, len(arms))
	for i, a := range arms {
		out[i] = Series{Name: a.Name, Samples: make([]Sample, 0, reps)}
	}
	for r := range reps {
		for i, a := range arms {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			if a.Setup != nil {
				if err := a.Setup(ctx); err != nil {
					return out, fmt.Errorf("%s, repetition %d, setup: %w", a.Name, r+1, err)
				}
			}
			s, err := a.Run(ctx)
			if err != nil {
				return out, fmt.Errorf("%s, repetition %d: %w", a.Name, r+1, err)
			}
			out[i].Samples = append(out[i].Samples, s)
		}
	}
	return out, nil
}

// Timed runs f once in this process and returns its wall time.
func Timed(f func() error) (Sample, error) {
	start := time.Now()
	err := f()
	return Sample{Wall: time.Since(start)}, err
}
