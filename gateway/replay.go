package gateway

import (
	"container/list"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/agent-rewind/rewind/tape"
)

// Memory replay limits.
const (
	// MaxMemoryRecord is the largest response body memory replay records.
	MaxMemoryRecord = 8 << 20
	// MaxMemoryTotal bounds all memory records together; the oldest are dropped first.
	MaxMemoryTotal = 64 << 20
)

// AnswerHeaders are the request headers that change the answer, and so take part in the
// replay key (and in the tape's request hash): Anthropic's API version and beta features,
// OpenAI's beta features and the organization and project a call is billed to and governed
// by (their models, limits and data controls differ). An absent header adds nothing to the
// hash, so adding names left every earlier key and tape as it was.
var AnswerHeaders = append(slices.Clip(tape.DefaultAnswerHeaders), "Openai-Beta", "Openai-Organization", "Openai-Project")

// credentialHeaders carry the provider credential. Their values enter the replay key only
// through an HMAC under a key drawn at random when the process starts.
var credentialHeaders = []string{"X-Api-Key", "Authorization"}

// replayKeyPrefix starts the replay key's input and names its version.
const replayKeyPrefix = "agent-rewind/gateway replay v1\x00"

// replayKey is the memory-replay key of a request:
//
//	SHA-256( "agent-rewind/gateway replay v1" 0x00 | request hash[32] | str(tenant) | str(scope) | credential MAC[32] )
//
// where the request hash is the tape module's canonical request hash over the method, the
// path and query, the answer headers and the body's canonical JSON (object member order and
// insignificant whitespace ignored), and the credential MAC is HMAC-SHA256 under the
// process's random key over, for each credential header in order (x-api-key,
// authorization), str(lowercase name) | u32(number of values) | str(value)... . str(s) is a
// big-endian u32 length and the bytes of s. A response recorded under one credential is
// therefore never served to another, and the key reveals nothing about the credential.
func (g *Gateway) replayKey(r *http.Request, body []byte, scope string) [32]byte {
	return g.tenantReplayKey(r, body, g.tenant, scope)
}

// tenantReplayKey is replayKey for tenant (a team gateway's tenant comes from the API key).
// It runs before every Messages call goes upstream, so it allocates little: the credential
// MAC starts from a copy of the keyed state (credMAC) and the key's input is one buffer.
func (g *Gateway) tenantReplayKey(r *http.Request, body []byte, tenant, scope string) [32]byte {
	rh := tape.RequestHash(tape.Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, Body: body}, AnswerHeaders)
	mac := g.newCredMAC()
	buf := make([]byte, 0, 256)
	for _, name := range credentialHeaders {
		vs := r.Header[name]
		buf = appendStr(buf[:0], name)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(vs)))
		for _, v := range vs {
			buf = appendStr(buf, v)
		}
		mac.Write(buf)
	}
	buf = append(buf[:0], replayKeyPrefix...)
	buf = append(buf, rh[:]...)
	buf = appendStr(buf, tenant)
	buf = appendStr(buf, scope)
	buf = mac.Sum(buf)
	return sha256.Sum256(buf)
}

// newCredMAC returns an HMAC-SHA256 under credKey, ready for a message: a clone of credMAC,
// whose key pads were hashed once (hmac.New would hash them again and allocate more).
func (g *Gateway) newCredMAC() hash.Hash {
	if c, ok := g.credMAC.(hash.Cloner); ok {
		if mac, err := c.Clone(); err == nil {
			return mac
		}
	}
	return hmac.New(sha256.New, g.credKey)
}

// keyCredMAC keys credMAC with credKey; New calls it once credKey is final.
func (g *Gateway) keyCredMAC() {
	mac := hmac.New(sha256.New, g.credKey)
	mac.Reset() // hashes the key's pads once and keeps the states (crypto/hmac)
	g.credMAC = mac
}

