package agentconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
)

// What setup added to a client's file is recorded outside it, in the state folder
// (<state>/setup/<hash of the file's path>.json), one record per file: --remove takes out
// exactly that, and a second setup replaces its own earlier entries rather than adding them
// twice. A record is written before the file it describes gains entries, and after it loses
// them, so that a crash in between leaves at worst a record of entries that are gone (which
// --remove skips), never entries no record knows.

// Record is what setup added to one file.
type Record struct {
	File    string     `json:"file"`
	Created bool       `json:"created,omitempty"` // setup made the file: --remove deletes it once nothing else is in it
	Dirs    []string   `json:"dirs,omitempty"`    // folders setup made for it, outermost first
	JSON    []addition `json:"json,omitempty"`    // formatJSON: members and elements added
	Blocks  []Block    `json:"blocks,omitempty"`  // formatTOML: tables appended, as text
	// Replaced are what setup took out to put its own in their place: agent-rewind's entries
	// not written by setup (copied by hand, edited since): --remove puts them back.
	Replaced []addition `json:"replaced,omitempty"`
	Script   string     `json:"script,omitempty"` // formatScript: the content written, whole
	// Original is a script of agent-rewind's setup replaced (formatScript), put back by --remove.
	Original string   `json:"original,omitempty"`
	Mode     uint32   `json:"mode,omitempty"`    // formatScript: the file's mode
	Clients  []string `json:"clients,omitempty"` // the clients whose setup wrote it
}

// Block is a table setup appended to a TOML file.
type Block struct {
	Kind string `json:"kind"`          // "mcp" (the MCP server's table), "trust" (a hook's trusted_hash), "replaced" (a table setup took out)
	For  string `json:"for,omitempty"` // trust: the hooks file the hook is in
	Text string `json:"text"`
}

func (r *Record) empty() bool {
	return len(r.JSON) == 0 && len(r.Blocks) == 0 && r.Script == "" && len(r.Replaced) == 0 && r.Original == ""
}

// records is the folder of setup's records.
type records string

func (rs records) path(file string) string {
	sum := sha256.Sum256([]byte(file))
	return filepath.Join(string(rs), hex.EncodeToString(sum[:])[:32]+".json")
}

// load returns the record of file (an empty one when there is none).
func (rs records) load(file string) (*Record, error) {
	b, err := os.ReadFile(rs.path(file))
	if errors.Is(err, os.ErrNotExist) {
		return &Record{File: file}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("setup's record of %s: %w", file, err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || r.File != file {
		return nil, fmt.Errorf("setup's record of %s (%s) is damaged (%v): move it away to continue; setup then no longer knows what it added to that file", file, rs.path(file), err)
	}
	return &r, nil
}

// save writes r durably, or removes it when it records nothing.
func (rs records) save(r *Record) error {
	p := rs.path(r.File)
	if r.empty() {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return durable.Remove(p)
	}
	if err := durable.MkdirAll(string(rs), 0o700); err != nil {
		return fmt.Errorf("setup's records folder: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(p, append(b, '\n'), 0o600)
}
