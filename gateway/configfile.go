package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agent-rewind/rewind/internal/regular"
)

// maxConfigFile bounds the configuration file: it is a handful of fields and a price table.
const maxConfigFile = 1 << 20

// fileFields are the configuration file's fields, in the order the error message lists them.
var fileFields = []string{"profile", "host", "port", "upstream", "preserveCache", "pruneContext", "tenant", "storage", "storageDirectory", "epoch", "replayCursor", "databaseUrl", "tlsCert", "tlsKey", "metricsListen", "prices"}

// configFile is a parsed configuration file: each present field's raw JSON value.
type configFile struct {
	path   string
	fields map[string]json.RawMessage
}

// readConfigFile reads and checks the configuration file at path.
func readConfigFile(path, from string) (*configFile, error) {
	f, err := regular.OpenInput(path)
	if err != nil {
		return nil, configErr(from, "cannot read the configuration file: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, configErr(from, "the configuration file %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, configErr(from, "cannot read the configuration file: %v", err)
	}
	cf, err := parseConfigFile(data, path)
	if err != nil {
		return nil, err
	}
	return cf, nil
}

// parseConfigFile checks the file's shape: one JSON object, known fields, each once, none
// null. The values' types are checked as each is applied.
func parseConfigFile(data []byte, path string) (*configFile, error) {
	at := path
	if len(data) > maxConfigFile {
		return nil, configErr(at, "the configuration file is larger than %d bytes", maxConfigFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, configErr(at, "the configuration file must be one JSON object, like {\"profile\":\"lean\",\"port\":8788}")
	}
	cf := &configFile{path: path, fields: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, configErr(at, "not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, configErr(at, "not valid JSON at field %q: %v", key, err)
		}
		if !knownField(key) {
			return nil, configErr(at, "unknown field %q: the fields are %s", key, strings.Join(fileFields, ", "))
		}
		if _, dup := cf.fields[key]; dup {
			return nil, configErr(at+": "+key, "the field is given twice: give it once")
		}
		if string(raw) == "null" {
			return nil, configErr(at+": "+key, "explicit null: omit the field to use its default")
		}
		cf.fields[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, configErr(at, "not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, configErr(at, "data after the configuration object: the file must hold one JSON object")
	}
	return cf, nil
}

func knownField(k string) bool {
	for _, f := range fileFields {
		if f == k {
			return true
		}
	}
	return false
}

// text returns a field's value as the text the shared parsers take: a JSON string's content
// for a string field, "true"/"false" for a boolean, the digits for an integer. A value of
// the wrong JSON type is an error.
func (cf *configFile) text(field string, kind valueKind) (string, bool, error) {
	raw, ok := cf.fields[field]
	if !ok {
		return "", false, nil
	}
	from := cf.path + ": " + field
	switch kind {
	case kindBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return "", false, configErr(from, "must be the JSON boolean true or false, not %s", short(raw))
		}
		return fmt.Sprint(b), true, nil
	case kindInt:
		var n json.Number
		if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil || strings.ContainsAny(n.String(), ".eE") {
			return "", false, configErr(from, "must be a JSON integer, not %s", short(raw))
		}
		return n.String(), true, nil
	default:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false, configErr(from, "must be a JSON string, not %s", short(raw))
		}
		if s == "" {
			return "", false, configErr(from, "is empty: give a value, or omit the field to use its default")
		}
		return s, true, nil
	}
}

// prices returns the file's "prices" table.
func (cf *configFile) prices() (PriceTable, error) {
	raw, ok := cf.fields["prices"]
	if !ok {
		return nil, nil
	}
	from := cf.path + ": prices"
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, configErr(from, `must be an object of model id to price, like {"claude-sonnet-5-5": {"input": 2, "output": 10, "cache_write_5m": 2.5, "cache_write_1h": 4, "cache_read": 0.1}} (US dollars per million tokens)`)
	}
	out := PriceTable{}
	for model, pr := range m {
		at := fmt.Sprintf("%s[%q]", from, model)
		if model == "" || len(model) > 128 {
			return nil, configErr(at, "a model id must be 1 to 128 characters")
		}
		var p struct {
			Input, Output, CacheWrite5m, CacheWrite1h, CacheRead *float64
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(pr, &fields) != nil {
			return nil, configErr(at, "must be an object with input, output, cache_write_5m, cache_write_1h and cache_read")
		}
		targets := map[string]**float64{"input": &p.Input, "output": &p.Output, "cache_write_5m": &p.CacheWrite5m, "cache_write_1h": &p.CacheWrite1h, "cache_read": &p.CacheRead}
		for k, v := range fields {
			dst, ok := targets[k]
			if !ok {
				return nil, configErr(at, "unknown field %q: a price has input, output, cache_write_5m, cache_write_1h and cache_read", k)
			}
			var f float64
			if string(v) == "null" || json.Unmarshal(v, &f) != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, configErr(at+"."+k, "must be a non-negative number of US dollars per million tokens, not %s", short(v))
			}
			*dst = &f
		}
		for k, dst := range targets {
			if *dst == nil {
				return nil, configErr(at, "%s is missing: give all five prices (input, output, cache_write_5m, cache_write_1h, cache_read)", k)
			}
		}
		out[model] = Price{Input: *p.Input, Output: *p.Output, CacheWrite5m: *p.CacheWrite5m, CacheWrite1h: *p.CacheWrite1h, CacheRead: *p.CacheRead}
	}
	return out, nil
}

// short quotes at most 40 bytes of a raw value for an error message.
func short(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}
