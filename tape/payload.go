package tape

import (
	"encoding/binary"
	"errors"
)

// The plaintexts of sealed values (see doc.go, "Sealed values"):
//
//	request:  hash[32] | str(method) | str(path) | headers | str(body)
//	response: u16(status) | headers | str(body)
//	headers:  u32(n) | n × ( str(canonical name) | str(value) )

func encodeRequest(h Hash, method, path string, headers []headerField, body []byte) []byte {
	n := 32 + 8 + len(method) + len(path) + 4 + 4 + len(body)
	for _, f := range headers {
		n += 8 + len(f.name) + len(f.value)
	}
	b := make([]byte, 0, n)
	b = append(b, h[:]...)
	b = appendStr(b, method)
	b = appendStr(b, path)
	b = appendHeaders(b, headers)
	return appendStr(b, body)
}

func encodeResponse(status int, headers []headerField, body []byte) []byte {
	n := 2 + 4 + 4 + len(body)
	for _, f := range headers {
		n += 8 + len(f.name) + len(f.value)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint16(b, uint16(status))
	b = appendHeaders(b, headers)
	return appendStr(b, body)
}

func appendHeaders(b []byte, headers []headerField) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	for _, f := range headers {
		b = appendStr(b, f.name)
		b = appendStr(b, f.value)
	}
	return b
}

// storedRequest is a decoded request plaintext.
type storedRequest struct {
	hash    Hash
	method  string
	path    string
	headers []headerField
	body    []byte
}

var errPayload = errors.New("malformed payload")

// decodeRequest parses a request plaintext. It never panics and allocates no more than the
// input's size, whatever the input.
func decodeRequest(p []byte) (storedRequest, error) {
	var r storedRequest
	d := payloadReader{p: p}
	copy(r.hash[:], d.bytes(32))
	r.method = string(d.str())
	r.path = string(d.str())
	r.headers = d.headers()
	r.body = d.str()
	if d.bad || len(d.p) != 0 {
		return storedRequest{}, errPayload
	}
	return r, nil
}

// decodeResponse parses a response plaintext.
func decodeResponse(p []byte) (Response, error) {
	d := payloadReader{p: p}
	var status int
	if b := d.bytes(2); b != nil {
		status = int(binary.BigEndian.Uint16(b))
	}
	headers := d.headers()
	body := d.str()
	if d.bad || len(d.p) != 0 {
		return Response{}, errPayload
	}
	return Response{Status: status, Header: fieldsToHeader(headers), Body: body}, nil
}

// payloadReader reads length-prefixed fields; after the first short read every read returns
// empty and bad is set.
type payloadReader struct {
	p   []byte
	bad bool
}

func (d *payloadReader) bytes(n int) []byte {
	if d.bad || n < 0 || n > len(d.p) {
		d.bad = true
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

func (d *payloadReader) u32() int {
	b := d.bytes(4)
	if b == nil {
		return 0
	}
	return int(binary.BigEndian.Uint32(b))
}

func (d *payloadReader) str() []byte { return d.bytes(d.u32()) }

func (d *payloadReader) headers() []headerField {
	n := d.u32()
	if n > len(d.p)/8 { // every field takes at least two 4-byte lengths
		d.bad = true
		return nil
	}
	var fields []headerField
	if n > 0 {
		fields = make([]headerField, 0, n)
	}
	for range n {
		name, value := d.str(), d.str()
		if d.bad {
			return nil
		}
		fields = append(fields, headerField{string(name), string(value)})
	}
	return fields
}
