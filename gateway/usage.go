package gateway

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Usage is what one response reports it consumed, in tokens by billing kind. Input is the
// prompt's uncached part; for OpenAI responses CacheRead is its cached part and Reasoning the
// part of Output spent reasoning (billed as output: it is counted in Output too).
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning,omitempty"`
	// Unmetered: the response reported no usage (a Chat Completions stream whose request did
	// not set stream_options.include_usage); its replay is counted as unpriced.
	Unmetered bool `json:"-"`
	// CacheWrite5m and CacheWrite1h split CacheWrite by cache lifetime when the response
	// said how (usage.cache_creation); CacheWriteSplit is then true.
	CacheWrite5m    int64 `json:"-"`
	CacheWrite1h    int64 `json:"-"`
	CacheWriteSplit bool  `json:"-"`
}

func (u *Usage) add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.Reasoning += v.Reasoning
}

// wireUsage is the API's usage object. Pointers tell an absent count (a message_delta carries
// only some) from zero.
type wireUsage struct {
	Input         *int64 `json:"input_tokens"`
	Output        *int64 `json:"output_tokens"`
	CacheCreate   *int64 `json:"cache_creation_input_tokens"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *struct {
		M5 int64 `json:"ephemeral_5m_input_tokens"`
		H1 int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

// apply overwrites u's counts with those w has. Negative counts are ignored: no provider
// sends them, and a receipt must never subtract.
func (w *wireUsage) apply(u *Usage) {
	set := func(dst *int64, v *int64) {
		if v != nil && *v >= 0 {
			*dst = *v
		}
	}
	set(&u.Input, w.Input)
	set(&u.Output, w.Output)
	set(&u.CacheWrite, w.CacheCreate)
	set(&u.CacheRead, w.CacheRead)
	if c := w.CacheCreation; c != nil && c.M5 >= 0 && c.H1 >= 0 {
		u.CacheWrite5m, u.CacheWrite1h, u.CacheWriteSplit = c.M5, c.H1, true
	}
}

// MessageUsage reads a non-streaming Messages response body: ok when it is a complete
// message object ("type": "message") with a usage object. It runs on every response the
// gateway records, so it decodes only the three members it reads, by encoding/json's rules
// (keys matched without regard to case, the last of repeated members winning, a usage object
// repeated merged into the first); the content, most of the bytes, is validated and skipped.
// FuzzMessageUsage holds it to json.Unmarshal of the whole body.
func MessageUsage(body []byte) (model string, u Usage, ok bool) {
	var typ string
	var usage *wireUsage
	o, err := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	if err != nil {
		return "", Usage{}, false // not an object: not a message
	}
	var buf [16]byte
	for o.Next() {
		key := o.Key()
		if o.KeyEscaped() {
			key = jsonscan.AppendUnquoted(buf[:0], key)
		} else {
			key = key[1 : len(key)-1]
		}
		var dst any
		switch {
		case bytes.EqualFold(key, []byte("type")):
			dst = &typ
		case bytes.EqualFold(key, []byte("model")):
			dst = &model
		case bytes.EqualFold(key, []byte("usage")):
			dst = &usage
		default:
			continue
		}
		end, err := jsonscan.SkipValue(body, o.Value(), o.Depth())
		if err != nil {
			return "", Usage{}, false
		}
		o.Consumed(end)
		v := body[o.Value():end]
		if s, ok := dst.(*string); ok && plainString(v) {
			*s = string(v[1 : len(v)-1])
		} else if json.Unmarshal(v, dst) != nil {
			return "", Usage{}, false
		}
	}
	if o.Err() != nil || jsonscan.SkipSpace(body, o.End()) != len(body) || typ != "message" || usage == nil {
		return "", Usage{}, false
	}
	usage.apply(&u)
	return model, u, true
}

// plainString reports whether the JSON value v is a string that decodes to its bytes between
// the quotes: no escapes, valid UTF-8 (encoding/json replaces invalid bytes).
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	inner := v[1 : len(v)-1]
	return bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
}

// StreamUsage reads a Messages server-sent event stream: complete is true only when the
// stream's last event is message_stop and a message_start came before it (a stream cut
// short, or ending in an error event, is not complete). The usage is message_start's,
// updated by the cumulative counts of each message_delta.
func StreamUsage(body []byte) (model string, u Usage, complete bool) {
	started, last := false, ""
	forEachEvent(body, func(name string, data []byte) {
		if name == "" { // the API names every event; fall back to the data's type
			var t struct {
				Type string `json:"type"`
			}
			json.Unmarshal(data, &t)
			name = t.Type
		}
		last = name
		switch name {
		case "message_start":
			var ev struct {
				Message struct {
					Model string     `json:"model"`
					Usage *wireUsage `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(data, &ev) == nil {
				started = true
				model = ev.Message.Model
				if ev.Message.Usage != nil {
					ev.Message.Usage.apply(&u)
				}
			}
		case "message_delta":
			var ev struct {
				Usage *wireUsage `json:"usage"`
			}
			if json.Unmarshal(data, &ev) == nil && ev.Usage != nil {
				ev.Usage.apply(&u)
			}
		}
	})
	return model, u, started && last == "message_stop"
}

// forEachEvent splits a server-sent event stream into events (the WHATWG EventSource
// format: lines end in "\n", "\r\n" or "\r"; a blank line ends an event; "event:" names it;
// "data:" lines are joined with "\n"; lines starting with ':' are comments) and calls fn for
// each event that has data. An unterminated last event is not dispatched, as in a browser.
func forEachEvent(body []byte, fn func(name string, data []byte)) {
	var name string
	var data []byte
	hasData := false
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			return // an unterminated line: the stream was cut
		}
		line := body[:i]
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			body = body[i+2:]
		} else {
			body = body[i+1:]
		}
		if len(line) == 0 {
			if hasData {
				fn(name, data)
			}
			name, data, hasData = "", data[:0], false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
}
