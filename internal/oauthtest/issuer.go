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

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer signs tokens with a fresh P-256 key (ES256, key id "k1") and
// serves its public JWKS at URL (any path under it answers the same).
type Issuer struct {
	Key *ecdsa.PrivateKey
	URL string
}

// NewIssuer starts an Issuer whose JWKS server stops with the test.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: string(jose.ES256)}}}
	js, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
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
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.Key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"iss": issuer, "aud": []string{audience}, "sub": "alice",
		"exp": time.Now().Add(time.Hour).Unix(), "scope": scope}
	for k, v := range extra {
		c[k] = v
	}
	s, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
