package barrier

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// entry is one recorded chain entry, as the test Recorders keep it.
type entry struct {
	Seq  int64           `json:"seq"`
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// memRecorder is the in-process Recorder of unit tests: the module's own seam.
type memRecorder struct {
	mu      sync.Mutex
	entries []entry
	fail    error // when set, Record fails with it
}

func (m *memRecorder) Record(kind string, data any) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	b, err := json.Marshal(data)
	if err != nil {
		return 0, err
	}
	if !bytes.HasPrefix(b, []byte("{")) {
		return 0, errors.New("data is not a JSON object")
	}
	seq := int64(len(m.entries)) // 0-based, as on the chain: the first entry is seq 0
	m.entries = append(m.entries, entry{seq, kind, b})
	return seq, nil
}

func (m *memRecorder) kinds() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.entries {
		out = append(out, e.Kind)
	}
	return out
}

// fileRecorder is the Recorder of the real-process tests: a JSON-lines file shared by every
// process, appended under flock, whose seq is the 0-based line number, as on the chain. It stands in for the chain.
type fileRecorder struct{ path string }

func (r fileRecorder) Record(kind string, data any) (int64, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := lockfile.Lock(f, lockfile.Exclusive); err != nil {
		return 0, err
	}
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	line, _ := json.Marshal(entry{Seq: n, Kind: kind, Data: b})
	if _, err := f.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return n, nil
}

func readEntries(t *testing.T, path string) []entry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		t.Fatal(err)
	}
	var out []entry
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("chain stand-in line %q: %v", line, err)
		}
		out = append(out, e)
	}
	for i, e := range out {
		if e.Seq != int64(i) {
			t.Fatalf("entry %d has seq %d: the file recorder lost its order", i+1, e.Seq)
		}
	}
	return out
}
