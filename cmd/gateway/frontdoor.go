package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/grpcmeta"
	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// frontDoor holds the flags of the HTTP front door: TLS on the listener,
// authentication, and what of a request is passed to the backend.
type frontDoor struct {
	tlsCert, tlsKey     string
	bearerTokensFile    string
	oauthJWKSURL        string
	oauthIssuer         string
	oauthAudience       string
	oauthResource       string
	oauthRequiredScopes stringList
	oauthToolScopes     stringList
	forwardClaims       stringList
	forwardHeaders      stringList
	metadata            stringList

	// Derived by check.
	tls        *tls.Config
	md         metadata.MD
	toolScopes map[string][]string
	claims     []auth.ClaimHeader
}

// check validates the flags and loads what must be readable at start, so
// every mistake is reported naming its flag before anything is served.
func (f *frontDoor) check(stdio bool, scopes *gateway.ScopeOptions) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return settingErrorf("%s and %s must be given together", flagName("tls-cert"), flagName("tls-key"))
	}
	oauth := f.oauthJWKSURL != ""
	if f.bearerTokensFile != "" && oauth {
		return settingErrorf("%s and %s: choose one authentication mode", flagName("bearer-tokens-file"), flagName("oauth-jwks-url"))
	}
	if stdio {
		for name, v := range map[flagName]bool{
			"tls-cert": f.tlsCert != "", "bearer-tokens-file": f.bearerTokensFile != "", "oauth-jwks-url": oauth,
		} {
			if v {
				return settingErrorf("%s applies to HTTP only; with %s the client that starts the gateway is trusted", name, flagName("stdio"))
			}
		}
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return settingErrorf("%s/%s: %w", flagName("tls-cert"), flagName("tls-key"), err)
		}
		f.tls = serverTLS(cert)
	}
	if f.bearerTokensFile != "" {
		fh, err := os.Open(f.bearerTokensFile)
		if err != nil {
			return settingErrorf("%s: %w", flagName("bearer-tokens-file"), err)
		}
		fh.Close()
	}
	if !oauth {
		for name, set := range map[flagName]bool{
			"oauth-issuer": f.oauthIssuer != "", "oauth-audience": f.oauthAudience != "", "oauth-resource": f.oauthResource != "",
			"oauth-required-scope": len(f.oauthRequiredScopes) > 0, "oauth-tool-scope": len(f.oauthToolScopes) > 0,
			"strict-scopes": scopes.Strict, "forward-claim": len(f.forwardClaims) > 0, "list-visible-only": scopes.ListVisibleOnly,
		} {
			if set {
				return settingErrorf("%s needs %s", name, flagName("oauth-jwks-url"))
			}
		}
	} else {
		if err := checkJWKSURL(f.oauthJWKSURL); err != nil {
			return err
		}
		if f.oauthIssuer == "" {
			return settingErrorf("%s is required with %s", flagName("oauth-issuer"), flagName("oauth-jwks-url"))
		}
		if f.oauthResource != "" {
			if u, err := url.Parse(f.oauthResource); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
				return settingErrorf("%s: want an absolute URI such as https://mcp.example.com/mcp, got %q", flagName("oauth-resource"), f.oauthResource)
			}
		}
		if f.oauthAudience == "" && f.oauthResource == "" {
			return settingErrorf("%s (or %s) is required with %s: tokens must be checked for this resource", flagName("oauth-audience"), flagName("oauth-resource"), flagName("oauth-jwks-url"))
		}
	}
	for _, ts := range f.oauthToolScopes {
		rule, scope, ok := strings.Cut(ts, "=")
		if !ok || rule == "" || scope == "" || strings.ContainsAny(scope, " \t\"\\") {
			return about("oauth-tool-scope", fmt.Errorf("want RULE=SCOPE (RULE: a tool name or a package.Service/Method pattern; SCOPE: one scope), got %q", ts))
		}
		if err := gateway.CheckScopeRule(rule); err != nil {
			return err
		}
		if f.toolScopes == nil {
			f.toolScopes = map[string][]string{}
		}
		f.toolScopes[rule] = append(f.toolScopes[rule], scope)
	}
	for _, s := range f.oauthRequiredScopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			return settingErrorf("%s: want one scope, got %q", flagName("oauth-required-scope"), s)
		}
	}
	for _, fc := range f.forwardClaims {
		claim, header, ok := strings.Cut(fc, "=")
		if !ok || claim == "" || header == "" {
			return settingErrorf("%s: want CLAIM=HEADER, got %q", flagName("forward-claim"), fc)
		}
		if err := grpcmeta.CheckForwardHeader(header); err != nil {
			return settingErrorf("%s %s: %w", flagName("forward-claim"), fc, err)
		}
		f.claims = append(f.claims, auth.ClaimHeader{Claim: claim, Header: header})
	}
	for _, h := range f.forwardHeaders {
		if err := grpcmeta.CheckForwardHeader(h); err != nil {
			return about("forward-header", err)
		}
		if gateway.IsClientCredential(h) && (f.bearerTokensFile != "" || oauth) {
			return settingErrorf("%s %s: refused while %s or %s is on: the client's token is for this gateway, "+
				"and the MCP specification forbids passing it through to the backend; send the verified identity with %s CLAIM=HEADER, "+
				"or the backend's own credential with %s authorization=...", flagName("forward-header"), h, flagName("bearer-tokens-file"), flagName("oauth-jwks-url"), flagName("forward-claim"), flagName("metadata"))
		}
	}
	md, err := gateway.ParseMetadata(f.metadata)
	if err != nil {
		return about("metadata", err)
	}
	f.md = md
	return nil
}

