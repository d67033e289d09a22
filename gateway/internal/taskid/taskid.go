// Package taskid mints and verifies the ids of the gateway's MCP tasks.
//
// A task's id is not the operation's name but a signed statement of
// whose task it is and what it may reach: the backend, the method of the
// tool that started it, the operation's name and when it was started,
// MACed together with the owner, the principal that started it (not
// stored: the id does not tell who its owner is). Any replica holding the
// same key verifies it, so tasks keep needing no state in the gateway,
// and a task method checks the id before any backend is called: an id
// the gateway did not issue, or issued to someone else, is a task that
// does not exist. The MCP tasks texts ask for exactly this: tasks bound to
// the authorization context, and ids nobody can guess.
//
// Layout (then strict base64url without padding):
//
//	1 byte    format (1)
//	uvarint   len(backend), then the backend's name
//	uvarint   len(method), then the full method "/pkg.Service/Method"
//	uvarint   len(operation), then the operation's name
//	8 bytes   started at, unix seconds
//	32 bytes  HMAC-SHA256(key, "grpc-mcp-gateway task-id/1" || everything above || uvarint len(owner) || owner)
//
// The key is derived from the Streamable HTTP session secret when there
// is one (so a fleet sharing it shares tasks, and a retired secret still
// verifies until it is dropped); otherwise it is random per process, and
// a task outlives neither the process nor a move to another replica.
package taskid

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

const (
	taskIDFormat = 1
	taskIDDomain = "grpc-mcp-gateway task-id/1"
	// taskKeyLabel derives the task key from a session secret, so the
	// two never MAC the same bytes with the same key.
	taskKeyLabel = "grpc-mcp-gateway task-id key"
	// MaxLen bounds the ids decoded: operation names are short in
	// every API seen (AIP-151 names are a collection and an id), and the
	// bound keeps a hostile id from costing more than a small decode.
	MaxLen = 2048
	// MaxField bounds each name in an id at issue; a longer one
	// (which no real backend sends) makes the call answer without a task.
	MaxField = 1024
)

// ErrInvalid is every failure to verify an id.
var ErrInvalid = errors.New("not a task id of this gateway")

// Ref is what a task id says.
type Ref struct {
	Backend, Method, Operation string
	Started                    time.Time
}

// Keys sign task ids with the first key and accept any of them.
type Keys struct {
	keys [][]byte
}

// NewKeys derives the keys from the session secrets (the signing one
// first), or makes a random one when there is none.
func NewKeys(secret []byte, previous [][]byte) (*Keys, error) {
	if len(secret) == 0 {
		k := make([]byte, sha256.Size)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		return &Keys{keys: [][]byte{k}}, nil
	}
	tk := &Keys{}
	for _, s := range append([][]byte{secret}, previous...) {
		m := hmac.New(sha256.New, s)
		m.Write([]byte(taskKeyLabel))
		tk.keys = append(tk.keys, m.Sum(nil))
	}
	return tk, nil
}

// Mint returns the id of r for owner, or false when a name is too long
// to go in one.
func (tk *Keys) Mint(r Ref, owner string) (string, bool) {
	if len(r.Backend) > MaxField || len(r.Method) > MaxField || len(r.Operation) > MaxField {
		return "", false
	}
	b := make([]byte, 0, 1+3*binary.MaxVarintLen16+len(r.Backend)+len(r.Method)+len(r.Operation)+8+sha256.Size)
	b = append(b, taskIDFormat)
	for _, f := range []string{r.Backend, r.Method, r.Operation} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(r.Started.Unix()))
	b = append(b, taskMAC(tk.keys[0], b, owner)...)
	id := base64.RawURLEncoding.EncodeToString(b)
	return id, len(id) <= MaxLen
}

// Parse verifies id for owner and returns what it says; any failure is
// ErrInvalid, so the caller cannot tell a forged id from another's.
func (tk *Keys) Parse(id, owner string) (Ref, error) {
	if len(id) > MaxLen {
		return Ref{}, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(id)
	if err != nil || len(raw) < 1+3+8+sha256.Size || raw[0] != taskIDFormat {
		return Ref{}, ErrInvalid
	}
	payload, mac := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	ok := false
	for _, k := range tk.keys {
		ok = ok || hmac.Equal(mac, taskMAC(k, payload, owner))
	}
	if !ok {
		return Ref{}, ErrInvalid
	}
	// Signed by us, so well formed; read it defensively all the same.
	rest := payload[1:]
	var fields [3]string
	for i := range fields {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return Ref{}, ErrInvalid
		}
		fields[i] = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	if len(rest) != 8 {
		return Ref{}, ErrInvalid
	}
	return Ref{Backend: fields[0], Method: fields[1], Operation: fields[2],
		Started: time.Unix(int64(binary.BigEndian.Uint64(rest)), 0)}, nil
}

func taskMAC(key, payload []byte, owner string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(taskIDDomain))
	m.Write(payload)
	// The owner's length goes first, so no payload and owner pair MACs
	// the same bytes as another.
	m.Write(binary.AppendUvarint(nil, uint64(len(owner))))
	m.Write([]byte(owner))
	return m.Sum(nil)
}
