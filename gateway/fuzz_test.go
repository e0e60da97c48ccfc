package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// FuzzConfigFile: a configuration file never panics the parser, and whatever it accepts has
// only known fields, none null.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		`{"profile":"lean","port":8788,"upstream":"https://api.anthropic.com","pruneContext":false}`,
		`{"prices":{"m":{"input":1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":5}}}`,
		`{"port":1,"port":2}`, `{"tenant":null}`, `[]`, `{"x":1}`, `{"port":"1"}`, `{"storage":"sqlite","epoch":"e"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := parseConfigFile(data, "f.json")
		if err != nil {
			return
		}
		for k, v := range cf.fields {
			if !knownField(k) || string(v) == "null" {
				t.Fatalf("accepted field %q = %s", k, v)
			}
		}
		for _, s := range specs {
			if s.file != "" {
				cf.text(s.file, s.kind)
			}
		}
		cf.prices()
	})
}

// FuzzScanFlags: any command line scans without a panic, and an accepted one holds each
// flag once with a non-empty value.
func FuzzScanFlags(f *testing.F) {
	f.Add("gateway --port 1 --no-preserve-cache --record-only=true")
	f.Add("--port --port")
	f.Add("--workspace x gateway --tenant=a --tenant=b")
	f.Fuzz(func(t *testing.T, line string) {
		out, err := ScanFlags(strings.Fields(line))
		if err != nil {
			return
		}
		for name, v := range out {
			if _, ok := gatewayFlags[name]; !ok || v.Value == "" {
				t.Fatalf("flag %q = %+v", name, v)
			}
		}
	})
}

// FuzzStreamUsage: any response body parses without a panic and with non-negative counts;
// a stream is complete only if it contains message_stop.
func FuzzStreamUsage(f *testing.F) {
	sse, _ := mockanthropic.SSE([]byte(recordedMessage))
	f.Add(sse)
	f.Add([]byte("data: {\"type\":\"message_stop\"}\r\n\r\n"))
	f.Add([]byte(recordedMessage))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, u, complete := StreamUsage(body)
		if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 {
			t.Fatalf("negative usage %+v", u)
		}
		if complete && !bytes.Contains(body, []byte("message_stop")) {
			t.Fatal("complete without message_stop")
		}
		_, u, _ = MessageUsage(body)
		if u.Input < 0 || u.Output < 0 {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

// FuzzSavings: any receipt file is either refused or has no negative count.
func FuzzSavings(f *testing.F) {
	f.Add([]byte(`{"kind":"agent-rewind/savings/v1","replayed_calls":3,"avoided_tokens":{"input":1},"by_model":{"m":{"replayed_calls":3}}}`))
	f.Add([]byte(`{"kind":"agent-rewind/savings/v1","avoided_cost_usd":-1}`))
	f.Add([]byte(`{"kind":"agent-rewind/savings/v1","history":[{"hour":"2026-11-30T12:00:00Z","replayed_calls":1,"avoided_cost_usd":0.5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSavings(data)
		if err != nil {
			return
		}
		if s.ReplayedCalls < 0 || s.AvoidedCostUSD < 0 || s.AvoidedTokens.Input < 0 || s.Note != SavingsNote || len(s.History) > maxSavingsHistory {
			t.Fatalf("accepted %+v", s)
		}
		for _, p := range s.History {
			if p.ReplayedCalls < 0 || p.AvoidedCostUSD < 0 {
				t.Fatalf("accepted history %+v", p)
			}
		}
	})
}

// FuzzScope: ValidScope agrees with its documented charset.
func FuzzScope(f *testing.F) {
	f.Add("team-a:prod.1_x")
	f.Add("a b")
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) >= 1 && len(s) <= MaxScopeLen && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") == ""
		if ValidScope(s) != want {
			t.Fatalf("ValidScope(%q) = %v", s, !want)
		}
	})
}

// messageUsageReference is MessageUsage as json.Unmarshal of the whole body reads it: what
// the scanning MessageUsage must agree with.
func messageUsageReference(body []byte) (model string, u Usage, ok bool) {
	var m struct {
		Type  string     `json:"type"`
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(body, &m) != nil || m.Type != "message" || m.Usage == nil {
		return "", Usage{}, false
	}
	m.Usage.apply(&u)
	return m.Model, u, true
}

// FuzzMessageUsage: MessageUsage, which decodes only the members it reads, reads every body
// as json.Unmarshal of the whole body does.
func FuzzMessageUsage(f *testing.F) {
	for _, s := range []string{
		recordedMessage,
		` {"type":"message","model":"m","usage":{"input_tokens":3,"output_tokens":4}} `,
		`{"TYPE":"message","Model":"m","USAGE":{"input_tokens":1}}`,
		`{"type":"message","usage":{"input_tokens":1},"usage":{"output_tokens":2}}`,
		`{"type":"message","usage":{"input_tokens":1},"usage":null}`,
		`{"type":"message","usage":null,"usage":{"cache_creation":{"ephemeral_5m_input_tokens":5}}}`,
		`{"type":"message","type":"error","usage":{}}`,
		`{"type":"mess\u0061ge","mod\u0065l":"m\u00e9","usag\u0065":{}}`,
		`{"\u0074ype":"message","usage":{},"content":[{"type":"text","text":"\ud800"}]}`,
		`{"type":"message","usage":{}}x`,
		`{"type":"message","usage":{},}`,
		`{"type":5,"usage":{}}`,
		`{"type":"message","model":null,"usage":{"input_tokens":-1}}`,
		`{"type":"message","usage":{"input_tokens":"1"}}`,
		`{"ſtype":"message","usage":{}}`,
		`{"type":"meſſage","usage":{}}`,
		`[{"type":"message","usage":{}}]`,
		`null`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		model, u, ok := MessageUsage(body)
		wm, wu, wok := messageUsageReference(body)
		if model != wm || u != wu || ok != wok {
			t.Fatalf("MessageUsage(%q) = %q, %+v, %v; json.Unmarshal reads %q, %+v, %v", body, model, u, ok, wm, wu, wok)
		}
	})
}