// serverTLS is the listener's TLS configuration: TLS 1.2 and later with
// Go's default (forward-secret, AEAD) cipher suites, HTTP/2 offered.
func serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
	}
}

// authenticator starts the configured authentication, or returns nil when
// none is configured.
func (f *frontDoor) authenticator(ctx context.Context, logger *slog.Logger) (*auth.Authenticator, error) {
	cfg := auth.Config{Logger: logger}
	switch {
	case f.bearerTokensFile != "":
		cfg.BearerTokensFile = f.bearerTokensFile
	case f.oauthJWKSURL != "":
		cfg.OAuth = &auth.OAuthConfig{
			JWKSURL:        f.oauthJWKSURL,
			Issuer:         f.oauthIssuer,
			Audience:       f.oauthAudience,
			Resource:       f.oauthResource,
			RequiredScopes: f.oauthRequiredScopes,
			ToolScopes:     f.toolScopes,
			ForwardClaims:  f.claims,
		}
	default:
		return nil, nil
	}
	return auth.New(ctx, cfg)
}

// forwardHeaderNames is --forward-header plus the headers --forward-claim
// fills in: the auth middleware sets those from the token, and the gateway
// copies them to the backend like any forwarded header.
func (f *frontDoor) forwardHeaderNames() []string {
	names := append([]string(nil), f.forwardHeaders...)
	for _, c := range f.claims {
		names = append(names, c.Header)
	}
	return names
}

// checkJWKSURL is auth.CheckJWKSURL's rule in the flag's words: an https
// URL, or http to a loopback address, since whoever answers the fetch can
// mint tokens.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return settingErrorf("%s: want an https URL, got %q", flagName("oauth-jwks-url"), raw)
	}
	if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
		return settingErrorf("%s %s: the JWKS must be fetched over https (plain http is allowed only to a loopback address): anyone on the path could substitute signing keys", flagName("oauth-jwks-url"), raw)
	}
	// The library's rule stays the judge: a URL it refuses that this
	// check let through is a bug here, reported as one.
	if err := auth.CheckJWKSURL(raw); err != nil {
		return settingErrorf("%s: %w", flagName("oauth-jwks-url"), err)
	}
	return nil
}
