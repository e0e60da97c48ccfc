package analyze

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Format is the shape of the input.
type Format string

// The input formats.
const (
	FormatAuto   Format = ""       // NDJSON unless the first non-whitespace byte is '['
	FormatNDJSON Format = "ndjson" // one record per line
	FormatJSON   Format = "json"   // a JSON array of records, or one record object, read whole
)

// ErrRead wraps a failure to read the input (never a path: only the operating system's
// reason).
var ErrRead = errors.New("reading the capture failed")

func readErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%w: %v", ErrRead, err)
}

// Run analyses the capture read from r in the given format and returns the report. It stops
// at the first limit crossed or invalid record, with an error that quotes nothing from the
// input.
func Run(r io.Reader, format Format, opts Options) (*Report, error) {
	lim := opts.Limits.withDefaults()
	br := bufio.NewReaderSize(r, int(lim.RecordBytes)+64<<10)
	if format == FormatAuto {
		format = FormatNDJSON
		if first, ok := firstByte(br); ok && first == '[' {
			format = FormatJSON
		}
	}
	a, err := newAnalyzer(opts, format)
	if err != nil {
		return nil, err
	}
	if format == FormatJSON {
		data, err := io.ReadAll(io.LimitReader(br, lim.ArrayBytes+1))
		if err != nil {
			return nil, readErr(err)
		}
		if err := a.json(data); err != nil {
			return nil, err
		}
		return a.finish(), nil
	}
	if err := a.ndjson(br); err != nil {
		return nil, err
	}
	return a.finish(), nil
}

// RunBytes analyses a capture held in memory, such as a command-line argument: a JSON array
// or a single record (FormatJSON), or NDJSON.
func RunBytes(data []byte, format Format, opts Options) (*Report, error) {
	return Run(bytes.NewReader(data), format, opts)
}

// firstByte peeks at the first non-whitespace byte without consuming anything.
func firstByte(br *bufio.Reader) (byte, bool) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return 0, false
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c, true
		}
		if err != nil || n >= br.Size() {
			return 0, false
		}
	}
}

// ndjson reads records line by line. The reader's buffer holds a whole record, so a line is
// processed in place.
func (a *analyzer) ndjson(br *bufio.Reader) error {
	var line, offset int64
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return a.oversized(br, chunk, line+1)
		}
		if err != nil && err != io.EOF {
			return readErr(err)
		}
		if len(chunk) == 0 {
			return nil
		}
		line++
		if a.srcN+int64(len(chunk)) > a.lim.TotalBytes {
			a.consumed(chunk)
			return a.limitErr("total bytes", a.lim.TotalBytes, a.srcN, true, 0, nil)
		}
		a.consumed(chunk)
		rec := chunk
		if n := len(rec); n > 0 && rec[n-1] == '\n' {
			rec = rec[:n-1]
			if n := len(rec); n > 0 && rec[n-1] == '\r' {
				rec = rec[:n-1]
			}
		}
		if int64(len(rec)) > a.lim.RecordBytes {
			return a.limitErr("record bytes", a.lim.RecordBytes, int64(len(rec)), false, line, rec)
		}
		if jsonscan.SkipSpace(rec, 0) < len(rec) {
			if err := a.record(rec, line, offset); err != nil {
				return err
			}
		}
		offset += int64(len(chunk))
		if err == io.EOF {
			return nil
		}
	}
}

// oversized reads the rest of a line longer than the buffer, hashing it without holding it,
// and reports its size.
func (a *analyzer) oversized(br *bufio.Reader, first []byte, line int64) error {
	rh := sha256.New()
	n := int64(0)
	chunk := first
	for {
		if a.srcN+int64(len(chunk)) > a.lim.TotalBytes {
			a.consumed(chunk)
			return a.limitErr("total bytes", a.lim.TotalBytes, a.srcN, true, 0, nil)
		}
		a.consumed(chunk)
		body := bytes.TrimSuffix(bytes.TrimSuffix(chunk, []byte("\n")), []byte("\r"))
		rh.Write(body)
		n += int64(len(body))
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			break
		}
		var err error
		chunk, err = br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if err != io.EOF {
				return readErr(err)
			}
			if len(chunk) == 0 {
				break
			}
		}
	}
	e := a.limitErr("record bytes", a.lim.RecordBytes, n, false, line, nil)
	rh.Sum(e.RecordSHA256[:0])
	return e
}

// json analyses a JSON array of records, or one record object, held whole.
func (a *analyzer) json(data []byte) error {
	if int64(len(data)) > a.lim.ArrayBytes {
		a.consumed(data)
		return a.limitErr("array bytes", a.lim.ArrayBytes, int64(len(data)), true, 0, nil)
	}
	a.consumed(data)
	if err := jsonscan.CheckDocument(data); err != nil {
		reason := "the input is not valid JSON"
		var se *jsonscan.Error
		if errors.As(err, &se) {
			reason = fmt.Sprintf("the input is not valid JSON (at byte %d: %s)", se.Offset, se.What)
		}
		return a.recordErr(ErrInvalidRecord, reason, 0, 0, data)
	}
	i := jsonscan.SkipSpace(data, 0)
	switch data[i] {
	case '{':
		end, _ := jsonscan.SkipValue(data, i, 0)
		return a.element(data[i:end], 1, int64(i))
	case '[':
		arr, _ := jsonscan.OpenArray(data, i, 0)
		for arr.Next() {
			v := arr.Value()
			end, _ := jsonscan.SkipValue(data, v, arr.Depth())
			if err := a.element(data[v:end], int64(arr.Index())+1, int64(v)); err != nil {
				return err
			}
			arr.Consumed(end)
		}
		return nil
	}
	return a.recordErr(ErrInvalidRecord, "the input is neither a JSON array of records nor a record", 0, 0, data)
}

// element analyses one record of a JSON input.
func (a *analyzer) element(rec []byte, n, offset int64) error {
	if int64(len(rec)) > a.lim.RecordBytes {
		return a.limitErr("record bytes", a.lim.RecordBytes, int64(len(rec)), false, n, rec)
	}
	return a.record(rec, n, offset)
}
