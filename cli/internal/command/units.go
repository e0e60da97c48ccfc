package command

import (
	"github.com/agent-rewind/rewind/cli/internal/hook"
	"strconv"
	"time"
	"unicode/utf8"
)

// byteSize formats n bytes for people (hook.ByteSize, which the hook's notes use too).
var byteSize = hook.ByteSize

// count formats n with thousands separators: 50000 -> "50,000".
func count[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// plural returns "1 file" or "3 files".
func plural[T int | int64](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}

// timeFormat is how times are shown to people, in the local time zone.
const timeFormat = "2006-01-02 15:04:05"

// localTime formats t for people.
func localTime(t time.Time) string { return t.Local().Format(timeFormat) }

// printable returns s as it is, or quoted (Go syntax) when it holds a control character: a
// file name must not move the cursor or recolour a person's terminal.
func printable(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}
