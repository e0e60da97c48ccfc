package analyze

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// FuzzAnalyze holds the streaming analyzer to a slow reference built on encoding/json and
// FORMAT.md: both must accept the same captures and count the same. Errors must never quote
// the input.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte(rec(nil) + "\n" + rec(nil)))
	f.Add([]byte(rec(map[string]any{"scope": "a", "status": 200}) + "\r\n" + rec(map[string]any{"headers": map[string]any{"Anthropic-Beta": "b"}})))
	f.Add([]byte(`{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages?beta=true","bodySha256":"` + strings.Repeat("a", 64) + `","usage":{"input_tokens":1}}`))
	f.Add([]byte(`{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages","body":{"b":"\u00e9","a":[1.0,null]},"usage":null}` + "\n" + `{"method":"POST","origin":"https://API.anthropic.com:443","path":"/v1/messages","body":{"a":[1.0,null],"b":"é"}}`))
	f.Add([]byte(`{"method":"POST","origin":"o","path":"/","usage":{"input_tokens":-1}}`))
	for _, r := range openAIRecords() {
		f.Add([]byte(r + "\n" + r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Run(bytes.NewReader(data), FormatNDJSON, Options{})
		if err != nil && bytes.Contains(data, []byte(marker)) && strings.Contains(err.Error(), marker) {
			t.Fatalf("the error quotes the input: %v", err)
		}
		if !utf8.Valid(data) || hasDuplicateKeys(data) {
			return // encoding/json decodes these differently by design (FORMAT.md)
		}
		want, refErr := reference(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("analyze error %v, reference error %v", err, refErr)
		}
		if err != nil {
			return
		}
		got := *rep
		got.Source, got.Limits, got.Statement, got.Kind, got.Attested = Source{}, Limits{}, "", "", false
		if got != want {
			t.Fatalf("analyze  %+v\nreference %+v", got, want)
		}
	})
}

