package walk

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"unicode/utf8"
)

// ShortPath shortens a path for a message: a path near the system's 4 KB limit printed whole
// buries the message. The start and the end stay, which locate it; the middle becomes a count.
func ShortPath(p string) string {
	const keep = 60
	if len(p) <= 2*keep+30 {
		return p
	}
	i, j := keep, len(p)-keep
	for i > 0 && !utf8.RuneStart(p[i]) {
		i--
	}
	for j < len(p) && !utf8.RuneStart(p[j]) {
		j++
	}
	return p[:i] + "…(" + strconv.Itoa(j-i) + " bytes, " + strconv.Itoa(len(p)) + " in all)…" + p[j:]
}

// ReadAdvice says what to do about a path the walk cannot read. A path longer than the system
// allows cannot be made readable, only left out.
func ReadAdvice(err error) string {
	if errors.Is(err, syscall.ENAMETOOLONG) {
		return fmt.Sprintf("the path is longer than this system allows: list it, or a folder above it, in %s", IgnoreFile)
	}
	return fmt.Sprintf("make it readable, or list it in %s", IgnoreFile)
}
