package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// printSummary writes the readable table: for each suite its status, then each figure with
// its value, goal and whether it was met.
func printSummary(w io.Writer, a Artifact) {
	dirty := "unknown"
	if a.Git.Dirty != nil {
		dirty = strconv.FormatBool(*a.Git.Dirty)
	}
	fmt.Fprintf(w, "agent-rewind bench  %s  %s/%s  %s × %d (GOMAXPROCS %d)  commit %s (dirty: %s)  quick: %v\n\n",
		a.Machine.Go, a.Machine.OS, a.Machine.Arch, a.Machine.CPUModel, a.Machine.CPUs, a.Machine.GOMAXPROCS,
		short(a.Git.Commit), dirty, a.Quick)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tfigure\tvalue\tgoal\tmet\tof")
	for _, s := range a.Suites {
		for _, f := range s.Figures {
			met := "-"
			if f.Met != nil {
				met = map[bool]string{true: "yes", false: "NO"}[*f.Met]
			}
			goal := f.Goal
			if goal == "" {
				goal = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, f.Name, valueText(f), goal, met, f.Of)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, s := range a.Suites {
		line := fmt.Sprintf("%-18s %-8s %5.1fs", s.Name, s.Status, s.Seconds)
		if s.Reason != "" {
			line += "  " + s.Reason
		}
		fmt.Fprintln(w, line)
	}
}

// valueText formats a figure's value with its unit (and denominator for counts).
func valueText(f Figure) string {
	v := strconv.FormatFloat(f.Value, 'g', 4, 64)
	if math.Abs(f.Value) >= 1000 || f.Value == math.Trunc(f.Value) { // no exponents for counts and rates
		v = strconv.FormatFloat(math.Round(f.Value), 'f', 0, 64)
	}
	switch {
	case f.Denominator != nil:
		return fmt.Sprintf("%s of %s %s", v, strconv.FormatFloat(*f.Denominator, 'g', -1, 64), f.Unit)
	case f.Unit == "ratio":
		return v + "×"
	default:
		return v + " " + f.Unit
	}
}

func short(commit string) string {
	if len(commit) > 12 && !strings.Contains(commit, " ") {
		return commit[:12]
	}
	return commit
}

// jsonTo writes v to w as indented JSON.
func jsonTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
