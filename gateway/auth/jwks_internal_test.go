package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// jwksServer serves a JWKS whose keys, headers and status the test sets,
// and counts its fetches.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int32
	// fetched, when set, is told of each fetch.
	fetched chan struct{}

	mu     sync.Mutex
	kids   []string
	header http.Header
	status int
	// ifNoneMatch is the last request's If-None-Match.
	ifNoneMatch string
}

func newJWKSServer(t *testing.T, kids ...string) *jwksServer {
	t.Helper()
	s := &jwksServer{kids: kids, header: http.Header{}, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.ifNoneMatch = r.Header.Get("If-None-Match")
		for k, v := range s.header {
			w.Header()[k] = v
		}
		status, kids := s.status, s.kids
		etag := s.header.Get("ETag")
		s.mu.Unlock()
		s.fetches.Add(1)
		if s.fetched != nil {
			defer func() { s.fetched <- struct{}{} }()
		}
		switch {
		case status != http.StatusOK:
			w.WriteHeader(status)
		case etag != "" && r.Header.Get("If-None-Match") == etag:
			w.WriteHeader(http.StatusNotModified)
		default:
			var set jose.JSONWebKeySet
			for _, kid := range kids {
				key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
				if err != nil {
					t.Error(err)
				}
				set.Keys = append(set.Keys, jose.JSONWebKey{Key: &key.PublicKey, KeyID: kid, Algorithm: "ES256"})
			}
			_ = json.NewEncoder(w).Encode(set)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// set changes what the server answers from now on.
func (s *jwksServer) set(status int, header http.Header, kids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.header, s.kids = status, header, kids
}

// hand schedules a key source's refreshes for the test: each one asked
// for is sent on armed, and runs only when the test fires it.
type hand struct {
	armed   chan time.Duration
	mu      sync.Mutex
	f       func()
	stopped int
}

func newHand() *hand { return &hand{armed: make(chan time.Duration, 1)} }

func (h *hand) after(d time.Duration, f func()) func() bool {
	h.mu.Lock()
	h.f = f
	h.mu.Unlock()
	h.armed <- d
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.stopped++
		return true
	}
}

// fire runs the refresh last scheduled, as its timer would.
func (h *hand) fire() {
	h.mu.Lock()
	f := h.f
	h.mu.Unlock()
	f()
}

// next is the delay of the refresh scheduled since the last call.
func (h *hand) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-h.armed:
		return d
	default:
		t.Fatal("no refresh scheduled")
		return 0
	}
}

func kids(ks *keySource) string {
	var out []string
	for _, k := range *ks.keys.Load() {
		out = append(out, k.KeyID)
	}
	return strings.Join(out, ",")
}

func startTestKeySource(t *testing.T, url string, log *slog.Logger, after func(time.Duration, func()) func() bool) *keySource {
	t.Helper()
	cfg := &OAuthConfig{JWKSURL: url, JWKSMinRefresh: time.Minute, JWKSMaxRefresh: time.Hour}
	ks, err := startKeySource(context.Background(), cfg, log, after)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ks.close)
	return ks
}

// TestKeySourceInterval: the next refresh is due when the JWKS response's
// caching headers say, within JWKSMinRefresh (1m here) and
// JWKSMaxRefresh (1h), and at JWKSMaxRefresh when they say nothing.
func TestKeySourceInterval(t *testing.T) {
	date := time.Now().UTC().Truncate(time.Second)
	for _, c := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"no caching headers", http.Header{}, time.Hour},
		{"max-age", http.Header{"Cache-Control": {"public, max-age=120"}}, 2 * time.Minute},
		{"max-age below the minimum", http.Header{"Cache-Control": {"max-age=5"}}, time.Minute},
		{"max-age above the maximum", http.Header{"Cache-Control": {"max-age=86400"}}, time.Hour},
		{"no-store", http.Header{"Cache-Control": {"no-store"}}, time.Minute},
		{"bad max-age", http.Header{"Cache-Control": {"max-age=soon"}}, time.Minute},
		{"max-age over Expires", http.Header{"Cache-Control": {"max-age=600"}, "Expires": {date.Add(time.Minute * 30).Format(http.TimeFormat)}, "Date": {date.Format(http.TimeFormat)}}, 10 * time.Minute},
		{"Expires after Date", http.Header{"Expires": {date.Add(20 * time.Minute).Format(http.TimeFormat)}, "Date": {date.Format(http.TimeFormat)}}, 20 * time.Minute},
		{"Expires invalid", http.Header{"Expires": {"0"}}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newJWKSServer(t, "k1")
			srv.set(http.StatusOK, c.header, "k1")
			h := newHand()
			startTestKeySource(t, srv.URL, slog.New(slog.DiscardHandler), h.after)
			if got := h.next(t); got != c.want {
				t.Errorf("next refresh in %v, want %v", got, c.want)
			}
			if n := srv.fetches.Load(); n != 1 {
				t.Errorf("%d fetches at start, want 1", n)
			}
		})
	}
}

