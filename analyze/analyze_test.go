package analyze

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// marker is planted in prompts: no report and no error may contain it.
const marker = "PROMPT-MARKER-a91c"

// rec builds one capture record; fields override the defaults (a nil value deletes one).
func rec(fields map[string]any) string {
	r := map[string]any{
		"method":  "POST",
		"origin":  "https://api.anthropic.com",
		"path":    "/v1/messages",
		"headers": map[string]any{"anthropic-version": "2023-06-01", "content-type": "application/json"},
		"body":    map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []any{map[string]any{"role": "user", "content": "hello " + marker}}},
		"usage":   map[string]any{"input_tokens": 100, "output_tokens": 20},
	}
	for k, v := range fields {
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func body(text string) map[string]any {
	return map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": []any{map[string]any{"role": "user", "content": text + " " + marker}}}
}

func run(t *testing.T, lines []string, opts Options) *Report {
	t.Helper()
	rep, err := Run(strings.NewReader(strings.Join(lines, "\n")), FormatNDJSON, opts)
	if err != nil {
		t.Fatal(err)
	}
	noMarker(t, rep, nil)
	return rep
}

// noMarker fails if a report or error quotes a prompt.
func noMarker(t *testing.T, rep *Report, err error) {
	t.Helper()
	if rep != nil {
		b, _ := json.Marshal(rep)
		if strings.Contains(string(b), marker) {
			t.Fatalf("the report quotes a prompt: %s", b)
		}
	}
	if err != nil && strings.Contains(err.Error(), marker) {
		t.Fatalf("the error quotes a prompt: %v", err)
	}
}

func TestRepeatsAreCounted(t *testing.T) {
	reordered := `{"usage":{"output_tokens":7,"input_tokens":50,"cache_read_input_tokens":5,"cache_creation_input_tokens":3},"body":{"messages":[{"content":"hello ` + marker + `","role":"user"}],"max_tokens":100,"model":"claude-sonnet-4-5"},"headers":{"Content-Type":"application/json","Anthropic-Version":"2023-06-01"},"path":"/v1/messages","origin":"HTTPS://API.ANTHROPIC.COM:443/","method":"POST"}`
	rep := run(t, []string{
		rec(nil),  // original
		rec(nil),  // repeat: 100 + 20
		reordered, // repeat, other member order, header case and origin spelling: 50+7+3+5
		rec(map[string]any{"body": body("other")}), // another request
		rec(map[string]any{"scope": "team-b"}),     // same body, another scope: not a repeat
		rec(map[string]any{"headers": map[string]any{"anthropic-version": "2023-06-01", "anthropic-beta": "x"}}), // another beta: not a repeat
		rec(map[string]any{"usage": nil}), // repeat without usage
		"",                                // blank lines are skipped
	}, Options{})
	want := Tokens{Input: 150, Output: 27, CacheCreationInput: 3, CacheReadInput: 5, Total: 185}
	if rep.Records != 7 || rep.EligibleRecords != 7 || rep.DistinctRequestKeys != 4 || rep.ExactRepeatOpportunities != 3 || rep.RepeatsWithoutUsage != 1 || rep.RepeatTokens != want {
		t.Fatalf("report %+v", rep)
	}
	if !rep.Attested || rep.Legacy != nil || rep.Statement != Statement || rep.Kind != ReportKind || rep.Source.Format != FormatNDJSON {
		t.Fatalf("report header %+v", rep)
	}
}

func TestIneligibleNeverCounts(t *testing.T) {
	var lines []string
	for range 2 { // each twice: the second would be a repeat if it counted
		lines = append(lines,
			rec(map[string]any{"method": "GET"}),
			rec(map[string]any{"path": "/v1/complete"}),
			rec(map[string]any{"origin": "https://proxy.example"}),
			rec(map[string]any{"origin": "https://api.anthropic.com/v1"}),
			rec(map[string]any{"headers": map[string]any{"x-api-key": "sk-" + marker}}),
			rec(map[string]any{"headers": map[string]any{"authorization": "Bearer x"}}),
			rec(map[string]any{"headers": map[string]any{"x-custom": "1"}}),
			`{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","headers":{"anthropic-version":"a","Anthropic-Version":"b"},"body":{}}`,
			rec(map[string]any{"scope": "bad scope " + marker}),
			rec(map[string]any{"status": 529}),
			rec(map[string]any{"body": nil}),
		)
	}
	rep := run(t, lines, Options{})
	want := Ineligible{UnsupportedRequest: 4, UnknownOrigin: 4, CredentialHeader: 4, UnknownHeader: 4, InvalidScope: 2, UnsuccessfulStatus: 2, MissingBody: 2}
	if rep.Ineligible != want || rep.EligibleRecords != 0 || rep.ExactRepeatOpportunities != 0 || rep.DistinctRequestKeys != 0 {
		t.Fatalf("ineligible %+v, report %+v", rep.Ineligible, rep)
	}
	// Once known through Options.Origins, the proxy's requests count.
	rep = run(t, []string{rec(map[string]any{"origin": "https://proxy.example"}), rec(map[string]any{"origin": "https://proxy.example:443"})}, Options{Origins: []string{"https://Proxy.Example/"}})
	if rep.ExactRepeatOpportunities != 1 {
		t.Fatalf("known origin: %+v", rep)
	}
	if _, err := Run(strings.NewReader(""), FormatNDJSON, Options{Origins: []string{"https://x.example/path"}}); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("bad origin option: %v", err)
	}
}

