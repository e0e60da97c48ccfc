// Package jsonscan is a small validating JSON scanner over raw bytes. It reports byte offsets
// instead of building values, so callers can locate a member or a block in a request body and
// splice bytes there without re-encoding anything else, and it writes a canonical form
// (object members sorted, whitespace dropped) for order-insensitive comparison and hashing.
//
// It accepts exactly what encoding/json.Valid accepts (RFC 8259 grammar, at most MaxDepth
// nested containers, bytes of invalid UTF-8 inside strings passed through untouched); the fuzz
// target FuzzValid holds it to that. Errors carry an offset and a fixed description, never
// input bytes, so they are safe to print.
//
// It lives in the shared internal module so that cacheplan and analyze use one copy.
package jsonscan
