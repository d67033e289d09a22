package exchange_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// endpoint is a token endpoint that checks what RFC 8693 asks of a
// request and answers with answer; hits counts the requests.
type endpoint struct {
	*httptest.Server
	hits   atomic.Int32
	check  func(r *http.Request) string // "" when the request is right, else why not
	answer func(w http.ResponseWriter, r *http.Request)
	gate   chan struct{} // when set, each request waits for it to close
	// arrived, when set, is told of each request before it waits.
	arrived chan struct{}
}

func newEndpoint(t *testing.T) *endpoint {
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		if e.arrived != nil {
			e.arrived <- struct{}{}
		}
		if e.gate != nil {
			<-e.gate
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		for k, want := range map[string]string{"grant_type": exchange.GrantType, "subject_token_type": exchange.AccessTokenType, "requested_token_type": exchange.AccessTokenType} {
			if got := r.PostForm.Get(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if e.check != nil {
			if why := e.check(r); why != "" {
				t.Error(why)
			}
		}
		if e.answer != nil {
			e.answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "for-backend:" + r.PostForm.Get("subject_token") + ":" + r.PostForm.Get("scope"),
			"issued_token_type": exchange.AccessTokenType, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(e.Close)
	return e
}

func newExchanger(t *testing.T, o exchange.Options) *exchange.Exchanger {
	t.Helper()
	x, err := exchange.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestExchange: a token is exchanged with the client's secret (basic),
// the backend's audience and resource and the scopes, and kept: the same
// caller and scopes make no second request, other scopes or another
// caller do.
func TestExchange(t *testing.T) {
	ep := newEndpoint(t)
	ep.check = func(r *http.Request) string {
		id, secret, ok := r.BasicAuth()
		// RFC 6749 section 2.3.1: each part is form-encoded.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if !ok || id != "gw" || secret != "s3cr%t" {
			return "client_secret_basic: got " + id + ":" + secret
		}
		if r.PostForm.Get("audience") != "zoo" || r.PostForm.Get("resource") != "https://zoo.example.com" {
			return "audience/resource: " + r.PostForm.Encode()
		}
		return ""
	}
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s3cr%t", Audience: "zoo", Resource: "https://zoo.example.com", Scopes: []string{"zoo.read"}})
	ctx := t.Context()
	tok, err := x.Token(ctx, "alice-token", nil, time.Time{})
	if err != nil || tok != "for-backend:alice-token:zoo.read" {
		t.Fatalf("Token: %q, %v", tok, err)
	}
	if again, _ := x.Token(ctx, "alice-token", nil, time.Time{}); again != tok || ep.hits.Load() != 1 {
		t.Errorf("again: %q after %d requests, want the kept token after 1", again, ep.hits.Load())
	}
	if more, _ := x.Token(ctx, "alice-token", []string{"zoo.write"}, time.Time{}); more != "for-backend:alice-token:zoo.read zoo.write" || ep.hits.Load() != 2 {
		t.Errorf("with zoo.write: %q after %d requests", more, ep.hits.Load())
	}
	if bob, _ := x.Token(ctx, "bob-token", nil, time.Time{}); bob != "for-backend:bob-token:zoo.read" || ep.hits.Load() != 3 {
		t.Errorf("bob: %q after %d requests", bob, ep.hits.Load())
	}
}

// TestExchangeShared: concurrent calls for one token share one request.
func TestExchangeShared(t *testing.T) {
	ep := newEndpoint(t)
	ep.gate = make(chan struct{})
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s", Audience: "zoo"})
	var wg sync.WaitGroup
	toks := make([]string, 20)
	for i := range toks {
		wg.Go(func() {
			tok, err := x.Token(context.Background(), "alice", nil, time.Time{})
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	close(ep.gate)
	wg.Wait()
	if n := ep.hits.Load(); n != 1 {
		t.Errorf("%d requests for 20 concurrent calls, want 1", n)
	}
	for _, tok := range toks {
		if tok != toks[0] || tok == "" {
			t.Fatalf("tokens differ: %q", toks)
		}
	}
}

// TestExchangeWaiterCancelled: a caller waiting on another's exchange
// returns when its own context ends; the exchange goes on for the first.
func TestExchangeWaiterCancelled(t *testing.T) {
	ep := newEndpoint(t)
	ep.gate, ep.arrived = make(chan struct{}), make(chan struct{}, 1)
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s", Audience: "zoo"})
	first := make(chan error, 1)
	go func() {
		_, err := x.Token(context.Background(), "alice", nil, time.Time{})
		first <- err
	}()
	<-ep.arrived
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Token(ctx, "alice", nil, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	close(ep.gate)
	if err := <-first; err != nil {
		t.Errorf("first caller: %v", err)
	}
}

// TestExchangeRefused: an OAuth error answer is an *Error with its code
// and description, kept (a second call at once makes no request); so is
// a failure that is not an OAuth answer, for less long.
func TestExchangeRefused(t *testing.T) {
	ep := newEndpoint(t)
	ep.answer = func(w http.ResponseWriter, r *http.Request) {
		if r.PostForm.Get("subject_token") == "broken" {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_target","error_description":"the audience zoo is not allowed for this client"}`))
	}
	var outcomes []string
	var mu sync.Mutex
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s", Audience: "zoo",
		Observe: func(outcome string, _ time.Duration) { mu.Lock(); outcomes = append(outcomes, outcome); mu.Unlock() }})
	for range 2 {
		_, err := x.Token(t.Context(), "alice", nil, time.Time{})
		var xe *exchange.Error
		if !errors.As(err, &xe) || xe.Code != "invalid_target" || xe.Status != 400 || !strings.Contains(xe.Description, "not allowed") {
			t.Fatalf("refused: %v", err)
		}
	}
	if n := ep.hits.Load(); n != 1 {
		t.Errorf("%d requests for a refusal asked twice at once, want 1", n)
	}
	for range 2 {
		_, err := x.Token(t.Context(), "broken", nil, time.Time{})
		var xe *exchange.Error
		if !errors.As(err, &xe) || xe.Code != "failed" || xe.Status != 502 {
			t.Fatalf("broken endpoint: %v", err)
		}
	}
	if n := ep.hits.Load(); n != 2 {
		t.Errorf("%d requests, want 2: a failure is kept for a second", n)
	}
	if strings.Join(outcomes, ",") != "refused,failed" {
		t.Errorf("observed %v", outcomes)
	}
}

// TestExchangeNotAfter: a token kept for a caller is not used past the
// caller's own token's expiry.
func TestExchangeNotAfter(t *testing.T) {
	ep := newEndpoint(t)
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s", Audience: "zoo"})
	past := time.Now().Add(-time.Second)
	for range 2 {
		if _, err := x.Token(t.Context(), "alice", nil, past); err != nil {
			t.Fatal(err)
		}
	}
	if n := ep.hits.Load(); n != 2 {
		t.Errorf("%d requests, want 2: the caller's token had expired", n)
	}
}

// TestExchangePrivateKeyJWT: with a private key the client authenticates
// by a signed assertion (RFC 7523) for the token endpoint, with the
// algorithm of its key type, also from a signer that holds its key
// elsewhere (an HSM, a KMS).
func TestExchangePrivateKeyJWT(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		key  crypto.Signer
		alg  jose.SignatureAlgorithm
	}{
		{"P-256", ecKey, jose.ES256},
		{"RSA", rsaKey, jose.RS256},
		{"Ed25519", edKey, jose.EdDSA},
		{"opaque P-256", opaque{ecKey}, jose.ES256},
	} {
		t.Run(c.name, func(t *testing.T) {
			ep := newEndpoint(t)
			ep.check = func(r *http.Request) string {
				if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.PostForm.Get("client_id") != "gw" {
					return "assertion type or client id: " + r.PostForm.Encode()
				}
				tok, err := jwt.ParseSigned(r.PostForm.Get("client_assertion"), []jose.SignatureAlgorithm{c.alg})
				if err != nil {
					return "assertion: " + err.Error()
				}
				if h := tok.Headers[0]; h.KeyID != "k1" || h.ExtraHeaders["typ"] != "JWT" {
					return "assertion header: kid " + h.KeyID + ", want k1, and typ JWT"
				}
				var claims jwt.Claims
				if err := tok.Claims(c.key.Public(), &claims); err != nil {
					return "assertion: " + err.Error()
				}
				if err := claims.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{ep.URL}, Issuer: "gw", Subject: "gw"}, 0); err != nil {
					return "assertion: " + err.Error()
				}
				if claims.ID == "" || claims.Expiry == nil || claims.IssuedAt == nil {
					return "assertion without jti, exp or iat"
				}
				return ""
			}
			x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", PrivateKey: c.key, KeyID: "k1", Audience: "zoo"})
			if _, err := x.Token(t.Context(), "alice", nil, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if ep.hits.Load() != 1 {
				t.Fatalf("%d requests, want 1", ep.hits.Load())
			}
		})
	}
}

// opaque is a crypto.Signer whose key is out of reach, as an HSM's.
type opaque struct{ s crypto.Signer }

func (o opaque) Public() crypto.PublicKey { return o.s.Public() }
func (o opaque) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return o.s.Sign(r, digest, opts)
}

// TestNewChecks: what New refuses, and why.
func TestNewChecks(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, c := range []struct {
		o    exchange.Options
		want string
	}{
		{exchange.Options{TokenURL: "http://as.example.com/token", ClientID: "gw", ClientSecret: "s", Audience: "a"}, "want https (http only to a loopback address)"},
		// A name that starts like a loopback address is not one: it
		// resolves wherever its owner says.
		{exchange.Options{TokenURL: "http://127.attacker.example/token", ClientID: "gw", ClientSecret: "s", Audience: "a"}, "want https (http only to a loopback address)"},
		{exchange.Options{TokenURL: "http://127.0.0.1.attacker.example/token", ClientID: "gw", ClientSecret: "s", Audience: "a"}, "want https (http only to a loopback address)"},
		{exchange.Options{TokenURL: "token", ClientID: "gw", ClientSecret: "s", Audience: "a"}, "want an absolute https URL"},
		{exchange.Options{TokenURL: "https://as/token", ClientSecret: "s", Audience: "a"}, "client id is required"},
		{exchange.Options{TokenURL: "https://as/token", ClientID: "gw", Audience: "a"}, "exactly one client credential"},
		{exchange.Options{TokenURL: "https://as/token", ClientID: "gw", ClientSecret: "s"}, "an audience or a resource"},
		{exchange.Options{TokenURL: "https://as/token", ClientID: "gw", ClientSecret: "s", Resource: "zoo#x"}, "absolute URI without a fragment"},
		{exchange.Options{TokenURL: "https://as/token", ClientID: "gw", ClientSecret: "s", Audience: "a", Scopes: []string{"a b"}}, `scope "a b" is not a scope token`},
		{exchange.Options{TokenURL: "https://as/token", ClientID: "gw", PrivateKey: key, Audience: "a"}, "want P-256"},
	} {
		if _, err := exchange.New(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v, want %q", c.o, err, c.want)
		}
	}
}

// TestExchangeFailureShared: callers waiting on an exchange that fails, or
// coming just after, all get its failure from the one request (none
// starts another in turn), and the first caller returns when its own
// context ends.
func TestExchangeFailureShared(t *testing.T) {
	ep := newEndpoint(t)
	ep.gate, ep.arrived = make(chan struct{}), make(chan struct{}, 1)
	ep.answer = func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }
	x := newExchanger(t, exchange.Options{TokenURL: ep.URL, ClientID: "gw", ClientSecret: "s", Audience: "zoo"})
	ctx, cancel := context.WithCancel(t.Context())
	leader := make(chan error, 1)
	go func() {
		_, err := x.Token(ctx, "alice", nil, time.Time{})
		leader <- err
	}()
	<-ep.arrived
	cancel()
	if err := <-leader; !errors.Is(err, context.Canceled) {
		t.Errorf("the first caller, cancelled while its exchange runs: %v", err)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			var xe *exchange.Error
			if _, err := x.Token(context.Background(), "alice", nil, time.Time{}); !errors.As(err, &xe) || xe.Code != "failed" {
				t.Errorf("waiter: %v, want the shared failure", err)
			}
		})
	}
	close(ep.gate)
	wg.Wait()
	if n := ep.hits.Load(); n != 1 {
		t.Errorf("%d requests, want the one the first caller started", n)
	}
}
