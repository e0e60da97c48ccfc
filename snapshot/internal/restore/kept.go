package restore

// Kept is a path a restore left alone, and why.
type Kept struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Live is set on a path that was in use: not captured by the safety checkpoint (a socket, a
	// file that kept changing), or changed or created after it, during the restore. The restore
	// did not change it, so nothing of it was lost; the target's version of it was not restored.
	// Running the same restore again once nothing writes to it restores that version (the state
	// it has then is checkpointed first, like any other).
	Live bool `json:"live,omitempty"`
}
