package gateway

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-rewind/rewind/tape"
)

// Control headers. Every header whose name starts with ControlHeaderPrefix is the gateway's
// own: it is read here and stripped before the request goes upstream.
const (
	ControlHeaderPrefix = "X-Rewind-"
	// HeaderScope selects a subordinate scope of the configured tenant (see ValidScope).
	HeaderScope = "X-Rewind-Scope"
	// HeaderTenant may repeat the configured tenant; any other value is refused with 403.
	// The tenant itself only ever comes from configuration.
	HeaderTenant = "X-Rewind-Tenant"
	// HeaderRequestID names one logical call for tape replay: a retry with the same id gets
	// the same response and consumes no position.
	HeaderRequestID = "X-Rewind-Request-Id"
	// HeaderReplay, on responses to POST /v1/messages, says how the gateway answered: "hit"
	// (from memory), "coalesced" (shared with an identical request in flight), "miss" (from
	// the upstream, recorded if complete and successful), "tape" or "tape-retry" (from the
	// durable tape), "recorded" (from the upstream, committed to the tape), "unrecorded"
	// (from the upstream, not recorded: oversized).
	HeaderReplay = "X-Rewind-Replay"
	// HeaderTapePosition, on tape responses, is the epoch position recorded or replayed.
	HeaderTapePosition = "X-Rewind-Tape-Position"
)

// MaxScopeLen is the longest scope.
const MaxScopeLen = 128

// ValidScope reports whether s is a valid scope: 1 to 128 characters from A-Z a-z 0-9 . _ :
// and -, the charset the analyze module accepts for its scope labels, so that the two agree.
func ValidScope(s string) bool {
	if len(s) == 0 || len(s) > MaxScopeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// identity is what a request's control headers say about it.
type identity struct {
	tenant    string // from configuration, or a team gateway's API key
	scope     string
	requestID string
	unchecked string // team mode: the API key, when authenticate left its check to the lookup
}

// identify reads and checks the control headers. An invalid scope or a tenant other than the
// configured one is refused with 403, an invalid request id with 400.
func (g *Gateway) identify(r *http.Request, tenant string) (identity, *apiError) {
	id := identity{tenant: tenant}
	if vs := r.Header.Values(HeaderScope); len(vs) > 0 {
		if len(vs) > 1 {
			return id, &apiError{http.StatusForbidden, "permission_error", "scope_invalid",
				"agent-rewind gateway: x-rewind-scope is given more than once: send one scope"}
		}
		if !ValidScope(vs[0]) {
			return id, &apiError{http.StatusForbidden, "permission_error", "scope_invalid",
				fmt.Sprintf("agent-rewind gateway: x-rewind-scope must be 1 to %d characters from A-Z a-z 0-9 . _ : - (got %d bytes that are not): fix the scope, or leave the header out", MaxScopeLen, len(vs[0]))}
		}
		id.scope = vs[0]
	}
	for _, v := range r.Header.Values(HeaderTenant) {
		if v != tenant && g.team != nil {
			return id, &apiError{http.StatusForbidden, "permission_error", "tenant_mismatch",
				fmt.Sprintf("agent-rewind gateway: your API key belongs to tenant %q; a header cannot choose another tenant: use that tenant's key", tenant)}
		}
		if v != tenant {
			return id, &apiError{http.StatusForbidden, "permission_error", "tenant_mismatch",
				fmt.Sprintf("agent-rewind gateway: this gateway serves tenant %q, fixed by its configuration; a header cannot choose another tenant: run one gateway per tenant and send each tenant's traffic to its own", tenant)}
		}
	}
	if vs := r.Header.Values(HeaderRequestID); len(vs) > 0 {
		if len(vs) > 1 {
			return id, &apiError{http.StatusBadRequest, "invalid_request_error", "request_id_invalid",
				"agent-rewind gateway: x-rewind-request-id is given more than once: send one id per call"}
		}
		if err := tape.ValidateRequestID(vs[0]); err != nil {
			return id, &apiError{http.StatusBadRequest, "invalid_request_error", "request_id_invalid",
				"agent-rewind gateway: x-rewind-request-id must be 1 to 128 characters from A-Z a-z 0-9 . _ : -"}
		}
		id.requestID = vs[0]
	}
	return id, nil
}

// stripControlHeaders removes every x-rewind-* header from h, and every header that a
// Connection header names is already gone (the reverse proxy removes hop-by-hop headers).
func stripControlHeaders(h http.Header) {
	for k := range h {
		if len(k) >= len(ControlHeaderPrefix) && strings.EqualFold(k[:len(ControlHeaderPrefix)], ControlHeaderPrefix) {
			delete(h, k)
		}
	}
}
