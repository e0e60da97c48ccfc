package statcache

import (
	"slices"
)

// The stat cache's log applied to a decoded cache, whole: what a capture's indexCursor does one
// entry at a time (index.go), kept as the reference the cursor and the log's tests check.

// applyIndexLog applies the log's records, in order, to entries (sorted; of the index whose
// checksum is base; overwritten) and returns the result, sorted, and the bytes of the log's valid
// records. A log of another index, or a record that is torn or damaged, ends what is applied
// (torn is set): the cache then holds what it held before that record, older facts that a
// changed stat makes a checkpoint read again.
func applyIndexLog(entries []Entry, base uint32, data []byte) (out []Entry, valid int, torn bool) {
	// The log is small next to the index: gather its outcome per path (nil: removed), then
	// apply it in one pass over the sorted entries.
	ops, at, torn := ReadLogOps(base, data)
	if len(ops) == 0 {
		return entries, at, torn
	}
	// In place: the entries are the caller's to give (a 20,000-file cache is 2 MB to copy).
	out = entries[:0]
	for i := range entries {
		p := entries[i].Path
		e, ok := ops[p]
		switch {
		case !ok:
			out = append(out, entries[i])
		case e != nil:
			out = append(out, *e)
		}
		delete(ops, p)
	}
	if len(ops) > 0 { // paths new to the cache: sorted, then merged in (sorting the whole cache
		// again costs more than the rest of loading it)
		var added []Entry
		for _, e := range ops {
			if e != nil {
				added = append(added, *e)
			}
		}
		Sort(added)
		out = mergeIndex(out, added)
	}
	return out, at, torn
}

// mergeIndex returns the entries of a and b (each sorted, no path in both), sorted; a's backing
// array is reused when it has room.
func mergeIndex(a, b []Entry) []Entry {
	if len(b) == 0 {
		return a
	}
	n := len(a)
	a = slices.Grow(a, len(b))[:n+len(b)]
	// From the back, so that nothing of a is overwritten before it is moved.
	i, j := n-1, len(b)-1
	for k := len(a) - 1; j >= 0; k-- {
		if i >= 0 && a[i].Path > b[j].Path {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
	}
	return a
}
