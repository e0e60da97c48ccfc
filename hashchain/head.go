package hashchain

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Head is the Merkle head of a chain's first Size entries (FORMAT.md §6).
type Head struct {
	Origin string    // "agent-rewind/<chain id>", or EmptyOrigin
	Size   int64     // entries covered
	Root   tlog.Hash // RFC 6962 Merkle tree hash of those entries
}

// EmptyOrigin is the origin line of the empty chain's head.
const EmptyOrigin = "agent-rewind/empty"

// originOf returns the origin line of a chain whose entry 0 has hash h0.
func originOf(h0 [32]byte) string {
	return "agent-rewind/" + hex.EncodeToString(h0[:16])
}

// Checkpoint returns the head as a C2SP tlog-checkpoint: origin, size, base64 root, each on
// its own line.
func (h Head) Checkpoint() string {
	return fmt.Sprintf("%s\n%d\n%s\n", h.Origin, h.Size, base64.StdEncoding.EncodeToString(h.Root[:]))
}

// String is the checkpoint text.
func (h Head) String() string { return h.Checkpoint() }

// headJSON is the JSON shape of a Head: {"origin", "size", "root" (base64), "rootHex"}.
type headJSON struct {
	Origin  string `json:"origin"`
	Size    int64  `json:"size"`
	Root    string `json:"root"`
	RootHex string `json:"rootHex"`
}

// MarshalJSON writes {"origin": …, "size": …, "root": <base64>, "rootHex": <hex>}.
func (h Head) MarshalJSON() ([]byte, error) {
	return json.Marshal(headJSON{h.Origin, h.Size, base64.StdEncoding.EncodeToString(h.Root[:]), hex.EncodeToString(h.Root[:])})
}

// UnmarshalJSON reads what MarshalJSON writes (the base64 root is authoritative).
func (h *Head) UnmarshalJSON(b []byte) error {
	var j headJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	root, err := base64.StdEncoding.DecodeString(j.Root)
	if err != nil || len(root) != tlog.HashSize {
		return fmt.Errorf("head root %q is not a base64 SHA-256 hash", j.Root)
	}
	*h = Head{Origin: j.Origin, Size: j.Size}
	copy(h.Root[:], root)
	return nil
}

// ErrBadHead matches (errors.Is) a head that does not parse, or whose signature does not verify.
var ErrBadHead = errors.New("bad head")

// ParseHead parses a head: a C2SP checkpoint, or a signed note holding one. Extension lines
// after the root are allowed and ignored. It does not check signatures (see OpenSignedHead);
// signed reports whether the text carried any.
func ParseHead(text []byte) (h Head, signed bool, err error) {
	body := text
	if i := bytes.Index(text, []byte("\n\n")); i >= 0 {
		body, signed = text[:i+1], true
	}
	lines := strings.Split(string(body), "\n")
	if len(lines) < 4 || lines[len(lines)-1] != "" {
		return Head{}, signed, fmt.Errorf("%w: a checkpoint is at least three lines (origin, size, base64 root), each ending in a newline; got %q", ErrBadHead, truncate(string(body), 200))
	}
	h.Origin = lines[0]
	if h.Origin == "" {
		return Head{}, signed, fmt.Errorf("%w: empty origin line", ErrBadHead)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Head{}, signed, fmt.Errorf("%w: size line %q is not a decimal count", ErrBadHead, truncate(lines[1], 40))
	}
	h.Size = size
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Head{}, signed, fmt.Errorf("%w: root line %q is not a base64 SHA-256 hash", ErrBadHead, truncate(lines[2], 60))
	}
	copy(h.Root[:], root)
	return h, signed, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// GenerateKey makes a new Ed25519 key pair for signing heads: skey is the secret signer key
// (keep it in a file outside the workspace), vkey the verifier key to hand to auditors. name
// identifies the key in signatures: non-empty, no spaces and no '+'.
func GenerateKey(name string) (skey, vkey string, err error) {
	if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r == '+' || unicode.IsSpace(r) }) {
		return "", "", fmt.Errorf("key name %q: a key name is non-empty UTF-8 with no spaces and no '+' (for example host.example/rewind)", name)
	}
	skey, vkey, err = note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", "", fmt.Errorf("generate key %q: %w (a key name is non-empty, with no spaces and no '+')", name, err)
	}
	return skey, vkey, nil
}

// SignHead signs the head's checkpoint as a C2SP signed note with the signer key skey (the
// "PRIVATE+KEY+…" text GenerateKey returns).
func SignHead(h Head, skey string) ([]byte, error) {
	signer, err := note.NewSigner(strings.TrimSpace(skey))
	if err != nil {
		return nil, fmt.Errorf("signing key: %w (want the PRIVATE+KEY+<name>+<hash>+<key> line that \"agent-rewind chain keygen\" writes)", err)
	}
	return note.Sign(&note.Note{Text: h.Checkpoint()}, signer)
}

// OpenSignedHead verifies a signed head against the verifier key vkey and returns the head.
func OpenSignedHead(msg []byte, vkey string) (Head, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return Head{}, fmt.Errorf("%w: verifier key %q: %v (want <name>+<hash>+<key>, as \"agent-rewind chain keygen\" prints)", ErrBadHead, truncate(vkey, 80), err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Head{}, fmt.Errorf("%w: signature does not verify with key %s: %v", ErrBadHead, v.Name(), err)
	}
	h, _, err := ParseHead([]byte(n.Text))
	return h, err
}

// NoteSigners returns the key names of the signature lines of a signed note ("— name sig"), in
// order, without repeats; nil for a bare checkpoint. It does not check the signatures (see
// OpenSignedHead): it says who a head claims to be signed by, for display.
func NoteSigners(text []byte) []string {
	i := bytes.Index(text, []byte("\n\n"))
	if i < 0 {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(text[i+2:]), "\n") {
		rest, ok := strings.CutPrefix(line, "\u2014 ")
		if !ok {
			continue
		}
		name, sig, ok := strings.Cut(rest, " ")
		if !ok || name == "" || sig == "" || !utf8.ValidString(name) || slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
	}
	return names
}