func appendStr(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// entry is one recorded response.
type entry struct {
	key    [32]byte
	api    API
	status int
	header http.Header
	body   []byte
	stream bool
	model  string
	usage  Usage
	size   int
	elem   *list.Element
}

// droppedReplayHeaders are not replayed: those the tape drops (hop-by-hop, Content-Length,
// Set-Cookie), and Date, which the server sets afresh.
var droppedReplayHeaders = append([]string{"Date"}, tape.DroppedResponseHeaders...)

// newEntry builds the record of a complete response of api, or returns nil when it is not
// one memory replay keeps: only a 200 whose body is a complete response (responseUsage: a
// Messages JSON message with usage or a stream ending with message_stop; a completed
// Responses object or a stream ending with response.completed; a chat.completion or a chunk
// stream ending with [DONE]).
func newEntry(key [32]byte, api API, status int, header http.Header, body []byte) *entry {
	if status != http.StatusOK {
		return nil
	}
	e := &entry{key: key, api: api, status: status, body: body}
	e.stream = (tape.Response{Header: header}).EventStream()
	var ok bool
	e.model, e.usage, ok = responseUsage(api, e.stream, body)
	if !ok {
		return nil
	}
	e.header = header.Clone()
	for _, k := range droppedReplayHeaders {
		e.header.Del(k)
	}
	e.header.Del(HeaderReplay)
	e.size = len(body) + 512
	for k, vs := range e.header {
		e.size += len(k)
		for _, v := range vs {
			e.size += len(v)
		}
	}
	return e
}

// serve writes the recorded response; how is the X-Rewind-Replay value.
func (e *entry) serve(w http.ResponseWriter, how string) {
	h := w.Header()
	for k, vs := range e.header {
		h[k] = vs // shared and never modified: the server only reads them
	}
	h[HeaderReplay] = []string{how}
	if !e.stream {
		h["Content-Length"] = []string{strconv.Itoa(len(e.body))}
	}
	w.WriteHeader(e.status)
	w.Write(e.body)
}

// memoryStore holds memory replay's records, at most limit bytes, oldest dropped first, and
// the responses sent but not yet recorded (pending).
type memoryStore struct {
	mu      sync.RWMutex
	m       map[[32]byte]*entry
	pending map[[32]byte]*pendingEntry
	order   *list.List // of *entry, oldest first
	bytes   int
	limit   int
}

// pendingEntry is a response already sent to its client and being recorded: e is set, and
// done closed, when the record is in the store (e nil: not recordable).
type pendingEntry struct {
	e    *entry
	done chan struct{}
}

func newMemoryStore(limit int) *memoryStore {
	return &memoryStore{m: map[[32]byte]*entry{}, pending: map[[32]byte]*pendingEntry{}, order: list.New(), limit: limit}
}

func (s *memoryStore) get(k [32]byte) (*entry, bool) {
	s.mu.RLock()
	e, ok := s.m[k]
	s.mu.RUnlock()
	return e, ok
}

// lookup is get that also waits for a response of key k that was sent and is being recorded:
// a request made once its client has that response is a hit, as if the record were there.
func (s *memoryStore) lookup(k [32]byte) (*entry, bool) {
	s.mu.RLock()
	e, ok := s.m[k]
	p := s.pending[k]
	s.mu.RUnlock()
	if ok || p == nil {
		return e, ok
	}
	<-p.done
	return p.e, p.e != nil
}

// begin registers key k's response as sent and not yet recorded; nil if another is already.
func (s *memoryStore) begin(k [32]byte) *pendingEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[k] != nil {
		return nil
	}
	p := &pendingEntry{done: make(chan struct{})}
	s.pending[k] = p
	return p
}

// finish records e (nil: nothing to record) for the pending response p of key k, and wakes
// the requests waiting for it.
func (s *memoryStore) finish(k [32]byte, p *pendingEntry, e *entry) {
	if e != nil {
		s.put(e)
	}
	s.mu.Lock()
	p.e = e
	delete(s.pending, k)
	s.mu.Unlock()
	close(p.done)
}

func (s *memoryStore) put(e *entry) {
	if e.size > s.limit {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.m[e.key]; ok {
		s.order.Remove(old.elem)
		s.bytes -= old.size
	}
	e.elem = s.order.PushBack(e)
	s.m[e.key] = e
	s.bytes += e.size
	for s.bytes > s.limit {
		oldest := s.order.Remove(s.order.Front()).(*entry)
		delete(s.m, oldest.key)
		s.bytes -= oldest.size
	}
}

// len returns the number of records.
func (s *memoryStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.m)
}