// reference analyses an NDJSON capture the slow way.
func reference(data []byte) (Report, error) {
	var rep Report
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.Trim(line, " \t\r\n") == "" {
			continue
		}
		if !json.Valid([]byte(line)) {
			return rep, fmt.Errorf("invalid JSON")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return rep, fmt.Errorf("not an object")
		}
		str := func(name string, required bool) (string, bool, error) {
			raw, ok := m[name]
			if !ok {
				if required {
					return "", false, fmt.Errorf("missing %s", name)
				}
				return "", false, nil
			}
			var s string
			if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
				return "", false, fmt.Errorf("%s not a string", name)
			}
			return s, true, nil
		}
		method, _, err1 := str("method", true)
		origin, _, err2 := str("origin", true)
		path, _, err3 := str("path", true)
		scope, hasScope, err4 := str("scope", false)
		bodySHA, hasSHA, err5 := str("bodySha256", false)
		for _, e := range []error{err1, err2, err3, err4, err5} {
			if e != nil {
				return rep, e
			}
		}
		if hasSHA && !isLowerHex64(bodySHA) {
			return rep, fmt.Errorf("bad bodySha256")
		}
		headers := map[string]string{}
		headerNames := []string{}
		if raw, ok := m["headers"]; ok && string(raw) != "null" {
			var hm map[string]json.RawMessage
			if raw[0] != '{' || json.Unmarshal(raw, &hm) != nil {
				return rep, fmt.Errorf("headers")
			}
			for k, v := range hm {
				var s string
				if v[0] != '"' || json.Unmarshal(v, &s) != nil {
					return rep, fmt.Errorf("header value")
				}
				headers[strings.ToLower(k)] = s
				headerNames = append(headerNames, strings.ToLower(k))
			}
		}
		var u usage
		hasUsage := false
		if raw, ok := m["usage"]; ok && string(raw) != "null" {
			var um map[string]json.RawMessage
			if raw[0] != '{' || json.Unmarshal(raw, &um) != nil {
				return rep, fmt.Errorf("usage")
			}
			counts := func(obj map[string]json.RawMessage, names map[string]*int64) error {
				for name, dst := range names {
					v, ok := obj[name]
					if !ok || string(v) == "null" {
						continue
					}
					n, ok := digits(string(v), DefaultMaxTokenCount)
					if !ok {
						return fmt.Errorf("token count")
					}
					*dst = n
				}
				return nil
			}
			if err := counts(um, map[string]*int64{"input_tokens": &u.input, "output_tokens": &u.output, "cache_creation_input_tokens": &u.cacheCreation,
				"cache_read_input_tokens": &u.cacheRead, "prompt_tokens": &u.prompt, "completion_tokens": &u.completion}); err != nil {
				return rep, err
			}
			for name, sub := range map[string]map[string]*int64{
				"input_tokens_details": {"cached_tokens": &u.inputCached}, "prompt_tokens_details": {"cached_tokens": &u.promptCached},
				"output_tokens_details": {"reasoning_tokens": &u.outputReasoning}, "completion_tokens_details": {"reasoning_tokens": &u.completionReasoning},
			} {
				raw, ok := um[name]
				if !ok || string(raw) == "null" {
					continue
				}
				var dm map[string]json.RawMessage
				if raw[0] != '{' || json.Unmarshal(raw, &dm) != nil {
					return rep, fmt.Errorf("usage details")
				}
				if err := counts(dm, sub); err != nil {
					return rep, err
				}
			}
			hasUsage = true
		}
		status, hasStatus := int64(0), false
		if raw, ok := m["status"]; ok {
			n, ok := digits(string(raw), 999)
			if !ok {
				return rep, fmt.Errorf("status")
			}
			status, hasStatus = n, true
		}
		var bodyCanon string
		rawBody, hasBody := m["body"]
		if hasBody {
			dec := json.NewDecoder(bytes.NewReader(rawBody))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				return rep, err
			}
			bodyCanon = refCanonical(v)
		}

		api := API("")
		for p, a := range map[string]API{"/v1/messages": APIMessages, "/v1/responses": APIResponses, "/v1/chat/completions": APIChat} {
			if path == p || strings.HasPrefix(path, p+"?") {
				api = a
			}
		}
		// Usage by the API's names: OpenAI's input counts include their cached tokens.
		var tok usage
		switch api {
		case APIResponses:
			tok = usage{input: u.input - u.inputCached, output: u.output, cacheRead: u.inputCached, reasoning: u.outputReasoning}
			if hasUsage && (u.inputCached > u.input || u.outputReasoning > u.output) {
				return rep, fmt.Errorf("cached over input")
			}
		case APIChat:
			tok = usage{input: u.prompt - u.promptCached, output: u.completion, cacheRead: u.promptCached, reasoning: u.completionReasoning}
			if hasUsage && (u.promptCached > u.prompt || u.completionReasoning > u.completion) {
				return rep, fmt.Errorf("cached over input")
			}
		default:
			tok = usage{input: u.input, output: u.output, cacheCreation: u.cacheCreation, cacheRead: u.cacheRead}
		}
		state := false
		if api == APIResponses && hasBody {
			var top map[string]json.RawMessage
			if json.Unmarshal(rawBody, &top) == nil {
				for _, k := range []string{"previous_response_id", "conversation"} {
					if v, ok := top[k]; ok && string(v) != "null" {
						state = true
					}
				}
				if v, ok := top["background"]; ok && string(v) == "true" {
					state = true
				}
			}
		}

		rep.Records++
		scopeOK := !hasScope || validScope([]byte(scope))
		normOrigin, originOK := normalizeOrigin(origin)
		if originOK && normOrigin != DefaultOrigin && normOrigin != OpenAIOrigin {
			originOK = false
		}
		credential, unknown := false, false
		dupName := map[string]bool{}
		for _, n := range headerNames {
			if dupName[n] {
				unknown = true
			}
			dupName[n] = true
			switch n {
			case "anthropic-version", "anthropic-beta", "openai-beta", "openai-organization", "openai-project", "content-type", "accept", "accept-encoding", "content-length", "user-agent":
			case "authorization", "x-api-key", "cookie", "proxy-authorization":
				credential = true
			default:
				unknown = true
			}
		}
		switch {
		case method != "POST" || api == "":
			rep.Ineligible.UnsupportedRequest++
		case !originOK:
			rep.Ineligible.UnknownOrigin++
		case credential:
			rep.Ineligible.CredentialHeader++
		case unknown:
			rep.Ineligible.UnknownHeader++
		case !scopeOK:
			rep.Ineligible.InvalidScope++
		case hasStatus && (status < 200 || status > 299):
			rep.Ineligible.UnsuccessfulStatus++
		case !hasBody && (!hasSHA || api == APIResponses):
			rep.Ineligible.MissingBody++
		case state:
			rep.Ineligible.ProviderState++
		default:
			rep.EligibleRecords++
			perAPI := rep.APIs.of(api)
			perAPI.EligibleRecords++
			digest := bodySHA
			if hasBody {
				digest = fmt.Sprintf("%x", sha256Sum(bodyCanon))
				if hasSHA && digest != bodySHA {
					return rep, fmt.Errorf("digest mismatch")
				}
			}
			key := fmt.Sprintf("%q %q %q %q", method, normOrigin, path, scope+" "+digest)
			for _, h := range []string{"anthropic-beta", "anthropic-version", "openai-beta", "openai-organization", "openai-project"} {
				if v, ok := headers[h]; ok {
					key += fmt.Sprintf(" %s=%q", h, v)
				}
			}
			if !seen[key] {
				seen[key] = true
				rep.DistinctRequestKeys++
				continue
			}
			rep.ExactRepeatOpportunities++
			perAPI.ExactRepeatOpportunities++
			if !hasUsage {
				rep.RepeatsWithoutUsage++
				continue
			}
			rep.RepeatTokens.add(tok)
			perAPI.RepeatTokens.add(tok)
		}
	}
	return rep, nil
}

