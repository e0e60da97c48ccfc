package watch

import (
	"strconv"
	"strings"
)

// parseToken splits "<id>:<n>".
func parseToken(tok string) (id string, n uint64, ok bool) {
	id, num, ok := strings.Cut(tok, ":")
	if !ok || id == "" {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return id, n, err == nil
}
