package check

// Options chooses how deep a check looks and whether it repairs.
type Options struct {
	// ReadData re-hashes every stored content a checkpoint needs, reading the whole store;
	// without it a content is only checked to exist with the size its manifest gives.
	ReadData bool
	// Repair fixes what can be fixed without losing anything, rebuilding before it moves
	// anything aside: a pack's lost index is written back (packindex.go), a missing or damaged
	// content that a workspace file still has is stored again from it (a damaged copy is moved
	// aside to quarantine/), a stat cache that is damaged or vouches wrongly is dropped (the next
	// checkpoint rebuilds it), and files left by interrupted writes are moved aside to
	// quarantine/. Nothing a checkpoint needs is ever removed.
	Repair bool
}

// Report is what a check found, section by section (FORMAT.md, "Check").
type Report struct {
	Sections []Section `json:"sections"`
}

// Section is one part of the store and what was wrong with it.
type Section struct {
	Name     string    `json:"name"`     // "checkpoints", "manifests", "objects", "packs", "position", "statCache", "leftovers"
	Checked  int       `json:"checked"`  // items checked: files, manifests, contents, entries
	Problems []Problem `json:"problems"` // never nil
}

// Problem is one thing a check found wrong: what, where, and what to do.
type Problem struct {
	Kind        string   `json:"kind"`                  // stable identifier, see FORMAT.md "Check"
	Where       string   `json:"where"`                 // the file, relative to the state directory
	Path        string   `json:"path,omitempty"`        // the workspace path concerned, if any
	What        string   `json:"what"`                  // what is wrong
	Fix         string   `json:"fix"`                   // what to do
	Checkpoints []string `json:"checkpoints,omitempty"` // the checkpoints it affects
	Repaired    bool     `json:"repaired"`              // Repair fixed it
	// Benign: it harms nothing and goes by itself (a leftover the next writer or gc removes):
	// reported, but no reason for check to fail.
	Benign bool `json:"benign,omitempty"`
}