// canonicalDigest is the body digest by the documented canonical form, written independently
// of the package: keys sorted, minimal escapes.
func canonicalDigest(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sortStrings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				writeCanonicalString(&b, k)
				b.WriteByte(':')
				write(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		case string:
			writeCanonicalString(&b, x)
		case json.Number:
			b.WriteString(string(x))
		case bool:
			fmt.Fprint(&b, x)
		case nil:
			b.WriteString("null")
		}
	}
	write(v)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func writeCanonicalString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

func TestBodyDigestMatchesBody(t *testing.T) {
	bd := body("digest\n\"quoted\"")
	dec := json.NewDecoder(strings.NewReader(mustJSON(bd)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	digest := canonicalDigest(t, v)
	rep := run(t, []string{
		rec(map[string]any{"body": bd}),
		rec(map[string]any{"body": nil, "bodySha256": digest}),
		rec(map[string]any{"bodySha256": digest, "body": bd}),
	}, Options{})
	if rep.ExactRepeatOpportunities != 2 {
		t.Fatalf("a bodySha256 of the canonical body is not the same request: %+v", rep)
	}
	_, err := Run(strings.NewReader(rec(map[string]any{"bodySha256": strings.Repeat("0", 64)})), FormatNDJSON, Options{})
	var re *RecordError
	if !errors.Is(err, ErrInvalidRecord) || !errors.As(err, &re) || re.Record != 1 {
		t.Fatalf("mismatched digest: %v", err)
	}
	noMarker(t, nil, err)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestInvalidTokenCountsAreRejected(t *testing.T) {
	for _, bad := range []string{`-1`, `1.5`, `1e3`, `"12"`, `true`, `100000001`, `99999999999999999999999`} {
		line := strings.Replace(rec(nil), `"input_tokens":100`, `"input_tokens":`+bad, 1)
		_, err := Run(strings.NewReader(rec(nil)+"\n"+line), FormatNDJSON, Options{})
		var re *RecordError
		if !errors.Is(err, ErrInvalidTokenCount) || !errors.As(err, &re) || re.Record != 2 || re.Offset != int64(len(rec(nil))+1) {
			t.Errorf("%s: %v", bad, err)
		}
		noMarker(t, nil, err)
	}
	// Exactly at the bound, and null, are accepted.
	ok := strings.Replace(rec(nil), `"input_tokens":100`, `"input_tokens":100000000,"cache_read_input_tokens":null`, 1)
	rep := run(t, []string{ok, ok}, Options{})
	if rep.RepeatTokens.Input != 100_000_000 {
		t.Fatalf("%+v", rep.RepeatTokens)
	}
}

func TestCounterOverflowIsRejected(t *testing.T) {
	big := strings.Replace(rec(nil), `"input_tokens":100`, fmt.Sprintf(`"input_tokens":%d`, int64(math.MaxInt64/2)+1), 1)
	_, err := Run(strings.NewReader(strings.Join([]string{big, big, big}, "\n")), FormatNDJSON, Options{Limits: Limits{MaxTokenCount: math.MaxInt64}})
	if !errors.Is(err, ErrCounterOverflow) {
		t.Fatalf("overflow: %v", err)
	}
}

func TestInvalidRecords(t *testing.T) {
	for _, line := range []string{
		`{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","body":{"x":"` + marker + `"`,
		`["` + marker + `"]`,
		`{"origin":"https://api.anthropic.com","path":"/v1/messages","body":{"x":"` + marker + `"}}`,
		`{"method":1,"origin":"https://api.anthropic.com","path":"/v1/messages"}`,
		`{"method":"POST","method":"GET","origin":"o","path":"/"}`,
		`{"method":"POST","origin":"o","path":"/","headers":{"a":1}}`,
		`{"method":"POST","origin":"o","path":"/","bodySha256":"` + marker + `"}`,
		`{"method":"POST","origin":"o","path":"/","status":"200"}`,
		`{"method":"POST","origin":"o","path":"/","usage":[1]}`,
		`{"method":"POST","origin":"o","path":"/"} {}`,
	} {
		_, err := Run(strings.NewReader(line), FormatNDJSON, Options{})
		var re *RecordError
		if !errors.Is(err, ErrInvalidRecord) || !errors.As(err, &re) || re.Bytes != int64(len(line)) || re.SHA256 != sha256.Sum256([]byte(line)) {
			t.Errorf("%.60s: %v", line, err)
		}
		noMarker(t, nil, err)
	}
}

func TestFormats(t *testing.T) {
	a, b := rec(nil), rec(map[string]any{"body": body("two")})
	// CRLF line ends and blank lines.
	crlf := a + "\r\n\r\n  \r\n" + a + "\r\n" + b
	rep, err := Run(strings.NewReader(crlf), FormatAuto, Options{})
	if err != nil || rep.Source.Format != FormatNDJSON || rep.Records != 3 || rep.ExactRepeatOpportunities != 1 || rep.Source.Bytes != int64(len(crlf)) {
		t.Fatalf("crlf: %v %+v", err, rep)
	}
	sum := sha256.Sum256([]byte(crlf))
	if rep.Source.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("source digest")
	}
	// A JSON array, detected.
	arr := " \n[" + a + ",\n" + a + "," + b + "]\n"
	rep, err = Run(strings.NewReader(arr), FormatAuto, Options{})
	if err != nil || rep.Source.Format != FormatJSON || rep.Records != 3 || rep.ExactRepeatOpportunities != 1 {
		t.Fatalf("array: %v %+v", err, rep)
	}
	// A single record, in memory.
	rep, err = RunBytes([]byte(a), FormatJSON, Options{})
	if err != nil || rep.Records != 1 {
		t.Fatalf("single: %v %+v", err, rep)
	}
	// Forced NDJSON refuses an array.
	_, err = Run(strings.NewReader(arr), FormatNDJSON, Options{})
	if !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("forced ndjson: %v", err)
	}
	noMarker(t, nil, err)
	for _, bad := range []string{`[` + a, `"x"`, `  `} {
		_, err = RunBytes([]byte(bad), FormatJSON, Options{})
		if !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("%q: %v", bad, err)
		}
		noMarker(t, nil, err)
	}
}