func digits(s string, max int64) (int64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	return n, n <= max
}

func isLowerHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// refCanonical writes the canonical form of FORMAT.md from a decoded value.
func refCanonical(v any) string {
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool { return canonString(keys[i]) < canonString(keys[j]) })
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(canonString(k))
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
			b.WriteString(canonString(x))
		case json.Number:
			b.WriteString(string(x))
		case bool:
			fmt.Fprint(&b, x)
		case nil:
			b.WriteString("null")
		}
	}
	write(v)
	return b.String()
}

func canonString(s string) string {
	var b strings.Builder
	writeCanonicalString(&b, s)
	return b.String()
}

// hasDuplicateKeys reports whether any object in data repeats a key.
func hasDuplicateKeys(data []byte) bool {
	dup := false
	var walk func(i, depth int) int
	walk = func(i, depth int) int {
		if i >= len(data) {
			return i
		}
		switch data[i] {
		case '{':
			o, _ := jsonscan.OpenObject(data, i, depth)
			seen := map[string]bool{}
			for o.Next() {
				k := strings.ToLower(string(jsonscan.AppendUnquoted(nil, o.Key())))
				if seen[k] {
					dup = true
				}
				seen[k] = true
				o.Consumed(walk(o.Value(), o.Depth()))
			}
			return o.End()
		case '[':
			a, _ := jsonscan.OpenArray(data, i, depth)
			for a.Next() {
				a.Consumed(walk(a.Value(), a.Depth()))
			}
			return a.End()
		default:
			end, _ := jsonscan.SkipValue(data, i, depth)
			return end
		}
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		data = line
		if i := jsonscan.SkipSpace(data, 0); i < len(data) {
			walk(i, 0)
		}
	}
	return dup
}

func sha256Sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
