package hook

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sizes as people write and read them: AutoLimitEnv's setting, the hook's notes.

// ParseSize reads a byte count with an optional unit: B, KB, MB, GB, TB (powers of 1000), KiB,
// MiB, GiB, TiB (powers of 1024); case does not matter.
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1}}
	num, mult := strings.ToLower(strings.TrimSpace(s)), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || !(n >= 0) || n*float64(mult) > 1<<62 { // !(n >= 0) also refuses NaN
		return 0, errors.New("not a size")
	}
	return int64(n * float64(mult)), nil
}

// ByteSize formats n bytes for people: "512 B", "1.5 KiB", "120.3 MiB", "1.40 GiB".
func ByteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	if v < 10 {
		return fmt.Sprintf("%.2f %s", v, suffix)
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
