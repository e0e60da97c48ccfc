package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/agent-rewind/rewind/internal/regular"
)

// maxLine is the longest line read; a longer one is where the read stops.
const maxLine = 1 << 20

// Read returns the values of the log at path, oldest first, keeping those that parse and that
// keep accepts (nil keeps all). A missing log is no values. path must be a regular file
// (regular.ReadFile).
func Read[T any](path string, keep func(*T) bool) ([]T, error) {
	b, err := regular.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var v T
		if json.Unmarshal(sc.Bytes(), &v) == nil && (keep == nil || keep(&v)) {
			out = append(out, v)
		}
	}
	return out, nil
}
