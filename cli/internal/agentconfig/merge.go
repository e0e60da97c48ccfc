package agentconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// Merging agent-rewind's entries into a client's JSON file, and taking them out again. Every
// change is an addition, recorded (record.go) so that --remove takes out exactly what setup
// added and nothing else:
//
//   - a member the file lacks is added: a leaf (a server entry, a scalar) whole, a container
//     (an object of entries such as "hooks" or "mcpServers", or an array of hook entries)
//     empty, recorded as made by setup, and then filled;
//   - an array the file has gets each shipped element it does not already hold, appended;
//   - an object the file has is merged into, member by member;
//   - a leaf the file already has with another value is the user's: it is kept, and said so.
//
// Taking out goes backwards: each leaf or element still exactly as setup added it is removed
// (one the user changed since is kept, and said so), then each container setup made that is
// empty again.

// addition is one thing setup added to a JSON file.
type addition struct {
	Path      []string `json:"path"`                // the member, from the top
	Elem      bool     `json:"elem,omitempty"`      // Value was appended to the array at Path
	Container string   `json:"container,omitempty"` // "object" or "array": setup made it empty, to fill
	Value     string   `json:"value,omitempty"`     // a leaf or element, as compact JSON
}

// where names an addition's place for people: hooks.PreToolUse[+], mcpServers.agent-rewind.
func (a addition) where() string {
	w := dotted(a.Path)
	if a.Elem {
		w += "[]"
	}
	return w
}

func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if strings.ContainsAny(p, ". []") || p == "" {
			p = strconv.Quote(p)
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

// kept is an entry setup did not change: the user's own where setup would have added one, or
// one setup added that the user changed since.
type kept struct {
	At, Why string
}

// isContainer reports whether a shipped value holds entries that are merged one by one: an
// array, or an object whose every member is an object or an array.
func isContainer(v *jnode) bool {
	if v.kind == jArray {
		return true
	}
	if v.kind != jObject || len(v.keys) == 0 {
		return false
	}
	for _, m := range v.vals {
		if m.kind == jScalar {
			return false
		}
	}
	return true
}

// merge adds src's members into dst (both objects) under path.
func merge(dst, src *jnode, path []string, adds *[]addition, keeps *[]kept) {
	for i, k := range src.keys {
		sv, dv := src.vals[i], dst.get(k)
		p := append(append([]string(nil), path...), k)
		switch {
		case dv == nil && isContainer(sv):
			made := &jnode{kind: sv.kind}
			dst.set(k, made)
			kind := "object"
			if sv.kind == jArray {
				kind = "array"
			}
			*adds = append(*adds, addition{Path: p, Container: kind})
			mergeInto(made, sv, p, adds, keeps)
		case dv == nil:
			dst.set(k, sv.clone())
			*adds = append(*adds, addition{Path: p, Value: sv.compact()})
		case dv.kind == sv.kind && isContainer(sv):
			mergeInto(dv, sv, p, adds, keeps)
		case !equal(dv, sv):
			*keeps = append(*keeps, kept{dotted(p), "yours, kept as it is (setup would write " + sv.compact() + ")"})
		}
	}
}

// mergeInto merges a container src into dst of the same kind.
func mergeInto(dst, src *jnode, path []string, adds *[]addition, keeps *[]kept) {
	if src.kind == jObject {
		merge(dst, src, path, adds, keeps)
		return
	}
	for _, e := range src.elems {
		if contains(dst, e) {
			continue
		}
		dst.elems = append(dst.elems, e.clone())
		*adds = append(*adds, addition{Path: path, Elem: true, Value: e.compact()})
	}
}

func contains(arr, v *jnode) bool {
	for _, e := range arr.elems {
		if equal(e, v) {
			return true
		}
	}
	return false
}

// unmerge takes the additions out of root, newest first: each leaf or element still exactly as
// added, then each container setup made that is empty again. It returns the additions taken
// out and what it kept (changed since).
func unmerge(root *jnode, adds []addition) (removed []addition, keeps []kept, err error) {
	for i := len(adds) - 1; i >= 0; i-- {
		a := adds[i]
		if len(a.Path) == 0 {
			return nil, nil, fmt.Errorf("a record of setup names no member")
		}
		parent := root.at(a.Path[:len(a.Path)-1])
		last := a.Path[len(a.Path)-1]
		cur := parent.get(last)
		switch {
		case cur == nil:
			continue // gone already: nothing to take out
		case a.Container != "":
			if cur.empty() {
				parent.del(last)
				removed = append(removed, a)
			}
		case a.Elem:
			want, err := parseJSON([]byte(a.Value))
			if err != nil {
				return nil, nil, fmt.Errorf("a record of setup holds a value that is not JSON: %w", err)
			}
			if cur.kind != jArray {
				continue
			}
			found := -1
			for j := len(cur.elems) - 1; j >= 0; j-- {
				if equal(cur.elems[j], want) {
					found = j
					break
				}
			}
			if found < 0 {
				keeps = append(keeps, kept{a.where(), "the entry setup added is no longer there as it was (changed since?): left as it is"})
				continue
			}
			cur.elems = append(cur.elems[:found:found], cur.elems[found+1:]...)
			removed = append(removed, a)
		default:
			want, err := parseJSON([]byte(a.Value))
			if err != nil {
				return nil, nil, fmt.Errorf("a record of setup holds a value that is not JSON: %w", err)
			}
			if !equal(cur, want) {
				keeps = append(keeps, kept{a.where(), "changed since setup added it: left as it is"})
				continue
			}
			parent.del(last)
			removed = append(removed, a)
		}
	}
	return removed, keeps, nil
}
