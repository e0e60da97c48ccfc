package walk

import (
	"crypto/sha256"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// IgnoreFile is the name of the exclusion file at the workspace root.
const IgnoreFile = ".rewindignore"

// Ignore is a parsed .rewindignore: gitignore syntax, as documented in gitignore(5), for one file
// at the workspace root (nested .rewindignore files are ordinary files). Supported: comments (#),
// blank lines, trailing-space trimming with "\ " escapes, negation (!), directory-only patterns
// (trailing /), anchoring (a slash at the start or in the middle), "*", "?", "[...]" classes with
// "!" or "^" negation and ranges, backslash escapes, and "**" as a leading "**/", a trailing "/**"
// or a middle "/**/". POSIX character classes ([:alpha:]) are not supported: such a class never
// matches. As in git, a path inside an excluded directory cannot be re-included.
type Ignore struct {
	rules []ignoreRule
	src   objects.Hash // sha256 of the text parsed: names the rules (the snapshot package's treecache.go)
}

type ignoreRule struct {
	negate   bool
	dirOnly  bool
	anchored bool     // matched against the whole path; otherwise against the base name
	segs     []string // the pattern split at "/"; "**" is a segment of its own
}

// ParseIgnore parses the contents of a .rewindignore file. Every line is valid gitignore syntax
// (a malformed pattern simply matches nothing), so parsing never fails.
func ParseIgnore(data []byte) *Ignore {
	m := &Ignore{src: objects.Hash(sha256.Sum256(data))}
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		line = trimTrailingSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		if line[0] == '!' {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		for seg := range strings.SplitSeq(line, "/") {
			if seg == "" {
				continue // "a//b" means "a/b"
			}
			if seg == "**" && len(r.segs) > 0 && r.segs[len(r.segs)-1] == "**" {
				continue
			}
			r.segs = append(r.segs, seg)
		}
		if len(r.segs) == 0 {
			continue
		}
		m.rules = append(m.rules, r)
	}
	return m
}

// trimTrailingSpace removes trailing spaces unless escaped with a backslash.
func trimTrailingSpace(s string) string {
	for strings.HasSuffix(s, " ") {
		t := s[:len(s)-1]
		// Count the backslashes before the space: an odd number escapes it.
		n := 0
		for i := len(t) - 1; i >= 0 && t[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			return s
		}
		s = t
	}
	return s
}

// Match reports whether path (slash-separated, relative to the root) is excluded by the rules,
// assuming none of its parent directories is excluded: the last matching rule decides, and a
// negated rule re-includes. A nil *Ignore excludes nothing.
func (m *Ignore) Match(path string, isDir bool) bool {
	if m == nil || len(m.rules) == 0 {
		return false
	}
	segs := strings.Split(path, "/")
	for i := len(m.rules) - 1; i >= 0; i-- {
		r := &m.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.matches(segs) {
			return !r.negate
		}
	}
	return false
}

// Excluded reports whether path is excluded, itself or through any parent directory.
func (m *Ignore) Excluded(path string, isDir bool) bool {
	if m == nil || len(m.rules) == 0 {
		return false
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && m.Match(path[:i], true) {
			return true
		}
	}
	return m.Match(path, isDir)
}

func (r *ignoreRule) matches(segs []string) bool {
	if !r.anchored {
		return globSegment(r.segs[0], segs[len(segs)-1])
	}
	return matchSegments(r.segs, segs)
}

// matchSegments matches pattern segments against path segments; "**" matches zero or more whole
// segments, except at the end, where it matches one or more ("a/**" is what is inside a).
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		if len(pat) == 1 {
			return len(segs) >= 1
		}
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 || !globSegment(pat[0], segs[0]) {
		return false
	}
	return matchSegments(pat[1:], segs[1:])
}

// globSegment matches one path segment (no "/") against a glob: "*" any run, "?" one byte,
// "[...]" a class, "\x" the byte x. It backtracks only to the last "*", so it is linear-ish.
func globSegment(pat, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, -1
	for nx < len(name) || px < len(pat) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					px++
					nx++
					continue
				}
			case '[':
				if nx < len(name) {
					ok, width := matchClass(pat[px:], name[nx])
					if width > 0 && ok {
						px += width
						nx++
						continue
					}
					if width == 0 {
						return false // an unterminated class never matches, as in git
					}
				}
			case '\\':
				if px+1 < len(pat) && nx < len(name) && pat[px+1] == name[nx] {
					px += 2
					nx++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			starNx++
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// matchClass matches byte c against the class at the start of pat ("[...]"). It returns whether c
// is in the class and the class's width in pat; width 0 means the class is not terminated.
func matchClass(pat string, c byte) (bool, int) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	matched := false
	first := true
	for i < len(pat) {
		if pat[i] == ']' && !first {
			return matched != negate, i + 1
		}
		first = false
		if pat[i] == '[' && i+1 < len(pat) && pat[i+1] == ':' {
			// A POSIX class: skip to ":]" and never match it.
			end := strings.Index(pat[i+2:], ":]")
			if end < 0 {
				return false, 0
			}
			i += 2 + end + 2
			continue
		}
		lo := pat[i]
		if lo == '\\' && i+1 < len(pat) {
			i++
			lo = pat[i]
		}
		i++
		hi := lo
		if i+1 < len(pat) && pat[i] == '-' && pat[i+1] != ']' {
			hi = pat[i+1]
			if hi == '\\' && i+2 < len(pat) {
				hi = pat[i+2]
				i++
			}
			i += 2
		}
		if lo <= c && c <= hi {
			matched = true
		}
	}
	return false, 0
}

// Key names the rules by the text they were parsed from: equal text, equal rules. No file and an
// empty file exclude the same (nothing).
func (m *Ignore) Key() objects.Hash {
	if m == nil {
		return objects.Sum(nil)
	}
	return m.src
}
