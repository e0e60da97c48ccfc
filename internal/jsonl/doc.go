// Package jsonl reads the append-only logs the stores keep, one JSON value a line (the calls
// log, the prompt log): a torn last line, which a killed writer can leave, is skipped rather than
// failing every later read.
package jsonl
