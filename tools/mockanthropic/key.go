package mockanthropic

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNotObject reports a request or response body that is not one JSON object.
var ErrNotObject = errors.New("mockanthropic: body is not a JSON object")

// RequestKey returns the hex SHA-256 of body's canonical JSON with its top-level "stream"
// member removed: the key recordings are matched by.
func RequestKey(body []byte) (string, error) {
	m, err := decodeObject(body)
	if err != nil {
		return "", err
	}
	delete(m, "stream")
	canon, err := json.Marshal(m) // maps marshal with sorted keys; numbers keep their text
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// decodeObject decodes one JSON object, keeping numbers as written.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: null", ErrNotObject)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the object", ErrNotObject)
	}
	return m, nil
}

// streaming reports whether body asks for a stream ("stream": true).
func streaming(m map[string]any) bool {
	v, ok := m["stream"].(bool)
	return ok && v
}
