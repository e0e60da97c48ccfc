package analyze

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// padded returns a record of exactly n bytes (n > a few hundred), its size made up by an
// ignored member.
func padded(n int) string {
	r := rec(map[string]any{"pad": ""})
	return strings.Replace(r, `"pad":""`, `"pad":"`+strings.Repeat("p", n-len(r))+`"`, 1)
}

func limitError(t *testing.T, err error, limit string) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Limit != limit {
		t.Fatalf("want a %s limit error, got %v", limit, err)
	}
	noMarker(t, nil, err)
	return le
}

func TestRecordBytesLimit(t *testing.T) {
	at := padded(DefaultRecordBytes)
	if len(at) != DefaultRecordBytes {
		t.Fatalf("padded to %d", len(at))
	}
	rep, err := Run(strings.NewReader(at+"\r\n"+at), FormatNDJSON, Options{})
	if err != nil || rep.Records != 2 {
		t.Fatalf("exactly at the limit: %v", err)
	}
	// One over, and far over (longer than the read buffer): both reported with the record's
	// size and digest.
	for _, n := range []int{DefaultRecordBytes + 1, DefaultRecordBytes + 200<<10} {
		over := padded(n)
		_, err := Run(strings.NewReader(at+"\n"+over+"\n"+at), FormatNDJSON, Options{})
		le := limitError(t, err, "record bytes")
		if le.Got != int64(n) || le.Max != DefaultRecordBytes || le.Record != 2 || le.RecordSHA256 != sha256.Sum256([]byte(over)) {
			t.Fatalf("over by %d: %+v", n-DefaultRecordBytes, le)
		}
		if strings.Contains(err.Error(), "pppp") {
			t.Fatalf("the error quotes the record")
		}
	}
	// In a JSON array the limit applies to each element.
	_, err = RunBytes([]byte("["+at+","+padded(DefaultRecordBytes+1)+"]"), FormatJSON, Options{})
	if le := limitError(t, err, "record bytes"); le.Record != 2 {
		t.Fatalf("%+v", le)
	}
}

func TestTotalBytesLimit(t *testing.T) {
	line := rec(nil) + "\n"
	input := strings.Repeat(line, 10)
	lim := Limits{TotalBytes: int64(len(input))}
	if _, err := Run(strings.NewReader(input), FormatNDJSON, Options{Limits: lim}); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
	_, err := Run(strings.NewReader(input+" "), FormatNDJSON, Options{Limits: lim})
	le := limitError(t, err, "total bytes")
	over := input + " "
	if le.SourceBytes != int64(len(over)) || le.SourceSHA256 != sha256.Sum256([]byte(over)) {
		t.Fatalf("%+v", le)
	}
}

// generated streams NDJSON of exactly n bytes without holding it: identical records, then
// one padded record that makes up the size.
type generated struct {
	line    []byte
	left    int
	pending []byte
}

func newGenerated(n int) *generated {
	return &generated{line: []byte(rec(nil) + "\n"), left: n}
}

func (g *generated) Read(p []byte) (int, error) {
	if len(g.pending) == 0 {
		switch {
		case g.left == 0:
			return 0, io.EOF
		case g.left >= 2*len(g.line)+1024:
			g.pending = g.line
		default:
			g.pending = []byte(padded(g.left-1) + "\n")
		}
		g.left -= len(g.pending)
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func TestTotalBytesLimitFullSize(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("streams 128 MiB twice: run without -race and -short")
	}
	rep, err := Run(newGenerated(DefaultTotalBytes), FormatNDJSON, Options{})
	if err != nil || rep.Source.Bytes != DefaultTotalBytes {
		t.Fatalf("exactly 128 MiB: %v", err)
	}
	_, err = Run(io.MultiReader(newGenerated(DefaultTotalBytes), strings.NewReader("\n")), FormatNDJSON, Options{})
	if le := limitError(t, err, "total bytes"); le.SourceBytes != DefaultTotalBytes+1 {
		t.Fatalf("%+v", le)
	}
}

func TestArrayBytesLimit(t *testing.T) {
	r := rec(nil)
	n := DefaultArrayBytes / (len(r) + 1)
	arr := "[" + strings.TrimSuffix(strings.Repeat(r+",", n), ",") + "]"
	arr += strings.Repeat(" ", DefaultArrayBytes-len(arr))
	if len(arr) != DefaultArrayBytes {
		t.Fatalf("array of %d bytes", len(arr))
	}
	rep, err := RunBytes([]byte(arr), FormatAuto, Options{})
	if err != nil || rep.Records != int64(n) || rep.ExactRepeatOpportunities != int64(n-1) {
		t.Fatalf("exactly at the limit: %v", err)
	}
	_, err = RunBytes([]byte(arr+" "), FormatAuto, Options{})
	if le := limitError(t, err, "array bytes"); le.Got != DefaultArrayBytes+1 || !le.AtLeast {
		t.Fatalf("%+v", le)
	}
}

func TestRequestKeysLimit(t *testing.T) {
	var b bytes.Buffer
	base := rec(map[string]any{"body": map[string]any{"n": 0}})
	write := func(i int) {
		b.WriteString(strings.Replace(base, `"body":{"n":0}`, fmt.Sprintf(`"body":{"n":%d}`, i), 1))
		b.WriteByte('\n')
	}
	for i := range DefaultRequestKeys {
		write(i)
	}
	write(0) // a repeat needs no new key
	rep, err := Run(bytes.NewReader(b.Bytes()), FormatNDJSON, Options{})
	if err != nil || rep.DistinctRequestKeys != DefaultRequestKeys || rep.ExactRepeatOpportunities != 1 {
		t.Fatalf("exactly at the limit: %v", err)
	}
	write(DefaultRequestKeys)
	_, err = Run(bytes.NewReader(b.Bytes()), FormatNDJSON, Options{})
	if le := limitError(t, err, "request keys"); le.Got != DefaultRequestKeys+1 || le.Record != DefaultRequestKeys+2 {
		t.Fatalf("%+v", le)
	}
}

func TestScopesLimit(t *testing.T) {
	var lines []string
	for i := range DefaultScopes - 1 {
		lines = append(lines, rec(map[string]any{"scope": fmt.Sprintf("s%d", i)}))
	}
	lines = append(lines, rec(nil)) // no scope is a scope too
	rep, err := Run(strings.NewReader(strings.Join(lines, "\n")), FormatNDJSON, Options{Legacy: true})
	if err != nil || len(rep.Legacy.Scopes) != DefaultScopes {
		t.Fatalf("exactly at the limit: %v", err)
	}
	lines = append(lines, rec(map[string]any{"scope": "one-more"}))
	_, err = Run(strings.NewReader(strings.Join(lines, "\n")), FormatNDJSON, Options{})
	if le := limitError(t, err, "scopes"); le.Got != DefaultScopes+1 {
		t.Fatalf("%+v", le)
	}
}