// TestKeySourceRefresh: each background refresh fetches the set once and
// schedules the next; a failed one keeps the keys held, logs why and
// tries again after JWKSMinRefresh; an unchanged set (304 to
// If-None-Match) keeps them too; after close nothing is fetched or
// scheduled.
func TestKeySourceRefresh(t *testing.T) {
	srv := newJWKSServer(t, "k1")
	srv.set(http.StatusOK, http.Header{"Cache-Control": {"max-age=120"}}, "k1")
	logs := &testkit.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h := newHand()
	ks := startTestKeySource(t, srv.URL, log, h.after)
	if d := h.next(t); d != 2*time.Minute || kids(ks) != "k1" {
		t.Fatalf("at start: next in %v, keys %q", d, kids(ks))
	}

	srv.set(http.StatusOK, http.Header{"Cache-Control": {"max-age=300"}}, "k2")
	h.fire()
	if d, n := h.next(t), srv.fetches.Load(); d != 5*time.Minute || n != 2 || kids(ks) != "k2" {
		t.Fatalf("refreshed: next in %v after %d fetches, keys %q; want 5m, 2, k2", d, n, kids(ks))
	}

	srv.set(http.StatusServiceUnavailable, http.Header{"Cache-Control": {"max-age=3000"}})
	h.fire()
	if d, n := h.next(t), srv.fetches.Load(); d != time.Minute || n != 3 || kids(ks) != "k2" {
		t.Fatalf("failed refresh: next in %v after %d fetches, keys %q; want 1m, 3, the k2 already held", d, n, kids(ks))
	}
	if !strings.Contains(logs.String(), "refreshing the JWKS failed; keeping the keys already fetched") || !strings.Contains(logs.String(), "503") {
		t.Errorf("the failed refresh is not logged with its cause:\n%s", logs)
	}
	if _, err := ks.candidates(jose.ES256, "k2"); err != nil {
		t.Errorf("the key held before the failed refresh: %v", err)
	}

	srv.set(http.StatusOK, http.Header{"Etag": {`"v3"`}}, "k3")
	h.fire()
	if d := h.next(t); d != time.Hour || kids(ks) != "k3" {
		t.Fatalf("set with an ETag: next in %v, keys %q", d, kids(ks))
	}
	// The server still has v3: it answers 304, and the keys stay.
	h.fire()
	srv.mu.Lock()
	inm := srv.ifNoneMatch
	srv.mu.Unlock()
	if d := h.next(t); d != time.Hour || kids(ks) != "k3" || inm != `"v3"` {
		t.Fatalf("unchanged set: next in %v, keys %q, If-None-Match %q", d, kids(ks), inm)
	}

	before := srv.fetches.Load()
	ks.close()
	if h.stopped != 1 {
		t.Errorf("close stopped %d timers, want 1", h.stopped)
	}
	h.fire() // a timer that fired as close stopped it
	if n := srv.fetches.Load(); n != before {
		t.Errorf("%d fetches after close", n-before)
	}
	select {
	case d := <-h.armed:
		t.Errorf("a refresh in %v scheduled after close", d)
	default:
	}
}

// TestKeySourceUnknownKid: a kid the set does not hold makes the source
// fetch it at once, at most once per JWKSMinRefresh, and the rotated-in
// key is then a candidate; the background schedule is left as it was.
func TestKeySourceUnknownKid(t *testing.T) {
	srv, h, ks := startRotated(t)
	now := time.Now()
	if !ks.refreshForUnknownKey(t.Context(), now) {
		t.Fatal("no refresh for an unknown kid")
	}
	if _, err := ks.candidates(jose.ES256, "k2"); err != nil || srv.fetches.Load() != 2 {
		t.Fatalf("rotated-in key after the refresh: %v after %d fetches", err, srv.fetches.Load())
	}
	if ks.refreshForUnknownKey(t.Context(), now.Add(59*time.Second)) || srv.fetches.Load() != 2 {
		t.Error("a second refresh within JWKSMinRefresh")
	}
	if !ks.refreshForUnknownKey(t.Context(), now.Add(time.Minute)) || srv.fetches.Load() != 3 {
		t.Error("no refresh once JWKSMinRefresh has passed")
	}
	select {
	case d := <-h.armed:
		t.Errorf("a forced refresh scheduled a background one in %v", d)
	default:
	}
}

// TestKeySourceUnknownKidHungUp: the refresh for an unknown kid is not
// the request's to cancel: a forger who hangs up at once would otherwise
// spend the rate limit's slot on a fetch that never happens, and keep a
// rotation from being picked up.
func TestKeySourceUnknownKidHungUp(t *testing.T) {
	srv, _, ks := startRotated(t)
	gone, hangUp := context.WithCancel(t.Context())
	hangUp()
	if !ks.refreshForUnknownKey(gone, time.Now()) {
		t.Fatal("the refresh for an unknown kid failed with the request gone")
	}
	if _, err := ks.candidates(jose.ES256, "k2"); err != nil {
		t.Errorf("rotated-in key after a refresh asked by a request that hung up: %v", err)
	}
	// Once closed, the source fetches nothing more for a straggler.
	ks.close()
	before := srv.fetches.Load()
	if ks.refreshForUnknownKey(t.Context(), time.Now().Add(time.Hour)) || srv.fetches.Load() != before {
		t.Error("a refresh for an unknown kid after close")
	}
}

