package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// SchemaVersion is the version of the artifact's JSON shape. It changes when a field changes
// meaning or is removed; adding a field does not change it.
const SchemaVersion = 1

// Artifact is the JSON document one run writes (see the package doc for the field meanings).
type Artifact struct {
	Schema  int           `json:"schema"`
	Tool    string        `json:"tool"`
	Started time.Time     `json:"started"`
	Ended   time.Time     `json:"ended"`
	Args    []string      `json:"args"`
	Quick   bool          `json:"quick"`
	Machine Machine       `json:"machine"`
	Git     GitState      `json:"git"`
	Agent   *AgentBinary  `json:"agent,omitempty"` // the agent-rewind binary measured, when a suite used one
	Inputs  []Input       `json:"inputs"`
	Sources []Source      `json:"sources"`
	Suites  []SuiteResult `json:"suites"`
}

// AgentBinary identifies the agent-rewind binary the suites measured.
type AgentBinary struct {
	Built  bool   `json:"built"`          // built from this checkout by the run (false: given with --agent)
	Path   string `json:"path,omitempty"` // only for a binary given with --agent
	SHA256 string `json:"sha256"`
}

// SuiteResult is what one suite produced.
type SuiteResult struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Status      string   `json:"status"`           // "ok", "skipped" or "failed"
	Reason      string   `json:"reason,omitempty"` // why skipped or failed
	Seconds     float64  `json:"seconds"`
	Modules     []string `json:"modules"` // the source modules whose code produced the figures
	Figures     []Figure `json:"figures"`
}

// Suite statuses.
const (
	StatusOK      = "ok"
	StatusSkipped = "skipped"
	StatusFailed  = "failed"
)

// Figure is one reported number with everything needed to read it: its unit, what it is
// measured against (Of, and Denominator for counts), the two arms' statistics for a ratio, and
// the goal the issue set with whether this run met it.
type Figure struct {
	Name        string   `json:"name"`
	Value       float64  `json:"value"`
	Unit        string   `json:"unit"`
	Denominator *float64 `json:"denominator,omitempty"` // counts: "value of denominator", e.g. 3 of 9
	Of          string   `json:"of,omitempty"`          // the comparison or the thing counted
	A           *ArmStat `json:"a,omitempty"`           // numerator arm of a ratio, or the measured arm
	B           *ArmStat `json:"b,omitempty"`           // denominator arm of a ratio
	Goal        string   `json:"goal,omitempty"`        // e.g. "<= 0.2"
	Met         *bool    `json:"met,omitempty"`         // present exactly when Goal is
	Note        string   `json:"note,omitempty"`
}

// ArmStat is one arm's summary, labelled.
type ArmStat struct {
	Label string `json:"label"`
	measure.Stats
}

// Goal is a bound a figure should meet, as an issue states it.
type Goal struct {
	Op    string // "<=", ">=" or "=="; empty for no goal
	Bound float64
}

// AtMost is the goal value <= bound.
func AtMost(bound float64) Goal { return Goal{"<=", bound} }

// AtLeast is the goal value >= bound.
func AtLeast(bound float64) Goal { return Goal{">=", bound} }

// Exactly is the goal value == want (for counts that must come out exact).
func Exactly(want float64) Goal { return Goal{"==", want} }

// NoGoal marks a figure reported for information.
var NoGoal = Goal{}

// apply sets f's Goal and Met for g.
func (g Goal) apply(f *Figure) {
	if g.Op == "" {
		return
	}
	f.Goal = fmt.Sprintf("%s %g", g.Op, g.Bound)
	met := false
	switch g.Op {
	case "<=":
		met = f.Value <= g.Bound
	case ">=":
		met = f.Value >= g.Bound
	case "==":
		met = f.Value == g.Bound
	}
	if math.IsNaN(f.Value) {
		met = false
	}
	f.Met = &met
}

// arm returns the labelled summary of s.
func arm(s measure.Series) *ArmStat { return &ArmStat{Label: s.Name, Stats: s.Stats()} }

// writeJSON writes v to path as indented JSON, through a temp file and a rename so that a
// reader never sees half an artifact.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bench-*.json.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
