package auth

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// MetadataPath is where RFC 9728 protected-resource metadata is served;
// the gateway also serves it with the resource's path appended
// (/.well-known/oauth-protected-resource/mcp), the form clients derive
// from the resource URI.
const MetadataPath = "/.well-known/oauth-protected-resource"

// resource is the canonical URI of this server as the metadata names it.
// Without OAuthConfig.Resource it is derived from the request's Host and
// TLS state; the gateway's Host check decides which hosts get that far.
func (ov *oauthValidator) resource(r *http.Request) string {
	if ov.cfg.Resource != "" {
		return ov.cfg.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

// metadataURL is where a client finds the metadata of the request's
// resource.
func (ov *oauthValidator) metadataURL(r *http.Request) string {
	return ov.resourceMetadataURL(ov.resource(r))
}

// resourceMetadataURL is where a client finds the metadata of resource:
// the well-known path inserted between host and path (RFC 9728 section
// 3.1).
func (ov *oauthValidator) resourceMetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return MetadataPath
	}
	return u.Scheme + "://" + u.Host + MetadataPath + resourcePath(u.String())
}

// resourcePath is the path of a resource URI without a trailing slash.
func resourcePath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// scopesSupported lists every scope the configuration mentions, in the
// same order for every request (the document may be cached): the
// required scopes, then the tool scope rules' by rule. A rule counts
// whether or not it matches a tool now; which tools it matches is the
// gateway's to resolve, and may change with every refresh.
func (ov *oauthValidator) scopesSupported() []string {
	out := union(nil, ov.cfg.RequiredScopes)
	for _, rule := range slices.Sorted(maps.Keys(ov.cfg.ToolScopes)) {
		out = union(out, ov.cfg.ToolScopes[rule])
	}
	return out
}

// MetadataHandler serves the RFC 9728 protected-resource metadata, at
// [MetadataPath] and at that path followed by the resource's path. It is
// nil in bearer-token mode, which has no authorization server to announce.
// It must not be wrapped in authentication: clients read it before they
// have a token.
//
// With OAuthConfig.Resource set the document is the same for everyone and
// may be cached for an hour. Without it the document names the request's
// own Host, so it is sent with Cache-Control: no-store (a shared cache must
// never hand one host's document to another), and the caller must put the
// handler behind the same Host check as the MCP endpoints, so that only
// hosts the gateway serves are ever reflected.
func (a *Authenticator) MetadataHandler() http.Handler {
	if a.oauth == nil {
		return nil
	}
	ov := a.oauth
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Only the two forms a client derives from the resource URI; any
		// other path would name a resource this document does not describe.
		if r.URL.Path != MetadataPath && r.URL.Path != MetadataPath+resourcePath(ov.resource(r)) {
			http.NotFound(w, r)
			return
		}
		doc := struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported,omitempty"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}{ov.resource(r), []string{ov.cfg.Issuer}, ov.scopesSupported(), []string{"header"}}
		body, err := json.Marshal(doc)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if ov.cfg.Resource != "" {
			w.Header().Set("Cache-Control", "public, max-age=3600")
		} else {
			w.Header().Set("Cache-Control", "no-store")
		}
		// Browser-based clients fetch this cross-origin before they have
		// a token; it holds nothing secret.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(append(body, '\n'))
	})
}
