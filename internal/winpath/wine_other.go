//go:build !windows

package winpath

// UnderWine is false off Windows.
func UnderWine() bool { return false }
