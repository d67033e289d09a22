// Package oauthtest is an OAuth authorization server for tests: a fresh
// signing key, its JWKS served over HTTP, and access tokens (JWTs) signed
// with it.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Issuer signs tokens with a fresh P-256 key (ES256, key id "k1") and
// serves its public JWKS at URL (any path under it answers the same).
type Issuer struct {
	Key jwk.Key
	URL string
}

// NewIssuer starts an Issuer whose JWKS server stops with the test.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, "k1")
	_ = key.Set(jwk.AlgorithmKey, jwa.ES256())
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		t.Fatal(err)
	}
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	js, _ := json.Marshal(set)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(js)
	}))
	t.Cleanup(srv.Close)
	return &Issuer{Key: key, URL: srv.URL}
}

// Token is an access token from issuer for audience, for subject alice,
// valid for an hour, with scope and the extra claims.
func (is *Issuer) Token(t testing.TB, issuer, audience, scope string, extra map[string]any) string {
	t.Helper()
	b := jwt.NewBuilder().Issuer(issuer).Audience([]string{audience}).Subject("alice").
		Expiration(time.Now().Add(time.Hour)).Claim("scope", scope)
	for k, v := range extra {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), is.Key))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}
