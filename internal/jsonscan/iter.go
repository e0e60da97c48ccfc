package jsonscan

// Object walks the members of one JSON object in place. Typical use:
//
//	o, err := OpenObject(data, i, depth)
//	for o.Next() {
//		if o.KeyIs("messages") { end, err := walk(data, o.Value()); o.Consumed(end) }
//	}
//	if o.Err() != nil { ... }
//	after := o.End()
//
// A value the caller does not consume is validated and skipped by the next call to Next.
type Object struct {
	data       []byte
	depth      int // containers open inside this object, counting it
	pos        int
	n          int
	keyStart   int
	keyEnd     int
	keyEscaped bool
	valStart   int
	valEnd     int // -1 while the current value is not consumed
	end        int // offset after '}', 0 while open
	err        error
}

// OpenObject starts walking the object at data[i] (no leading whitespace). depth is the number
// of containers already open around it.
func OpenObject(data []byte, i, depth int) (Object, error) {
	if i >= len(data) || data[i] != '{' {
		return Object{}, errAt(i, "expected an object")
	}
	if depth+1 > MaxDepth {
		return Object{}, errAt(i, "nested too deeply")
	}
	return Object{data: data, depth: depth + 1, pos: i, valEnd: -1}, nil
}

// Next advances to the next member and reports whether there is one.
func (o *Object) Next() bool {
	if o.err != nil || o.end != 0 {
		return false
	}
	d := o.data
	var i int
	if o.n == 0 {
		i = SkipSpace(d, o.pos+1)
		if i < len(d) && d[i] == '}' {
			o.end = i + 1
			return false
		}
	} else {
		if o.valEnd < 0 {
			end, err := SkipValue(d, o.valStart, o.depth)
			if err != nil {
				o.err = err
				return false
			}
			o.valEnd = end
		}
		i = SkipSpace(d, o.valEnd)
		if i < len(d) && d[i] == '}' {
			o.end = i + 1
			return false
		}
		if i >= len(d) || d[i] != ',' {
			o.err = errAt(i, "expected ',' or '}' in object")
			return false
		}
		i = SkipSpace(d, i+1)
	}
	if i >= len(d) || d[i] != '"' {
		o.err = errAt(i, "expected a string object key")
		return false
	}
	ke, esc, err := ScanString(d, i)
	if err != nil {
		o.err = err
		return false
	}
	o.keyStart, o.keyEnd, o.keyEscaped = i, ke, esc
	i = SkipSpace(d, ke)
	if i >= len(d) || d[i] != ':' {
		o.err = errAt(i, "expected ':' after object key")
		return false
	}
	o.valStart = SkipSpace(d, i+1)
	if o.valStart >= len(d) {
		o.err = errAt(o.valStart, "unexpected end of input, expected a value")
		return false
	}
	o.valEnd = -1
	o.n++
	return true
}

// Key returns the raw key token, quotes and escapes included.
func (o *Object) Key() []byte { return o.data[o.keyStart:o.keyEnd] }

// KeyEscaped reports whether the raw key contains an escape sequence.
func (o *Object) KeyEscaped() bool { return o.keyEscaped }

// KeyIs reports whether the decoded key equals name.
func (o *Object) KeyIs(name string) bool {
	return StringIs(o.data[o.keyStart:o.keyEnd], o.keyEscaped, name)
}

// Value returns the offset of the current member's value.
func (o *Object) Value() int { return o.valStart }

// Depth returns the number of containers open inside this object, counting it: the depth to
// pass to SkipValue or OpenObject for a member's value.
func (o *Object) Depth() int { return o.depth }

// Consumed records that the caller has validated the current value up to end.
func (o *Object) Consumed(end int) { o.valEnd = end }

// ConsumedEnd returns the end recorded by Consumed for the current value, if any.
func (o *Object) ConsumedEnd() (int, bool) { return o.valEnd, o.valEnd >= 0 }

// Fail stops the walk with err (a caller's validation failure).
func (o *Object) Fail(err error) { o.err = err }

// Err returns the first error met, if any.
func (o *Object) Err() error { return o.err }

// End returns the offset just past the closing brace, once Next has returned false without
// error.
func (o *Object) End() int { return o.end }

// Len returns the number of members seen so far.
func (o *Object) Len() int { return o.n }

// Array walks the elements of one JSON array in place, like Object.
type Array struct {
	data     []byte
	depth    int
	pos      int
	n        int
	valStart int
	valEnd   int
	end      int
	err      error
}

// OpenArray starts walking the array at data[i] (no leading whitespace).
func OpenArray(data []byte, i, depth int) (Array, error) {
	if i >= len(data) || data[i] != '[' {
		return Array{}, errAt(i, "expected an array")
	}
	if depth+1 > MaxDepth {
		return Array{}, errAt(i, "nested too deeply")
	}
	return Array{data: data, depth: depth + 1, pos: i, valEnd: -1}, nil
}

// Next advances to the next element and reports whether there is one.
func (a *Array) Next() bool {
	if a.err != nil || a.end != 0 {
		return false
	}
	d := a.data
	var i int
	if a.n == 0 {
		i = SkipSpace(d, a.pos+1)
		if i < len(d) && d[i] == ']' {
			a.end = i + 1
			return false
		}
	} else {
		if a.valEnd < 0 {
			end, err := SkipValue(d, a.valStart, a.depth)
			if err != nil {
				a.err = err
				return false
			}
			a.valEnd = end
		}
		i = SkipSpace(d, a.valEnd)
		if i < len(d) && d[i] == ']' {
			a.end = i + 1
			return false
		}
		if i >= len(d) || d[i] != ',' {
			a.err = errAt(i, "expected ',' or ']' in array")
			return false
		}
		i = SkipSpace(d, i+1)
	}
	if i >= len(d) {
		a.err = errAt(i, "unexpected end of input, expected a value")
		return false
	}
	a.valStart = i
	a.valEnd = -1
	a.n++
	return true
}

// Index returns the zero-based index of the current element.
func (a *Array) Index() int { return a.n - 1 }

// Value returns the offset of the current element.
func (a *Array) Value() int { return a.valStart }

// Depth returns the depth to pass to SkipValue or OpenObject for an element.
func (a *Array) Depth() int { return a.depth }

// Consumed records that the caller has validated the current element up to end.
func (a *Array) Consumed(end int) { a.valEnd = end }

// Fail stops the walk with err.
func (a *Array) Fail(err error) { a.err = err }

// Err returns the first error met, if any.
func (a *Array) Err() error { return a.err }

// End returns the offset just past the closing bracket.
func (a *Array) End() int { return a.end }

// Len returns the number of elements seen so far.
func (a *Array) Len() int { return a.n }
