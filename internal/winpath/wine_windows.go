package winpath

import "syscall"

// UnderWine reports whether this process runs under Wine rather than Windows (Wine's ntdll
// exports wine_get_version): tests of what Wine does not stand for skip there, saying so.
func UnderWine() bool {
	ntdll, err := syscall.LoadDLL("ntdll.dll")
	if err != nil {
		return false
	}
	_, err = ntdll.FindProc("wine_get_version")
	return err == nil
}
