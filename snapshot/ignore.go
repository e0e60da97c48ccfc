package snapshot

import "github.com/agent-rewind/rewind/snapshot/internal/walk"

// IgnoreFile is the name of the exclusion file at the workspace root.
const IgnoreFile = walk.IgnoreFile

// Ignore is a parsed .rewindignore: gitignore syntax, as documented in gitignore(5), for one file
// at the workspace root (nested .rewindignore files are ordinary files). Supported: comments (#),
// blank lines, trailing-space trimming with "\ " escapes, negation (!), directory-only patterns
// (trailing /), anchoring (a slash at the start or in the middle), "*", "?", "[...]" classes with
// "!" or "^" negation and ranges, backslash escapes, and "**" as a leading "**/", a trailing "/**"
// or a middle "/**/". POSIX character classes ([:alpha:]) are not supported: such a class never
// matches. As in git, a path inside an excluded directory cannot be re-included.
type Ignore = walk.Ignore

// ParseIgnore parses the contents of a .rewindignore file. Every line is valid gitignore syntax
// (a malformed pattern simply matches nothing), so parsing never fails.
func ParseIgnore(data []byte) *Ignore { return walk.ParseIgnore(data) }
