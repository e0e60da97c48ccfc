package workspace

import "math/bits"

// splitmix is the SplitMix64 generator (Steele, Lea and Flood, 2014). It is written here rather
// than taken from math/rand so that a seed's stream, and so the generated tree, can never change
// with a Go release. It is fast (one multiply-xorshift per 64 bits) and more than random enough
// for file sizes, names and filler bytes; it is not for secrets.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n) for n > 0 (Lemire's multiply-shift; its tiny bias is irrelevant
// here and, unlike rejection sampling, it draws exactly one value, which keeps streams simple).
func (r *splitmix) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// float returns a number in [0, 1).
func (r *splitmix) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// derive returns an independent seed for item i of stream seed, so that items can be generated
// in any order, in parallel, with the same result.
func derive(seed uint64, i int) uint64 {
	r := splitmix{s: seed ^ (uint64(i)+1)*0xd1b54a32d192ed03}
	r.next()
	return r.next()
}
