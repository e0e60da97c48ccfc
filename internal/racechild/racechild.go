package racechild

import "os"

// Quiet sets GORACE=atexit_sleep_ms=0 in this process's environment, which every child it
// starts inherits, unless GORACE is set already.
func Quiet() {
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
}
