package hashchain

import (
	"strconv"
)

// formatNumber appends the finite double f to dst as ECMAScript's Number.prototype.toString
// writes it (ECMA-262 Number::toString, radix 10), which RFC 8785 §3.2.2.3 makes the canonical
// form of a JSON number. The caller guarantees f is finite.
//
// With f = 0.d₁…d_k × 10ⁿ, where d₁…d_k is the shortest digit string that reads back as f:
//
//	k ≤ n ≤ 21    digits, then n-k zeros             1e20  → 100000000000000000000
//	0 < n ≤ 21    first n digits '.' the rest        123.45
//	-6 < n ≤ 0    "0." -n zeros, digits              1e-6  → 0.000001
//	otherwise     d₁ ['.' d₂…d_k] 'e' sign |n-1|     1e21  → 1e+21, 1.5e-7
func formatNumber(dst []byte, f float64) []byte {
	if f == 0 { // also -0
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits in exponent form: "d.ddde±XX" or "de±XX".
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	e := 0
	for s[e] != 'e' {
		e++
	}
	exp, _ := strconv.Atoi(string(s[e+1:]))
	var digits [24]byte
	k := 0
	for _, c := range s[:e] {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	d := digits[:k]
	n := exp + 1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		} else {
			dst = append(dst, '-')
		}
		x := n - 1
		if x < 0 {
			x = -x
		}
		dst = strconv.AppendInt(dst, int64(x), 10)
	}
	return dst
}