// FuzzBypassReason: the never-replay rule reads any body without panicking, and agrees with
// encoding/json about what a Responses body's top-level members say.
func FuzzBypassReason(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-5","store":false,"input":"x"}`, `{"store":false,"previous_response_id":"r"}`,
		`{"store":false,"conversation":{"id":"c"}}`, `{"store":false,"background":true}`,
		`{"st\u006fre":false}`, `{"store":false,"store":true}`, `[]`, `{`, `{"store":false} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		why := bypassReason(APIResponses, body)
		bypassReason(APIChat, body)
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			return
		}
		given := func(k string) bool { v, ok := m[k]; return ok && string(v) != "null" }
		want := ""
		switch {
		case given("previous_response_id"):
			want = bypassPreviousResponse
		case given("conversation"):
			want = bypassConversation
		case string(m["background"]) == "true":
			want = bypassBackground
		case string(m["store"]) != "false":
			want = bypassStore
		}
		// Decoded into a map, keys match exactly and the last of repeated members wins, as
		// in the rule.
		if why != want {
			t.Fatalf("bypassReason(%q) = %q, encoding/json says %q", body, why, want)
		}
	})
}

// FuzzOpenAIUsage: the OpenAI response readers never panic and never report negative counts.
func FuzzOpenAIUsage(f *testing.F) {
	for _, s := range []string{
		`{"object":"response","status":"completed","model":"gpt-5","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1}}}`,
		`{"object":"chat.completion","model":"gpt-5","usage":{"prompt_tokens":-1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":9}}}`,
		"event: response.completed\ndata: {\"response\":{\"status\":\"completed\",\"usage\":{}}}\n\n",
		"data: {\"object\":\"chat.completion.chunk\",\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, api := range []API{APIResponses, APIChat} {
			for _, stream := range []bool{false, true} {
				_, u, ok := responseUsage(api, stream, body)
				if ok && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.Reasoning < 0 || u.Reasoning > u.Output) {
					t.Fatalf("%s stream %v: usage %+v", api, stream, u)
				}
			}
		}
	})
}

// FuzzKeyBody: leaving the ignored members out never panics, and what is left is the body's
// JSON object without them (and, for Responses, without its input messages' ids), every
// other member as it was (encoding/json's view).
func FuzzKeyBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-5","prompt_cache_key":"k","input":"x"}`, `{"prompt_cache_key":"k"}`,
		`{"client_metadata":{"a":1},"prompt_cache_key":"k","store":false}`, `{"a":1 , "prompt_cache_key" : "k" }`,
		`{"prompt_cache_k\u0065y":1,"b":[1,2]}`, `{"prompt_cache_key":1,"prompt_cache_key":2}`, `[]`, `{`,
		`{"input":[{"id":"msg_1","type":"message","role":"user","content":"hi"},{"type":"function_call","id":"fc_1","call_id":"c"},3]}`,
		`{"input":[{"type":"message","id":"a"} , {"role":"user","id":"b"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, api := range []API{APIResponses, APIChat} {
			out := keyBody(api, body)
			var in, got map[string]json.RawMessage
			if json.Unmarshal(body, &in) != nil {
				return
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("keyBody(%s, %q) = %q, not a JSON object: %v", api, body, out, err)
			}
			if bytes.Equal(out, body) {
				continue // unchanged (for one it could not read, too)
			}
			for _, k := range keyIgnored {
				delete(in, k)
			}
			var items []json.RawMessage
			if api == APIResponses && json.Unmarshal(in["input"], &items) == nil {
				var gotItems []json.RawMessage
				if err := json.Unmarshal(got["input"], &gotItems); err != nil || len(gotItems) != len(items) {
					t.Fatalf("keyBody(%q) = %q: input items %v", body, out, err)
				}
				for i, raw := range items {
					var it, gotIt map[string]json.RawMessage
					if json.Unmarshal(raw, &it) != nil {
						if !bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(gotItems[i])) {
							t.Fatalf("keyBody(%q) = %q: input[%d] changed", body, out, i)
						}
						continue
					}
					json.Unmarshal(gotItems[i], &gotIt)
					if string(it["type"]) == `"message"` {
						delete(it, "id")
					}
					if len(it) != len(gotIt) {
						t.Fatalf("keyBody(%q) = %q: input[%d] has %d members, want %d", body, out, i, len(gotIt), len(it))
					}
				}
				delete(in, "input")
				delete(got, "input")
			}
			if len(in) != len(got) {
				t.Fatalf("keyBody(%q) = %q: members %d, want %d", body, out, len(got), len(in))
			}
			for k, v := range in {
				if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
					t.Fatalf("keyBody(%q) = %q: %s is %s, want %s", body, out, k, got[k], v)
				}
			}
		}
	})
}
