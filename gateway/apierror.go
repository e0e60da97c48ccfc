package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an error the gateway answers itself, in the Anthropic API's error shape so
// that SDKs surface its message:
//
//	{"type":"error","error":{"type":"permission_error","code":"scope_invalid","message":"..."}}
//
// code is the gateway's stable name for the case (see the package doc).
type apiError struct {
	status  int
	typ     string
	code    string
	message string
}

// write sends the error; retryAfter > 0 adds a Retry-After header (seconds).
func (e *apiError) write(w http.ResponseWriter, retryAfter int) {
	body, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Type: "error", Error: struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}{e.typ, e.code, e.message}})
	h := w.Header()
	logID := h[HeaderLogID]
	for k := range h { // headers a held upstream response left behind
		delete(h, k)
	}
	if logID != nil {
		h[HeaderLogID] = logID
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(e.status)
	w.Write(body)
}
