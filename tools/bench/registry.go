package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Suite is one family of figures. Each suite lives in its own file (suite_<name>.go) and
// registers itself from an init function, so adding a suite is adding a file.
type Suite struct {
	Name        string
	Description string
	// Modules are the go.work modules (folders) the suite measures. When one is not in go.work
	// the suite is skipped as "module not present yet"; when all are, their sources are hashed
	// into the artifact.
	Modules []string
	// Run measures and reports figures through b. Returning b.Skip(…) marks the suite skipped
	// (for example: the built binary lacks the command it measures); any other error fails it.
	Run func(ctx context.Context, b *Bench) error
}

var registry []Suite

// register adds s to the registry; a duplicate name is a programming error.
func register(s Suite) {
	if slices.ContainsFunc(registry, func(o Suite) bool { return o.Name == s.Name }) {
		panic("bench: suite " + s.Name + " registered twice")
	}
	registry = append(registry, s)
	slices.SortFunc(registry, func(a, b Suite) int { return strings.Compare(a.Name, b.Name) })
}

// selectSuites returns the suites named (all of them when names is empty), in registry order.
func selectSuites(names []string) ([]Suite, error) {
	if len(names) == 0 {
		return slices.Clone(registry), nil
	}
	var out []Suite
	for _, s := range registry {
		if slices.Contains(names, s.Name) {
			out = append(out, s)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(registry, func(s Suite) bool { return s.Name == n }) {
			return nil, fmt.Errorf("no suite %q (the suites: %s; see --list)", n, strings.Join(suiteNames(), ", "))
		}
	}
	return out, nil
}

func suiteNames() []string {
	var n []string
	for _, s := range registry {
		n = append(n, s.Name)
	}
	return n
}

// skipError marks a suite that chose not to run, with the reason.
type skipError struct{ reason string }

func (e *skipError) Error() string { return e.reason }

// ErrSkip matches every skip: errors.Is(err, ErrSkip).
var ErrSkip = errors.New("suite skipped")

func (e *skipError) Is(target error) bool { return target == ErrSkip }
