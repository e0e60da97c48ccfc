package command

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// branchingTimeline is a history with every shape the graph must draw, in List's order (oldest
// first):
//
//	a first checkpoint 01, then 02 and 03; rewind to 02 (safety 04 of 03's line);
//	05 and 06 on the new line; rewind to 01 (safety 07 of 06's line); 08;
//	rewind to 02 again (safety 09 of 08's line); 10 there, the current position;
//	and an older tree whose root's parent was removed by gc (11 -> 12), listed first by time.
func branchingTimeline() *snapshot.Timeline {
	t0 := time.Date(2025, 11, 30, 14, 0, 0, 0, time.UTC)
	id := func(n int) string {
		if n == 0 {
			return ""
		}
		return strings.Repeat("0", 10) + string(rune('0'+n/10)) + string(rune('0'+n%10))
	}
	type cp struct {
		n, parent, minute int
		kind              snapshot.Kind
		label             string
	}
	cps := []cp{
		{11, 99, -20, snapshot.KindNormal, "older tree"},
		{12, 11, -19, snapshot.KindNormal, "older child"},
		{1, 0, 0, snapshot.KindNormal, "first"},
		{2, 1, 1, snapshot.KindNormal, "second"},
		{3, 2, 2, snapshot.KindNormal, "third"},
		{4, 3, 3, snapshot.KindSafety, "before rewind to " + id(2)},
		{5, 2, 4, snapshot.KindNormal, "fifth"},
		{6, 5, 5, snapshot.KindNormal, "sixth"},
		{7, 6, 6, snapshot.KindSafety, "before rewind to " + id(1)},
		{8, 1, 7, snapshot.KindNormal, "eighth"},
		{9, 8, 8, snapshot.KindSafety, "before rewind to " + id(2)},
		{10, 2, 9, snapshot.KindNormal, "tenth\x1b[31m"},
	}
	tl := &snapshot.Timeline{Current: id(10), Last: &snapshot.Operation{Op: "rewind", From: id(8), To: id(2), Safety: id(9), Time: t0.Add(8*time.Minute + 30*time.Second)}}
	for _, c := range cps {
		tl.Checkpoints = append(tl.Checkpoints, snapshot.Checkpoint{
			ID: id(c.n), Parent: id(c.parent), Time: t0.Add(time.Duration(c.minute) * time.Minute), Kind: c.kind, Label: c.label,
			Counts: snapshot.Counts{Files: c.n, Dirs: 1, Bytes: int64(c.n) * 1000},
		})
	}
	return tl
}

func TestRenderGraphGolden(t *testing.T) {
	got := strings.Join(renderGraph(branchingTimeline(), time.UTC), "\n") + "\n"
	golden := filepath.Join("testdata", "graph.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRenderGraphGolden -update to create it)", err)
	}
	if d := lineDiff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); d != "" {
		t.Fatalf("graph differs from %s (rerun with -update if the change is intended):\n%s\ngot:\n%s", golden, d, got)
	}
}

// TestRenderGraphShapes checks properties any timeline's graph must have: one row per
// checkpoint, each before its parent, exactly one "@", and lanes that only ever join leftwards.
func TestRenderGraphShapes(t *testing.T) {
	tl := branchingTimeline()
	lines := renderGraph(tl, time.UTC)
	pos := map[string]int{}
	at := 0
	for i, l := range lines {
		if f := strings.Fields(strings.TrimLeft(l, "|/*@ ")); len(f) > 0 {
			if _, dup := pos[f[0]]; dup {
				t.Fatalf("checkpoint %s drawn twice", f[0])
			}
			pos[f[0]] = i
		}
		if strings.ContainsRune(l, '@') {
			at++
		}
		if graph, _, _ := strings.Cut(l, "0000"); strings.ContainsAny(graph, `\_`) {
			t.Fatalf("line %d draws a lane moving right or crossing: %q", i, l)
		}
	}
	if len(pos) != len(tl.Checkpoints) || at != 1 {
		t.Fatalf("%d of %d checkpoints drawn, %d current marks:\n%s", len(pos), len(tl.Checkpoints), at, strings.Join(lines, "\n"))
	}
	for _, c := range tl.Checkpoints {
		if p, ok := pos[c.Parent]; ok && p < pos[c.ID] {
			t.Fatalf("%s is drawn above its child %s", c.Parent, c.ID)
		}
	}
}

func TestRenderGraphLinearAndEmpty(t *testing.T) {
	if got := renderGraph(&snapshot.Timeline{}, time.UTC); len(got) != 0 {
		t.Fatalf("empty timeline: %q", got)
	}
	tl := &snapshot.Timeline{Current: "000000000002", Checkpoints: []snapshot.Checkpoint{
		{ID: "000000000001", Time: time.Unix(0, 0)},
		{ID: "000000000002", Parent: "000000000001", Time: time.Unix(60, 0)},
	}}
	want := []string{
		"@  000000000002  1970-01-01 00:01:00  (0 files, 0 B)  <- current",
		"*  000000000001  1970-01-01 00:00:00  (0 files, 0 B)",
	}
	if d := lineDiff(want, renderGraph(tl, time.UTC)); d != "" {
		t.Fatalf("linear history:\n%s", d)
	}
}

// lineDiff names the first line where got differs from want, "" when they are equal.
func lineDiff(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g || i >= len(want) || i >= len(got) {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return ""
}