func TestLegacyReport(t *testing.T) {
	rep := run(t, []string{
		rec(map[string]any{"scope": "team-a"}),
		rec(map[string]any{"scope": "team-a"}),
		rec(map[string]any{"scope": "team-a"}),
		rec(map[string]any{"scope": "team-b", "path": "/v1/messages?beta=true"}),
		rec(map[string]any{"scope": "team-b", "path": "/v1/messages?beta=true"}),
		rec(map[string]any{"scope": "team-b", "origin": "https://elsewhere.example"}),
	}, Options{Legacy: true})
	l := rep.Legacy
	if rep.Attested || l == nil || !l.ReviewBeforeSharing || l.Warning != LegacyWarning || len(l.Scopes) != 2 {
		t.Fatalf("legacy %+v", l)
	}
	if s := l.Scopes[0]; s.Scope != "team-a" || s.Records != 3 || s.EligibleRecords != 3 || s.ExactRepeatOpportunities != 2 || s.RepeatTokens.Total != 240 {
		t.Fatalf("team-a %+v", s)
	}
	if s := l.Scopes[1]; s.Scope != "team-b" || s.Records != 3 || s.EligibleRecords != 2 || s.ExactRepeatOpportunities != 1 {
		t.Fatalf("team-b %+v", s)
	}
	sm := l.Sample
	if sm == nil || sm.Repeats != 2 || sm.Origin != DefaultOrigin || strings.Join(sm.HeaderNames, ",") != "anthropic-version,content-type" || len(sm.Body) != 3 {
		t.Fatalf("sample %+v", sm)
	}
	// The attested report of the same capture names no scope.
	rep = run(t, []string{rec(map[string]any{"scope": "team-a"})}, Options{})
	if b, _ := json.Marshal(rep); bytes.Contains(b, []byte("team-a")) {
		t.Fatalf("attested report names a scope: %s", b)
	}
}
