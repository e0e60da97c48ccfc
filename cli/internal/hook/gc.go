package hook

import (
	"os"
	"runtime/debug"
)

// TuneGC lets the heap grow to five times its live size between collections (GOGC=400) unless
// GOGC is set: a command lives for a fraction of a second, and a checkpoint's walk allocates
// an entry per path, which at the default spends about a fifth of a no-change checkpoint's CPU
// time collecting (perf stat, 20,000 files). A soft memory limit of 1 GiB brings collections
// back before a very large workspace could make that costly in memory.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(400)
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(1 << 30)
	}
}
