package tape

import (
	"crypto/hmac"
	"fmt"
)

// Codec seals, opens and authenticates one tenant's values exactly as the SQLite tape does. It
// exists for other stores of the same tape (the PostgreSQL store in tape/pgtape): they keep
// rows, this package keeps the format, the keys and the error semantics, so that a record
// means the same thing wherever it is stored and the store never sees a body in the clear.
type Codec struct {
	s       *sealer
	opts    Options
	where   string
	keyHint string
}

// NewCodec derives the tenant's keys from key (32 bytes) as [Open] does. opts.Tenant, MaxBody
// and AnswerHeaders are used (defaults filled in); opts.Dir is ignored. where names the store
// in error messages ("PostgreSQL table records"); keyHint says where the key comes from, for
// a wrong-key message.
func NewCodec(key []byte, opts Options, where, keyHint string) (*Codec, error) {
	opts.Dir = "-"
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	k, err := deriveKeys(key)
	if err != nil {
		return nil, err
	}
	s, err := newSealer(k, opts.Tenant)
	if err != nil {
		return nil, err
	}
	opts.Key = nil
	return &Codec{s: s, opts: opts, where: where, keyHint: keyHint}, nil
}

// Tenant is the tenant whose values this Codec seals.
func (c *Codec) Tenant() string { return c.opts.Tenant }

// KeyID is the public identifier of the tenant's key (meta.key_id).
func (c *Codec) KeyID() []byte { return c.s.keyID }

// KeyCheck seals the known key-check value (meta.key_check).
func (c *Codec) KeyCheck() []byte { return c.s.keyCheck() }

// CheckKey tells a wrong key from a damaged key-check row, as [Open] does: nil when both the
// key id and the key check match, ErrWrongKey when neither does, ErrCorrupt otherwise.
func (c *Codec) CheckKey(keyID, check []byte) error {
	idOK, checkOK := hmac.Equal(keyID, c.s.keyID), c.s.checkKey(check)
	switch {
	case idOK && checkOK:
		return nil
	case !idOK && !checkOK:
		return fmt.Errorf("%w: tenant %q's store %s was created with another key (key id %x, this key's id %x): %s; a lost key cannot be recovered", ErrWrongKey, c.opts.Tenant, c.where, short(keyID), short(c.s.keyID), c.keyHint)
	default:
		return fmt.Errorf("%w: %s: tenant %q's key id and key check disagree, so the key check row is damaged: restore it from a backup", ErrCorrupt, c.where, c.opts.Tenant)
	}
}

// Prepared is a call checked and encoded for recording, sealed once its position is known.
type Prepared struct {
	c                   *Codec
	hash                Hash
	tag                 []byte
	reqPlain, respPlain []byte
}

// Prepare checks call as [Recorder.Record] does (ErrTooLarge, ErrInvalid) and encodes it.
func (c *Codec) Prepare(call Call) (*Prepared, error) {
	if err := checkCall(call, c.opts.MaxBody); err != nil {
		return nil, err
	}
	reqHeaders := pickHeaders(call.Request.Header, c.opts.AnswerHeaders, true)
	h := hashCanonical(call.Request.Method, call.Request.Path, reqHeaders, call.Request.hashedBody())
	return &Prepared{
		c:         c,
		hash:      h,
		tag:       c.s.requestTag(h),
		reqPlain:  encodeRequest(h, call.Request.Method, call.Request.Path, reqHeaders, call.Request.Body),
		respPlain: encodeResponse(call.Response.Status, pickHeaders(call.Response.Header, DroppedResponseHeaders, false), call.Response.Body),
	}, nil
}

// Tag is the request's keyed tag (records.request_tag).
func (p *Prepared) Tag() []byte { return p.tag }

// Seal seals the request and the response for position of epoch (records.request, records.response).
func (p *Prepared) Seal(epoch string, position int64) (request, response []byte) {
	s := p.c.s
	return s.seal(p.reqPlain, s.ad(epoch, position, kindRequest, nil)),
		s.seal(p.respPlain, s.ad(epoch, position, kindResponse, p.tag))
}

// Match checks req as [Cursor.Next] does (ErrInvalid) and returns its canonical hash and tag.
func (c *Codec) Match(req Request) (Hash, []byte, error) {
	if err := checkRequest(req); err != nil {
		return Hash{}, nil, err
	}
	h := RequestHash(req, c.opts.AnswerHeaders)
	return h, c.s.requestTag(h), nil
}

// OpenResponse authenticates and decodes the response sealed at position of epoch under tag:
// ErrTampered if it does not authenticate, ErrCorrupt if it does but does not decode.
func (c *Codec) OpenResponse(epoch string, pos int64, tag, sealed []byte) (Response, error) {
	plain, ok := c.s.open(sealed, c.s.ad(epoch, pos, kindResponse, tag))
	if !ok {
		return Response{}, c.Tampered(epoch, pos, "response")
	}
	resp, err := decodeResponse(plain)
	if err != nil {
		return Response{}, fmt.Errorf("%w: the response at position %d of epoch %q in %s authenticates but does not decode (%v): restore it from a backup", ErrCorrupt, pos, epoch, c.where, err)
	}
	return resp, nil
}

// OpenRequestHash authenticates the request sealed at position of epoch and returns its hash
// (for a strict miss's message), checking it against the row's tag.
func (c *Codec) OpenRequestHash(epoch string, pos int64, tag, sealed []byte) (Hash, error) {
	plain, ok := c.s.open(sealed, c.s.ad(epoch, pos, kindRequest, nil))
	if !ok {
		return Hash{}, c.Tampered(epoch, pos, "request")
	}
	req, err := decodeRequest(plain)
	if err != nil {
		return Hash{}, fmt.Errorf("%w: the request at position %d of epoch %q in %s authenticates but does not decode (%v): restore it from a backup", ErrCorrupt, pos, epoch, c.where, err)
	}
	if !hmac.Equal(tag, c.s.requestTag(req.hash)) {
		return Hash{}, c.Tampered(epoch, pos, "request tag")
	}
	return req.hash, nil
}

// Tampered is the ErrTampered error for what at position of epoch.
func (c *Codec) Tampered(epoch string, pos int64, what string) error {
	return fmt.Errorf("%w: the %s at position %d of epoch %q of tenant %q in %s does not authenticate: it was altered, or moved from another position, epoch or tenant; restore it from a backup, or record the epoch again", ErrTampered, what, pos, epoch, c.opts.Tenant, c.where)
}

// CursorMAC authenticates a cursor row (cursors.mac).
func (c *Codec) CursorMAC(epoch, cursor string, pos int64) []byte {
	return c.s.cursorMAC(epoch, cursor, pos)
}

// RequestIDMAC authenticates a served request id (cursor_requests.mac).
func (c *Codec) RequestIDMAC(epoch, cursor, id string, pos int64) []byte {
	return c.s.requestIDMAC(epoch, cursor, id, pos)
}

// SealReplay seals a replay-store value under its key: kind 4, epoch "", position 0, and the
// key as the tag in the additional data, so a value moved to another key or tenant fails.
func (c *Codec) SealReplay(key, plain []byte) []byte {
	return c.s.seal(plain, c.s.ad("", 0, kindReplay, key))
}

// OpenReplay opens a value sealed with SealReplay under key (ok false: it does not authenticate).
func (c *Codec) OpenReplay(key, sealed []byte) (plain []byte, ok bool) {
	return c.s.open(sealed, c.s.ad("", 0, kindReplay, key))
}
