package tape

import (
	"encoding/hex"
	"mime"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// Request is one HTTP request as the tape sees it.
type Request struct {
	// Method is the HTTP method, as sent ("POST").
	Method string
	// Path is the request target: the path and query as sent ("/v1/messages", "/v1/x?a=1").
	Path string
	// Header may hold every request header: the tape keeps and hashes only the answer headers
	// (Options.AnswerHeaders), so credentials and transport headers are never stored.
	Header http.Header
	// Body is the request body, byte for byte. It is what the tape stores.
	Body []byte
	// MatchBody, when not nil, is the body the request hash covers instead of Body: a caller
	// that knows which parts of a body do not change the answer (an OpenAI client's
	// per-session prompt_cache_key, say) leaves them out, so that a rerun of the same calls
	// matches the recording. The tape still stores Body.
	MatchBody []byte
}

// hashedBody is the body the request hash covers.
func (r Request) hashedBody() []byte {
	if r.MatchBody != nil {
		return r.MatchBody
	}
	return r.Body
}

// Response is one complete HTTP response.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds the response headers. When recording, hop-by-hop headers, Content-Length and
	// Set-Cookie are dropped (see [DroppedResponseHeaders]); the rest are stored and replayed.
	Header http.Header
	// Body is the complete body. For a server-sent event stream (Content-Type
	// text/event-stream) it is the byte-exact stream as received, every event and separator
	// included; replay returns the same bytes, which the caller writes (flushing at event
	// boundaries if it wants to look like a stream).
	Body []byte
}

// EventStream reports whether the response is a server-sent event stream.
func (r Response) EventStream() bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// Call is one recorded exchange: a request and the complete response it got.
type Call struct {
	Request  Request
	Response Response
}

// Hash is the SHA-256 canonical hash of a request (see [RequestHash]).
type Hash [32]byte

// String is "sha256:" and the hash in lowercase hexadecimal.
func (h Hash) String() string { return "sha256:" + hex.EncodeToString(h[:]) }

// DefaultAnswerHeaders are the request headers that change the answer of the Anthropic Messages
// API and so take part in the canonical request. Credentials (Authorization, X-Api-Key) never
// do: they do not change the answer, and the tape must not store them.
var DefaultAnswerHeaders = []string{"Anthropic-Version", "Anthropic-Beta"}

// credentialHeaders may never be answer headers: storing them would put secrets on disk.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Cookie", "Api-Key", "X-Goog-Api-Key"}

// DroppedResponseHeaders are not recorded: hop-by-hop headers (RFC 9110 section 7.6.1) describe
// one connection, not the answer; Content-Length is recomputed from the stored body; Set-Cookie
// would put session secrets on disk.
var DroppedResponseHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Set-Cookie",
}

// headerField is one header value; a header with several values is several fields.
type headerField struct{ name, value string }

// pickHeaders returns the fields of h whose canonical name is in keep (or, with drop, is not in
// drop), sorted by name, each name's values in their original order, values trimmed of
// surrounding space.
func pickHeaders(h http.Header, names []string, keep bool) []headerField {
	var out []headerField
	for name, values := range h {
		cn := textproto.CanonicalMIMEHeaderKey(name)
		if slices.Contains(names, cn) != keep {
			continue
		}
		for _, v := range values {
			out = append(out, headerField{cn, strings.TrimSpace(v)})
		}
	}
	// Stable: two spellings of one name ("anthropic-beta", "Anthropic-Beta") are distinct map
	// keys; sorting by name keeps each key's values in order, and map order across keys is the
	// only ambiguity left, which only a caller that sets both spellings can hit.
	slices.SortStableFunc(out, func(a, b headerField) int { return strings.Compare(a.name, b.name) })
	return out
}

func fieldsToHeader(fields []headerField) http.Header {
	h := make(http.Header, len(fields))
	for _, f := range fields {
		h[f.name] = append(h[f.name], f.value)
	}
	return h
}
