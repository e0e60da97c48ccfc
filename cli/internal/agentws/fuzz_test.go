package agentws_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
)

// FuzzParseMemory: any bytes parse without panicking into notes, a torn offset, or a
// *MemoryError; a torn offset is at a line start and leaves no newline after it; and the notes
// of the complete lines parse the same again.
func FuzzParseMemory(f *testing.F) {
	line := `{"format":1,"time":"2026-01-02T03:04:05.5Z","checkpoint":"0123456789ab","what_failed":"x","lesson":"y","seq":3}` + "\n"
	for _, seed := range []string{
		"", line, line + line, line + line[:40], "\n", "{}\n", "null\n", "[]\n",
		`{"format":2,"time":"2026-01-02T03:04:05Z","checkpoint":"0123456789ab","what_failed":"x","lesson":"","seq":0}` + "\n",
		`{"format":1,"time":"2026-01-02T03:04:05Z","checkpoint":"0123456789ab","what_failed":"x","lesson":"","seq":0,"extra":1}` + "\n",
		`{"format":1,"time":"2026-01-02T03:04:05Z","checkpoint":"0123456789ab","what_failed":"x","lesson":"","seq":0} {}` + "\n",
		`{"format":1,"time":"2026-01-02T03:04:05Z","checkpoint":"0123456789AB","what_failed":"x","lesson":"","seq":-1}` + "\n",
		"\xff\xfe\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		notes, torn, err := agentws.ParseMemory(data)
		if err != nil {
			if !errors.Is(err, agentws.ErrDamagedMemory) {
				t.Fatalf("error %v does not match ErrDamagedMemory", err)
			}
			return
		}
		complete := data
		if torn >= 0 {
			if torn > int64(len(data)) || (torn > 0 && data[torn-1] != '\n') || bytes.IndexByte(data[torn:], '\n') >= 0 {
				t.Fatalf("torn offset %d in %q", torn, data)
			}
			complete = data[:torn]
		}
		again, torn2, err := agentws.ParseMemory(complete)
		if err != nil || torn2 != -1 || len(again) != len(notes) {
			t.Fatalf("complete lines parse differently: %d notes, torn %d, %v", len(again), torn2, err)
		}
		for _, n := range notes {
			if n.WhatFailed == "" || len(n.Checkpoint) != 12 || n.Seq < 0 || n.Time.IsZero() {
				t.Fatalf("accepted an invalid note %+v", n)
			}
		}
	})
}
