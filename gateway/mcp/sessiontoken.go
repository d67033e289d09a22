package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"sync"
	"time"
)

// Self-contained session tokens: the scale-out mode of Streamable HTTP.
//
// With StreamableHTTPOptions.SessionSecret set, the Mcp-Session-Id that
// initialize returns is not a key into this replica's memory but a signed
// statement of everything a later request needs: the negotiated revision,
// a digest of the client's capabilities, when it was issued and when it
// expires, and whose it is: the MAC also covers the owner's Principal.ID
// (not stored in the token, which a client can read), so the token
// verifies only for requests of the principal that opened the session. Any replica holding the same secret verifies it (HMAC-SHA256,
// constant-time comparison) and serves the request, so a plain round-robin
// load balancer works without sticky sessions, and an idle session costs
// no memory anywhere.
//
// Layout (then base64url without padding):
//
//	1 byte   format (1)
//	1 byte   len(version), then the version
//	8 bytes  issued at, unix seconds
//	8 bytes  expires at, unix seconds
//	8 bytes  first 8 bytes of SHA-256(client capabilities JSON)
//	8 bytes  random nonce (two sessions never share an id)
//	32 bytes HMAC-SHA256(secret, "mcp-session-token/2" || endpoint || everything above || owner)
//
// The payload's length is fixed by its version byte, so appending the
// owner to the MAC input is unambiguous. Format 1 tokens (before owners)
// no longer verify: their clients initialize again, as after any expiry.
//
// The MAC also covers the endpoint the token was issued at
// (StreamableHTTPOptions.Endpoint), so a token of one endpoint is not a
// session at another that shares the secret: the gateway's toolsets each
// have theirs. The endpoint goes into the MAC input as 0x00, its length
// (one byte) and its bytes, and the empty endpoint (the gateway's /mcp)
// as nothing at all: a payload starts with its format byte, never 0x00,
// so no two endpoints' inputs meet, and the tokens /mcp issued before
// endpoints were bound still verify there.

const (
	tokenFormat  = 2
	tokenDomain  = "mcp-session-token/2"
	tokenMACSize = sha256.Size
	maxTokenLen  = 160 // base64 of the largest payload we mint, with room
)

var errBadToken = errors.New("mcp: invalid session token")

// tokenEncoding is strict base64url: a token has exactly one spelling, so
// it names one entry of a replica's session map (which notifications/cancelled
// and DELETE look up).
var tokenEncoding = base64.RawURLEncoding.Strict()

// tokenKeys signs with the first secret and accepts any of them, so a
// secret can be rotated without ending live sessions.
type tokenKeys struct {
	secrets [][]byte
	ttl     time.Duration
	macs    []sync.Pool // one pool of HMAC states per secret
	// endpoint is what the MAC input holds for the endpoint, after the
	// domain: nothing for "", else 0x00, its length and its bytes.
	endpoint []byte
}

// maxEndpoint is the longest StreamableHTTPOptions.Endpoint: its length
// takes one byte of the MAC input.
const maxEndpoint = 255

// minSessionSecret is the shortest StreamableHTTPOptions.SessionSecret
// accepted: the HMAC key of every session token.
const minSessionSecret = 32

// checkSessionSecret refuses a session secret too short to key the tokens'
// MAC, naming the option.
func checkSessionSecret(secret []byte) error {
	if len(secret) < minSessionSecret {
		return fmt.Errorf("mcp: StreamableHTTPOptions.SessionSecret: want at least %d random bytes, got %d", minSessionSecret, len(secret))
	}
	return nil
}

func newTokenKeys(current []byte, previous [][]byte, ttl time.Duration, endpoint string) (*tokenKeys, error) {
	if err := checkSessionSecret(current); err != nil {
		return nil, err
	}
	if len(endpoint) > maxEndpoint {
		return nil, fmt.Errorf("mcp: StreamableHTTPOptions.Endpoint: want at most %d bytes, got %d", maxEndpoint, len(endpoint))
	}
	k := &tokenKeys{ttl: ttl}
	if endpoint != "" {
		k.endpoint = append([]byte{0, byte(len(endpoint))}, endpoint...)
	}
	k.secrets = append(k.secrets, current)
	k.secrets = append(k.secrets, previous...)
	k.macs = make([]sync.Pool, len(k.secrets))
	for i, sec := range k.secrets {
		k.macs[i].New = func() any { return hmac.New(sha256.New, sec) }
	}
	return k, nil
}

// mint returns a new session token of owner.
func (k *tokenKeys) mint(version string, caps []byte, owner string, now time.Time) string {
	var raw [128]byte
	b := append(raw[:0], tokenFormat, byte(len(version)))
	b = append(b, version...)
	b = binary.BigEndian.AppendUint64(b, uint64(now.Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(now.Add(k.ttl).Unix()))
	d := sha256.Sum256(caps)
	b = append(b, d[:8]...)
	var nonce [8]byte
	rand.Read(nonce[:])
	b = append(b, nonce[:]...)
	b = k.sum(0, b, b, owner)
	return tokenEncoding.EncodeToString(b)
}

// sum appends the MAC of payload and owner under secret i to dst.
func (k *tokenKeys) sum(i int, dst, payload []byte, owner string) []byte {
	m := k.macs[i].Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(tokenDomain))
	m.Write(k.endpoint)
	m.Write(payload)
	m.Write([]byte(owner))
	dst = m.Sum(dst)
	k.macs[i].Put(m)
	return dst
}

