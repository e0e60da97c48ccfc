package cacheplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func addFixtures(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, name := range files {
		f.Add(readFixture(f, name))
	}
}

// FuzzPlan: any input, read as any format or detected, either fails as invalid JSON (exactly
// when encoding/json says so) or gets a plan; an insert plan splices only its markers
// (checked byte by byte and by value), and any other plan changes nothing.
func FuzzPlan(f *testing.F) {
	addFixtures(f, "testdata/plan/*.json")
	addFixtures(f, "testdata/openai/*.json")
	f.Add(agentTurn(11, false))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, format := range append([]Format{""}, Formats...) {
			p, err := PlanRequest(body, Options{Format: format})
			if valid := json.Valid(body); (err == nil) != valid {
				t.Fatalf("error %v, but encoding/json valid = %v", err, valid)
			}
			if err != nil {
				if !errors.Is(err, ErrInvalidJSON) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(p.Breakpoints) > 2 || (p.Decision == DecisionInsert) != (len(p.Breakpoints) > 0) {
				t.Fatalf("decision %s with %d breakpoints", p.Decision, len(p.Breakpoints))
			}
			if openAI := p.Format == FormatResponses || p.Format == FormatOpenAIChat; openAI != (p.PrefixCaching != nil) || (openAI && p.Decision == DecisionInsert) {
				t.Fatalf("%s: decision %s, prefix caching %v", p.Format, p.Decision, p.PrefixCaching)
			}
			checkApplied(t, body, p)
		}
	})
}

// FuzzPrune: any input, read as any format or detected, is either invalid JSON or pruned
// such that only the replaced contents differ.
func FuzzPrune(f *testing.F) {
	addFixtures(f, "testdata/prune/*.json")
	addFixtures(f, "testdata/openai/*.json")
	f.Add(conversation(4, strings.Repeat("x", 300)))
	f.Add(codexTurns(f, 2))
	f.Add(clineTurns(f, 2))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, format := range append([]Format{""}, Formats...) {
			out, res, err := Prune(body, PruneOptions{MinBytes: 8, Format: format})
			if valid := json.Valid(body); (err == nil) != valid {
				t.Fatalf("%q: error %v, but encoding/json valid = %v", format, err, valid)
			}
			if err != nil {
				if !bytes.Equal(out, body) {
					t.Fatalf("body changed on error")
				}
				return
			}
			if res.Pruned != len(res.References) || res.BytesSaved != len(body)-len(out) || (res.Pruned == 0 && !bytes.Equal(out, body)) {
				t.Fatalf("%q: result %+v for %d -> %d bytes", format, res, len(body), len(out))
			}
			if (res.Format == FormatOther) != (res.Reason != "") || (format != "" && res.Format != FormatOther && res.Format != format) {
				t.Fatalf("%q: read as %s (%q)", format, res.Format, res.Reason)
			}
			if res.Pruned > 0 {
				checkPruned(t, body, out, res)
			}
		}
	})
}

// FuzzCompare: any pair, read as any format or detected, either fails with one of the
// documented errors or classifies; a body compared with itself is always unchanged.
func FuzzCompare(f *testing.F) {
	dirs, _ := filepath.Glob("testdata/compare/*")
	for _, d := range dirs {
		f.Add(readFixture(f, filepath.Join(d, "previous.json")), readFixture(f, filepath.Join(d, "current.json")))
	}
	codex, cline := readFixture(f, codexRecording), readFixture(f, clineRecording)
	f.Add(keepItems(f, codex, "input", 6), codex)
	f.Add(keepItems(f, cline, "messages", 2), cline)
	f.Fuzz(func(t *testing.T, prev, cur []byte) {
		for _, format := range append([]Format{""}, Formats...) {
			opts := CompareOptions{Format: format}
			r, err := CompareWith(prev, cur, opts)
			if err != nil {
				if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrUnsupportedFormat) && !errors.Is(err, ErrNotUTF8) {
					t.Fatalf("undocumented error %v", err)
				}
				continue
			}
			switch r.Class {
			case ClassUnchanged, ClassAppendedMessages, ClassAppendedBlocks:
				if r.FirstChangedPath != "" {
					t.Fatalf("%s with a changed path %s", r.Class, r.FirstChangedPath)
				}
			case ClassDivergence:
				if r.FirstChangedPath == "" {
					t.Fatalf("divergence without a path")
				}
			default:
				t.Fatalf("class %q", r.Class)
			}
			if format != "" && r.Format != format {
				t.Fatalf("given %s, read as %s", format, r.Format)
			}
			if same, err := CompareWith(prev, prev, opts); err != nil || same.Class != ClassUnchanged {
				t.Fatalf("a body compared with itself: %v %+v", err, same)
			}
		}
	})
}
