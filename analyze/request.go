package analyze

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// The upstream origins known without --origin: Anthropic's and OpenAI's APIs.
const (
	DefaultOrigin = "https://api.anthropic.com"
	OpenAIOrigin  = "https://api.openai.com"
)

// headerClass is what analyze makes of a request header name.
type headerClass uint8

const (
	headerUnknown     headerClass = iota
	headerSignificant             // part of the request key: it can change the answer
	headerNeutral                 // allowed, ignored
	headerCredential              // must not be in a capture at all
)

// Header names, lowercase. Significant ones are listed in key order: the headers that can
// change an answer, Anthropic's version and betas, OpenAI's betas and the organization and
// project a request is billed to (whose settings and stored state it sees).
var (
	significantHeaders = [...]string{"anthropic-beta", "anthropic-version", "openai-beta", "openai-organization", "openai-project"}
	neutralHeaders     = []string{"accept", "accept-encoding", "content-length", "content-type", "user-agent"}
	credentialHeaders  = []string{"authorization", "cookie", "proxy-authorization", "x-api-key"}
)

// classifyHeader classifies a lowercased header name.
func classifyHeader(name []byte) (headerClass, int) {
	for k, h := range significantHeaders {
		if string(name) == h {
			return headerSignificant, k
		}
	}
	for _, h := range neutralHeaders {
		if string(name) == h {
			return headerNeutral, -1
		}
	}
	for _, h := range credentialHeaders {
		if string(name) == h {
			return headerCredential, -1
		}
	}
	return headerUnknown, -1
}

// normalizeOrigin returns scheme://host[:port] lowercased, without a default port or a
// trailing slash, or false for anything that is not a bare http(s) origin.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(s, "//") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// origins decides whether record origins are known, remembering its answers: a capture has
// few distinct origins, and url.Parse per record would dominate the cost.
type origins struct {
	known map[string]bool   // normalised known origins
	cache map[string]string // raw origin -> normalised known origin, "" when unknown
}

const originCacheSize = 1024

func newOrigins(extra []string) (*origins, error) {
	o := &origins{known: map[string]bool{DefaultOrigin: true, OpenAIOrigin: true}, cache: map[string]string{}}
	for _, e := range extra {
		n, ok := normalizeOrigin(e)
		if !ok {
			return nil, fmt.Errorf("%w: an --origin value is not an http(s) origin (scheme://host[:port], no path, query or credentials)", ErrInvalidOptions)
		}
		o.known[n] = true
	}
	return o, nil
}

// lookup returns the normalised origin if it is known.
func (o *origins) lookup(raw []byte) (string, bool) {
	if n, ok := o.cache[string(raw)]; ok {
		return n, n != ""
	}
	n, ok := normalizeOrigin(string(raw))
	if !ok || !o.known[n] {
		n = ""
	}
	if len(o.cache) < originCacheSize {
		o.cache[string(raw)] = n
	}
	return n, n != ""
}

// validScope reports whether a scope label is 1 to 128 of A-Z a-z 0-9 . _ : -.
func validScope(s []byte) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// keyBuilder writes the request key's fields, each length-prefixed (FORMAT.md).
type keyBuilder struct{ buf []byte }

const keyDomain = "agent-rewind analyze request key v1"

func (k *keyBuilder) reset() {
	k.buf = binary.AppendUvarint(k.buf[:0], uint64(len(keyDomain)))
	k.buf = append(k.buf, keyDomain...)
}

func (k *keyBuilder) field(b []byte) {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(b)))
	k.buf = append(k.buf, b...)
}

func (k *keyBuilder) sum() [32]byte { return sha256.Sum256(k.buf) }

// decoded returns the contents of a string token, decoding escapes into scratch if needed.
func decoded(data []byte, s str, scratch []byte) ([]byte, []byte) {
	tok := data[s.start:s.end]
	if !s.escaped {
		return tok[1 : len(tok)-1], scratch
	}
	scratch = jsonscan.AppendUnquoted(scratch[:0], tok)
	return scratch, scratch
}
