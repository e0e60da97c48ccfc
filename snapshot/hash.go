package snapshot

import "github.com/agent-rewind/rewind/snapshot/internal/objects"

// Hash is a SHA-256 digest: the name of an object (file content) or of a manifest. Its text
// form is 64 lowercase hex digits (String, MarshalText).
type Hash = objects.Hash

// ParseHash decodes 64 lowercase hex digits.
func ParseHash(s string) (Hash, error) { return objects.ParseHash(s) }
