package agents

import (
	"os"
	"path/filepath"
)

// TranscriptsVar names a folder to copy each session's own transcript into, as the client wrote
// it (<folder>/<client>-<version>/<file>): testdata/transcripts is made so, for the
// conversation rewind that reads these formats.
const TranscriptsVar = "REWIND_AGENTS_TRANSCRIPTS"

// KeepTranscript copies the transcript file src under TranscriptsVar's folder as
// <client>-<version>/<base name of src>, when the variable is set.
func (e *Env) KeepTranscript(clientVersion, src string) {
	e.T.Helper()
	out := os.Getenv(TranscriptsVar)
	if out == "" {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		e.T.Errorf("the session's transcript: %v", err)
		return
	}
	dst := filepath.Join(out, clientVersion, filepath.Base(src))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		e.T.Fatal(err)
	}
}