// verify checks a token presented by owner and returns the negotiated
// revision and the token's expiry. Expired, malformed, forged and other principals' tokens are
// all errBadToken: the client answer is the same (404, initialize again).
func (k *tokenKeys) verify(token, owner string, now time.Time) (string, time.Time, error) {
	if len(token) > maxTokenLen {
		return "", time.Time{}, errBadToken
	}
	var raw [128]byte
	n, err := tokenEncoding.Decode(raw[:], []byte(token))
	if err != nil || n < 2 {
		return "", time.Time{}, errBadToken
	}
	b := raw[:n]
	vlen := int(b[1])
	if b[0] != tokenFormat || len(b) != 2+vlen+8+8+8+8+tokenMACSize {
		return "", time.Time{}, errBadToken
	}
	payload, mac := b[:len(b)-tokenMACSize], b[len(b)-tokenMACSize:]
	ok := false
	var buf [tokenMACSize]byte
	for i := range k.secrets {
		if hmac.Equal(k.sum(i, buf[:0], payload, owner), mac) {
			ok = true
			break
		}
	}
	if !ok {
		return "", time.Time{}, errBadToken
	}
	exp := int64(binary.BigEndian.Uint64(payload[2+vlen+8:]))
	if now.Unix() >= exp {
		return "", time.Time{}, errBadToken
	}
	v, _ := unquoteIntern(append(append([]byte{'"'}, payload[2:2+vlen]...), '"'), supportedVersions)
	if !isHandshakeVersion(v) {
		return "", time.Time{}, errBadToken
	}
	return v, time.Unix(exp, 0), nil
}

// acquireToken verifies a token of owner and holds this replica's
// transient session for it (created on first use) until release. With a
// Fleet, a token whose session was deleted on any replica is 404, and one
// the fleet cannot vouch for yet (its store unreachable while this
// replica has not read the revocations) is 503: never served.
func (h *streamable) acquireToken(ctx context.Context, sid, owner string) (*httpSession, int, *Error) {
	version, exp, err := h.tokens.verify(sid, owner, time.Now())
	if err != nil {
		return nil, http.StatusNotFound, errorf(CodeInvalidRequest, "session not found or expired")
	}
	var key string
	if h.o.Fleet != nil {
		key = FleetKey(sid)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, http.StatusNotFound, errorf(CodeInvalidRequest, "session not found or expired")
	}
	hs := h.sessions[sid]
	if hs == nil {
		sess := h.s.newSession("streamable-http", sid, owner)
		sess.version = version
		sess.initialized = true // the token was minted after initialize
		if f := h.o.Fleet; f != nil {
			// A cancellation of a call this replica does not run goes to
			// the replica that does.
			sess.relay = func(ctx context.Context, id json.RawMessage) {
				if err := f.Cancel(ctx, key, id); err != nil {
					h.s.log.Warn("mcp: cancellation not relayed to the fleet", "session", sess.logID, "err", err)
				}
			}
		}
		hs = &httpSession{session: sess, closed: make(chan struct{}), expires: exp, fleetKey: key}
		h.sessions[sid] = hs
		if key != "" {
			h.byFleetKey[key] = hs
		}
	}
	hs.active.Add(1)
	h.mu.Unlock()
	if key == "" {
		return hs, 0, nil
	}
	// Asked once the session is registered, so no revocation slips
	// between the question and the registration: one the fleet learnt
	// before it is in the answer (its mirror, or its store, has it before
	// any listener is told), one learnt after it finds the session here
	// and ends it. The question may wait on the store, so it is asked
	// without h.mu.
	revoked, err := h.o.Fleet.Revoked(ctx, key)
	switch {
	case err != nil:
		h.releaseToken(hs)
		// Debug: the store logs its own unavailability once, not per request.
		h.s.log.Debug("mcp: a session token was refused: the fleet cannot tell whether it was deleted", "session", hs.logID, "err", err)
		return nil, http.StatusServiceUnavailable, errorf(CodeInternalError, "this replica cannot tell yet whether the session was deleted (%v); retry shortly", ErrFleetUnavailable)
	case revoked:
		h.releaseToken(hs)
		return nil, http.StatusNotFound, errorf(CodeInvalidRequest, "session not found or expired")
	}
	return hs, 0, nil
}

// releaseToken drops the transient session when nothing uses it any more.
func (h *streamable) releaseToken(hs *httpSession) {
	h.mu.Lock()
	if hs.active.Add(-1) == 0 && !hs.ended {
		hs.ended = true
		if h.sessions[hs.id] == hs {
			delete(h.sessions, hs.id)
		}
		if hs.fleetKey != "" && h.byFleetKey[hs.fleetKey] == hs {
			delete(h.byFleetKey, hs.fleetKey)
		}
		hs.closeLocked()
	}
	h.mu.Unlock()
}