// TestKeySourceClose: with real timers refreshing every few
// milliseconds, close stops them and leaves no goroutine behind, even
// with a fetch under way.
func TestKeySourceClose(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv := newJWKSServer(t, "k1")
	srv.fetched = make(chan struct{}, 100)
	cfg := &OAuthConfig{JWKSURL: srv.URL, JWKSMinRefresh: time.Millisecond, JWKSMaxRefresh: 2 * time.Millisecond}
	ks, err := startKeySource(t.Context(), cfg, slog.New(slog.DiscardHandler), afterFunc)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-srv.fetched // the start-up fetch and two refreshes
	}
	// (That no timer is left armed, which is no goroutine, is
	// TestKeySourceRefresh's to show.)
	ks.close()
	srv.Close()
	if err := goleak.Find(ignore); err != nil {
		t.Error(err)
	}
	// A failed start leaves nothing running either.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cfg.JWKSURL = dead.URL
	if _, err := startKeySource(t.Context(), cfg, slog.New(slog.DiscardHandler), afterFunc); err == nil {
		t.Fatal("start against a closed server succeeded")
	}
	testkit.WaitFor(t, "no goroutine left", func() bool { return goleak.Find(ignore) == nil })
}

// TestParseJWKS: keys that cannot verify a token (unknown types, curves,
// symmetric keys) are left out without making the set unusable; a body
// that is not a key set is an error.
func TestParseJWKS(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good, _ := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "ok"})
	body := `{"keys":[` + string(good) + `,{"kty":"EC","crv":"secp256k1","x":"AA","y":"AA","kid":"k"},{"kty":"oct","k":"c2VjcmV0","kid":"h"},{"kty":"XYZ"}]}`
	keys, skipped, err := parseJWKS([]byte(body))
	if err != nil || len(keys) != 1 || keys[0].KeyID != "ok" || len(skipped) != 3 {
		t.Errorf("parseJWKS: %d keys, skipped %q, %v; want the one P-256 key and 3 skipped", len(keys), skipped, err)
	}
	for _, bad := range []string{`[]`, `{}`, `not json`, `{"keys":{}}`} {
		if _, _, err := parseJWKS([]byte(bad)); err == nil {
			t.Errorf("parseJWKS(%s): no error", bad)
		}
	}
}

// FuzzParseJWKS: whatever the JWKS answers, reading it does not panic,
// and every key kept is a public key of a type that verifies signatures.
func FuzzParseJWKS(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k"}, {Key: key, KeyID: "private"}}})
	for _, s := range []string{string(good), `{"keys":[]}`, `{"keys":[{"kty":"oct","k":"AA"}]}`, `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AA"}]}`, `{}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		keys, _, err := parseJWKS(body)
		if err != nil && len(keys) != 0 {
			t.Fatalf("keys %v with an error %v", keys, err)
		}
		for _, k := range keys {
			if !k.IsPublic() || keyTypeOf(k.Key) == "" {
				t.Fatalf("kept %T (kid %q): not a public signature key", k.Key, k.KeyID)
			}
			if rk, ok := k.Key.(*rsa.PublicKey); ok && rk.N.BitLen() < minRSABits {
				t.Fatalf("kept an RSA key of %d bits (kid %q)", rk.N.BitLen(), k.KeyID)
			}
		}
	})
}

// FuzzRefreshInterval: whatever the caching headers say, the next
// refresh is within JWKSMinRefresh and JWKSMaxRefresh.
func FuzzRefreshInterval(f *testing.F) {
	for _, s := range [][3]string{
		{"max-age=60", "", ""}, {"no-store, max-age=5", "", ""}, {"max-age=-1", "", ""},
		{"max-age=99999999999999999999", "", ""}, {"", "Mon, 02 Jan 2006 15:04:05 GMT", "Mon, 02 Jan 2006 15:00:05 GMT"},
		{`max-age="30"`, "0", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, cc, expires, date string) {
		h := http.Header{"Cache-Control": {cc}, "Expires": {expires}, "Date": {date}}
		if d := refreshInterval(h, time.Now(), time.Minute, time.Hour); d < time.Minute || d > time.Hour {
			t.Fatalf("Cache-Control %q, Expires %q, Date %q: next refresh in %v, outside [1m, 1h]", cc, expires, date, d)
		}
	})
}

// startRotated starts a source on a set holding k1, then rotates k2 into
// the set the server answers; the source has not seen k2.
func startRotated(t *testing.T) (*jwksServer, *hand, *keySource) {
	t.Helper()
	srv := newJWKSServer(t, "k1")
	h := newHand()
	ks := startTestKeySource(t, srv.URL, slog.New(slog.DiscardHandler), h.after)
	h.next(t)
	srv.set(http.StatusOK, http.Header{}, "k1", "k2")
	if _, err := ks.candidates(jose.ES256, "k2"); err != errNoKey {
		t.Fatalf("unknown kid: %v, want errNoKey", err)
	}
	return srv, h, ks
}
