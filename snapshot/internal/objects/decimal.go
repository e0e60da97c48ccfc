package objects

// ParseCanonicalInt parses a non-negative decimal without sign or leading zeros, so that every
// number has exactly one encoding.
func ParseCanonicalInt(s string) (int64, bool) {
	if s == "" || len(s) > 18 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}
