package ui

// A line diff: Myers' O(ND) algorithm ("An O(ND) Difference Algorithm and Its Variations",
// 1986) over lines, after trimming the common prefix and suffix, with D capped so a huge change
// costs bounded time and memory (the trace keeps about D² int32s) and is reported as too large.

// Line is one line of a diff: Op is ' ' (in both), '-' (only in the old side) or '+' (only in
// the new side); A and B are its 1-based line numbers on each side (0 where absent).
type Line struct {
	Op   string `json:"op"`
	A    int    `json:"a,omitempty"`
	B    int    `json:"b,omitempty"`
	Text string `json:"text"`
}

// Hunk is a run of changed lines with up to context unchanged lines around them.
type Hunk struct {
	Lines []Line `json:"lines"`
}

// diffLines returns the edit script from a to b, or ok=false when more than maxD lines differ.
func diffLines(a, b []string, maxD int) (out []Line, ok bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	for i := 0; i < pre; i++ {
		out = append(out, Line{Op: " ", A: i + 1, B: i + 1, Text: a[i]})
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], maxD)
	if !ok {
		return nil, false
	}
	for _, l := range mid {
		if l.A > 0 {
			l.A += pre
		}
		if l.B > 0 {
			l.B += pre
		}
		out = append(out, l)
	}
	for i := suf; i > 0; i-- {
		out = append(out, Line{Op: " ", A: len(a) - i + 1, B: len(b) - i + 1, Text: a[len(a)-i]})
	}
	return out, true
}

// myers is the greedy forward search with a trace for the backtrack.
func myers(a, b []string, maxD int) ([]Line, bool) {
	n, m := len(a), len(b)
	if n+m == 0 {
		return nil, true
	}
	limit := min(maxD, n+m)
	v := make([]int32, 2*limit+3) // v[k+limit+1]: furthest x on diagonal k
	at := func(k int) int { return int(v[k+limit+1]) }
	var trace [][]int32 // trace[d]: v over k in [-d-1, d+1] before step d
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int32(nil), v[limit-d:limit+d+3]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && at(k-1) < at(k+1)) {
				x = at(k + 1)
			} else {
				x = at(k-1) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[k+limit+1] = int32(x)
			if x >= n && y >= m {
				return backtrack(a, b, trace), true
			}
		}
	}
	return nil, false
}

func backtrack(a, b []string, trace [][]int32) []Line {
	var rev []Line
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		vd := trace[d]
		get := func(k int) int { return int(vd[k+d+1]) }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, Line{Op: " ", A: x, B: y, Text: a[x-1]})
			x, y = x-1, y-1
		}
		if x == px {
			rev = append(rev, Line{Op: "+", B: y, Text: b[y-1]})
			y--
		} else {
			rev = append(rev, Line{Op: "-", A: x, Text: a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, Line{Op: " ", A: x, B: y, Text: a[x-1]})
		x, y = x-1, y-1
	}
	out := make([]Line, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

// hunks groups a diff's changed lines with context unchanged lines around each, and stops
// after maxLines lines shown (truncated reports that).
func hunks(lines []Line, context, maxLines int) (hs []Hunk, truncated bool) {
	shown := 0
	for i := 0; i < len(lines); {
		if lines[i].Op == " " {
			i++
			continue
		}
		start := max(0, i-context)
		end := i
		for end < len(lines) {
			if lines[end].Op != " " {
				end++
				continue
			}
			run := end
			for run < len(lines) && lines[run].Op == " " {
				run++
			}
			if run == len(lines) || run-end > 2*context { // the next hunk's context cannot overlap this one's
				break
			}
			end = run
		}
		end = min(len(lines), end+context)
		if shown+end-start > maxLines {
			end = start + maxLines - shown
			truncated = true
		}
		if end > start {
			hs = append(hs, Hunk{Lines: lines[start:end]})
			shown += end - start
		}
		if truncated {
			return hs, true
		}
		i = end
	}
	return hs, false
}
