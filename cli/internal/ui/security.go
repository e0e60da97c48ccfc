package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// CSRFHeader carries the page's CSRF token on every POST. A custom header also means a
// cross-origin page cannot send the request without a CORS preflight, which is never granted.
const CSRFHeader = "X-Rewind-CSRF"

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func equalToken(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// guard admits a request only when every rule holds, and answers 403 (400 for a bad Host)
// naming the rule otherwise:
//   - the Host header is exactly the loopback address served: a DNS-rebound name is refused;
//   - the path starts with /<token>/: another site cannot guess it, so cannot even read;
//   - a state-changing request is a POST with the CSRF token, and its Origin (when sent) and
//     Sec-Fetch-Site say it comes from this page's origin.
func (s *Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		if r.Host != s.addr {
			http.Error(w, "refused: the Host header "+quote(r.Host)+" is not "+s.addr+", the address this page is served on (a DNS-rebinding guard): open the address agent-rewind ui printed", http.StatusBadRequest)
			return
		}
		prefix := "/" + s.token + "/"
		if len(r.URL.Path) < len(prefix) || !equalToken(r.URL.Path[:len(prefix)], prefix) {
			http.Error(w, "refused: this address lacks the page's token; open the full address agent-rewind ui printed", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Method != http.MethodPost {
				http.Error(w, "refused: method "+r.Method+" (only GET and POST)", http.StatusMethodNotAllowed)
				return
			}
			if o := r.Header.Get("Origin"); o != "" && o != "http://"+s.addr {
				http.Error(w, "refused: a request from "+quote(o)+", another origin", http.StatusForbidden)
				return
			}
			if err := cop.Check(r); err != nil {
				http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
				return
			}
			if !equalToken(r.Header.Get(CSRFHeader), s.csrf) {
				http.Error(w, "refused: the request lacks the page's CSRF token (reload the page)", http.StatusForbidden)
				return
			}
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/"+strings.TrimPrefix(r.URL.Path, prefix), ""
		next.ServeHTTP(w, r2)
	})
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
